//! Descriptor set-up in the forked child, between fork and exec. The Node
//! process is multi-threaded, so only async-signal-safe calls happen here:
//! no allocation, no locks, no logging. Everything is prepared before fork.

use std::os::fd::RawFd;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::plan::rlimits::set_limit;
use crate::plan::RlimitSetting;

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

/// Runs in the child: install every slot (dup2 clears close-on-exec), mark
/// every descriptor above the highest slot close-on-exec, apply rlimits.
/// The index of an rlimit that could not be set goes to `failed_limit`
/// (the child shares the provider's memory), so the error can name it.
/// Async-signal-safe: only dup2/close_range/fcntl/setrlimit, an atomic store.
pub fn install_in_child(
    installs: &[FdInstall],
    max_slot: RawFd,
    rlimits: &[RlimitSetting],
    failed_limit: &AtomicUsize,
) -> std::io::Result<()> {
    for install in installs {
        // SAFETY: between fork and exec (async-signal-safe, no allocation).
        // `source` is open here (raised above every slot before fork, so no
        // earlier dup2 replaced it); `slot` is overwritten on purpose, which
        // is why this cannot be nix's `dup2` (it wants an `OwnedFd` for the
        // target, and nothing in the child owns the slot numbers).
        if unsafe { libc::dup2(install.source, install.slot) } < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    mark_rest_cloexec(max_slot + 1);
    for (at, limit) in rlimits.iter().enumerate() {
        if let Err(error) = set_limit(limit.resource, limit.soft, limit.hard) {
            failed_limit.store(at, Ordering::SeqCst);
            return Err(error);
        }
    }
    Ok(())
}

/// Runs in the child, first: SIGKILL it when the thread that forked it (the
/// supervisor, alive until bwrap is reaped) exits. bwrap arms the same
/// signal itself with `--die-with-parent`, but only once it runs: a provider
/// killed between fork and that point would leave an orphaned sandbox. So
/// arm it before exec and give up if `parent` already died (the signal
/// covers only deaths after arming). Async-signal-safe: prctl/getppid.
pub fn die_with_parent(parent: libc::pid_t) -> std::io::Result<()> {
    nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL)?;
    if nix::unistd::getppid().as_raw() != parent {
        return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
    }
    Ok(())
}

/// CLOEXEC rather than close: std's exec-error pipe must stay usable until
/// exec (it is already close-on-exec), and everything else vanishes at exec.
fn mark_rest_cloexec(first: RawFd) {
    // SAFETY: between fork and exec (a direct syscall, async-signal-safe).
    // With CLOSE_RANGE_CLOEXEC nothing is closed, only descriptor flags
    // change, so no owner anywhere loses a descriptor it still uses.
    // (Neither nix nor rustix wraps close_range.)
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
        // SAFETY: between fork and exec (async-signal-safe). F_SETFD only
        // sets a flag; on a number that is not open it fails with EBADF,
        // which is harmless. A raw number, not a borrowed descriptor: which
        // numbers are open is not known here.
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;

    fn spawn_expecting_parent(parent: libc::pid_t) -> std::io::Result<std::process::ExitStatus> {
        let mut cmd = std::process::Command::new("/bin/true");
        // SAFETY: the closure only calls die_with_parent (prctl, getppid).
        unsafe { cmd.pre_exec(move || die_with_parent(parent)) };
        cmd.spawn()?.wait()
    }

    #[test]
    fn a_child_whose_parent_already_died_gives_up_before_exec() {
        let me = std::process::id() as libc::pid_t;
        assert!(spawn_expecting_parent(me).unwrap().success());
        let err = spawn_expecting_parent(1).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::ESRCH));
    }
}
