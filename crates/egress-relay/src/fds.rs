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

/// One `pollfd` entry, built from what the caller wants to wait for.
#[derive(Clone, Copy)]
#[repr(transparent)]
pub struct PollFd(libc::pollfd);

impl PollFd {
    /// With neither interest the entry is disabled (fd -1): poll would still
    /// report errors and hang-ups on it, and a direction that has ended
    /// must not wake the loop again.
    pub fn new(fd: RawFd, read: bool, write: bool) -> PollFd {
        let mut events = 0;
        if read {
            events |= libc::POLLIN;
        }
        if write {
            events |= libc::POLLOUT;
        }
        PollFd(libc::pollfd {
            fd: if events == 0 { -1 } else { fd },
            events,
            revents: 0,
        })
    }

    /// Something happened (readable, writable, or hang-up).
    pub fn ready(&self) -> bool {
        self.0.revents != 0
    }
}

/// `poll(2)` over `fds`; `timeout_ms` -1 waits indefinitely.
pub fn poll(fds: &mut [PollFd], timeout_ms: i32) -> io::Result<usize> {
    // SAFETY: PollFd is a transparent-layout wrapper of libc::pollfd (one
    // field), and the pointer/length pair comes from a live mutable slice.
    let n = unsafe {
        libc::poll(
            fds.as_mut_ptr().cast::<libc::pollfd>(),
            fds.len() as libc::nfds_t,
            timeout_ms,
        )
    };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(n as usize)
}

/// The soft RLIMIT_NOFILE (each relayed connection holds two descriptors).
pub fn descriptor_limit() -> usize {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit struct we own.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return 1024;
    }
    usize::try_from(limit.rlim_cur).unwrap_or(usize::MAX)
}
