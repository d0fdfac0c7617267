//! Descriptor moves and the double fork: the only raw syscalls of the relay.

use std::io;
use std::os::fd::RawFd;

/// `dup2(from, to)` (clears close-on-exec on `to`), then closes `from`.
pub fn move_to(from: RawFd, to: RawFd) -> io::Result<()> {
    if from == to {
        return Ok(());
    }
    // SAFETY: dup2 on descriptor numbers; it fails with EBADF if `from` is not open.
    if unsafe { libc::dup2(from, to) } < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `from` is open (dup2 succeeded) and owned by nothing else in this process.
    unsafe { libc::close(from) };
    Ok(())
}

/// Runs `serve` in a grandchild whose parent exits at once, so the process
/// is reparented to the namespace's init and is never the program's child.
/// The grandchild keeps only fds 0–2 and the descriptors `serve` captured
/// (the listener): the protocol channel and fd 4 are closed in it, so the
/// host sees their EOF exactly when the program closes them.
pub fn spawn_detached(serve: impl FnOnce()) -> io::Result<()> {
    // SAFETY: fork in a single-threaded process (nothing has spawned a thread yet).
    match unsafe { libc::fork() } {
        -1 => Err(io::Error::last_os_error()),
        0 => {
            // SAFETY: still single-threaded in the first child.
            match unsafe { libc::fork() } {
                0 => {
                    serve();
                    // SAFETY: _exit ends the grandchild without running the program's atexit state.
                    unsafe { libc::_exit(0) }
                }
                // SAFETY: _exit ends the intermediate child at once (fork failure included).
                _ => unsafe { libc::_exit(0) },
            }
        }
        child => {
            let mut status = 0;
            // SAFETY: waits for the intermediate child this process just forked.
            unsafe { libc::waitpid(child, &mut status, 0) };
            Ok(())
        }
    }
}

/// Closes every descriptor from 3 up except `keep`.
pub fn close_all_but(keep: RawFd) {
    // SAFETY: close_range on descriptor ranges of this process; unknown ranges are ignored.
    unsafe {
        if keep > 3 {
            libc::syscall(
                libc::SYS_close_range,
                3 as libc::c_uint,
                (keep - 1) as libc::c_uint,
                0 as libc::c_uint,
            );
        }
        libc::syscall(
            libc::SYS_close_range,
            (keep + 1) as libc::c_uint,
            libc::c_uint::MAX,
            0 as libc::c_uint,
        );
    }
}
