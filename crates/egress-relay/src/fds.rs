//! Descriptor moves, through `nix`. The only `unsafe` of the relay:
//! adopting the descriptor the launcher passed by number.

use std::io;
use std::os::fd::{AsFd, FromRawFd, OwnedFd, RawFd};

use nix::fcntl::{fcntl, FcntlArg};

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
