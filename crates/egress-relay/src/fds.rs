//! Descriptor moves and the double fork, through `nix`.
//! The only `unsafe` of the relay: adopting the descriptor the launcher
//! passed by number, and `fork` itself.

use std::io;
use std::os::fd::{AsFd, FromRawFd, OwnedFd, RawFd};

use nix::fcntl::{fcntl, FcntlArg};
use nix::sys::resource::{getrlimit, Resource};
use nix::sys::wait::waitpid;
use nix::unistd::ForkResult;

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

fn fork() -> io::Result<ForkResult> {
    // SAFETY: the relay is single-threaded (nothing has spawned a thread
    // yet, in this process or the first child), so the child may run any
    // code, allocation included, after fork.
    Ok(unsafe { nix::unistd::fork() }?)
}

/// Runs `serve` in a grandchild whose parent exits at once, so the process
/// is reparented to the namespace's init and is never the program's child.
/// The grandchild keeps only fds 0–2 and the descriptors `serve` captured
/// (the listener): the protocol channel and fd 4 are closed in it, so the
/// host sees their EOF exactly when the program closes them.
pub fn spawn_detached(serve: impl FnOnce()) -> io::Result<()> {
    match fork()? {
        ForkResult::Child => {
            if let Ok(ForkResult::Child) = fork() {
                serve();
            }
            // The intermediate child (fork failure included) and a grandchild
            // whose serve returned end here; nothing is buffered to flush.
            std::process::exit(0)
        }
        ForkResult::Parent { child } => {
            let _ = waitpid(child, None);
            Ok(())
        }
    }
}

/// The kernel's default ceiling on descriptor numbers (fs.nr_open): bounds
/// the fallback below when the soft limit is "unlimited".
const NR_OPEN_DEFAULT: usize = 1 << 20;

/// Closes every descriptor from 3 up except `keep`: those listed in
/// /proc/self/fd, or (without /proc) every number below the soft limit.
pub fn close_all_but(keep: RawFd) {
    let open: Vec<RawFd> = match std::fs::read_dir("/proc/self/fd") {
        // The directory's own descriptor is listed too; it is closed when the
        // iterator drops, before the loop below runs.
        Ok(entries) => entries
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
            .collect(),
        Err(_) => {
            let limit = descriptor_limit().min(NR_OPEN_DEFAULT);
            (0..RawFd::try_from(limit).unwrap_or(RawFd::MAX)).collect()
        }
    };
    for fd in open {
        if fd > 2 && fd != keep {
            let _ = nix::unistd::close(fd);
        }
    }
}

/// The soft RLIMIT_NOFILE.
pub fn descriptor_limit() -> usize {
    match getrlimit(Resource::RLIMIT_NOFILE) {
        Ok((soft, _)) => usize::try_from(soft).unwrap_or(usize::MAX),
        Err(_) => 1024,
    }
}
