//! Descriptor moves, through `nix`. The only `unsafe` of the relay:
//! adopting the descriptors the launcher passed by number.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

use nix::fcntl::{fcntl, FcntlArg};

/// Takes the inherited descriptor `fd`, which the launcher put there and
/// named on our command line (EBADF if it is not open).
pub fn adopt(fd: RawFd) -> io::Result<OwnedFd> {
    if fd < 0 {
        return Err(nix::errno::Errno::EBADF.into());
    }
    // SAFETY: borrowed only for the F_GETFD that tells whether it is open;
    // the number is not negative (checked).
    fcntl(unsafe { BorrowedFd::borrow_raw(fd) }, FcntlArg::F_GETFD)?;
    // SAFETY: the descriptor is open (checked just above) and was passed to
    // this freshly exec'd process for it to take; nothing else here owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Moves the inherited descriptor `from` to `to`, which must be free (it is
/// left without close-on-exec, for the program), then closes `from`. A `to`
/// that is already open is an error rather than silently replaced: nothing
/// but fds 0–3 and the launcher's slot is expected in a fresh sandbox.
pub fn move_to(from: RawFd, to: RawFd) -> io::Result<()> {
    if from == to {
        return Ok(());
    }
    if from < 0 {
        return Err(nix::errno::Errno::EBADF.into());
    }
    // SAFETY: the launcher put this descriptor in our slot `from` and passed
    // the number on our command line for us to take; nothing else in this
    // freshly exec'd process owns or uses it, and it is not -1 (checked).
    let from = unsafe { OwnedFd::from_raw_fd(from) };
    let got = fcntl(from.as_fd(), FcntlArg::F_DUPFD(to))?;
    if got != to {
        let _ = nix::unistd::close(got);
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("descriptor {to} is already open"),
        ));
    }
    drop(from);
    Ok(())
}
