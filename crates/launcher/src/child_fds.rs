//! Descriptor set-up in the forked child, between fork and exec. The Node
//! process is multi-threaded, so only async-signal-safe calls happen here:
//! no allocation, no locks, no logging. Everything is prepared before fork.

use std::os::fd::RawFd;

use crate::plan::RlimitSetting;
use crate::rlimits::set_limit;

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
/// Async-signal-safe: only dup2/close_range/fcntl/setrlimit.
pub fn install_in_child(
    installs: &[FdInstall],
    max_slot: RawFd,
    rlimits: &[RlimitSetting],
) -> std::io::Result<()> {
    for install in installs {
        // SAFETY: dup2 on descriptors that are open in this (child) process.
        if unsafe { libc::dup2(install.source, install.slot) } < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    mark_rest_cloexec(max_slot + 1);
    for limit in rlimits {
        set_limit(limit.resource, limit.soft, limit.hard)?;
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
    // SAFETY: prctl(PR_SET_PDEATHSIG) takes a signal number; no memory effects.
    if unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: getppid has no preconditions and cannot fail.
    if unsafe { libc::getppid() } != parent {
        return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
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
