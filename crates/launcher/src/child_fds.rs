//! Descriptor set-up in the forked child, between fork and exec. The Node
//! process is multi-threaded, so only async-signal-safe calls happen here:
//! no allocation, no locks, no logging. Everything is prepared before fork.

use std::os::fd::RawFd;

/// Parent-side descriptors are raised to at least this number before fork,
/// so installing them on the low slots (3, 4, …) can never overwrite a
/// source that is still to be installed.
pub const SOURCE_FD_FLOOR: RawFd = 64;
/// Fallback upper bound when `close_range` is unavailable (pre-5.11 kernel).
const FALLBACK_MAX_FD: RawFd = 65_536;

/// One `dup2(source, slot)` to perform in the child.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FdInstall {
    pub source: RawFd,
    pub slot: RawFd,
}

/// An rlimit to apply in the child before exec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChildRlimit {
    pub resource: i32,
    pub soft: u64,
    pub hard: u64,
}

/// Runs in the child: install every slot (dup2 clears close-on-exec), mark
/// every descriptor above the highest slot close-on-exec, apply rlimits.
/// Async-signal-safe: only dup2/close_range/fcntl/setrlimit.
pub fn install_in_child(
    installs: &[FdInstall],
    max_slot: RawFd,
    rlimits: &[ChildRlimit],
) -> std::io::Result<()> {
    for install in installs {
        // SAFETY: dup2 on descriptors that are open in this (child) process.
        if unsafe { libc::dup2(install.source, install.slot) } < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    mark_rest_cloexec(max_slot + 1);
    for limit in rlimits {
        let value = libc::rlimit {
            rlim_cur: limit.soft,
            rlim_max: limit.hard,
        };
        // SAFETY: setrlimit reads one valid rlimit struct.
        if unsafe { libc::setrlimit(limit.resource as _, &value) } < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// CLOEXEC rather than close: std's exec-error pipe must stay usable until
/// exec (it is already close-on-exec), and everything else vanishes at exec.
fn mark_rest_cloexec(first: RawFd) {
    // SAFETY: close_range with the CLOEXEC flag only changes fd flags.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            first as libc::c_uint,
            libc::c_uint::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        )
    };
    if rc == 0 {
        return;
    }
    for fd in first..FALLBACK_MAX_FD {
        // SAFETY: F_SETFD on a possibly-closed fd fails harmlessly with EBADF.
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
}
