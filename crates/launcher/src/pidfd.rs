//! Process descriptors: signal a process without racing pid reuse, and
//! wait for its exit with a timeout.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

/// `pidfd_open(pid)`. The caller must know `pid` cannot have been reaped
/// and reused yet (it is our unreaped child, or its parent is).
pub fn open(pid: i32) -> std::io::Result<OwnedFd> {
    // SAFETY: pidfd_open takes a pid and flags and returns a new fd or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the kernel just returned this fd to us; nobody else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

/// `pidfd_open(pid)` for a pid read from elsewhere (/proc, bwrap's info
/// fd), which may have been reaped and reused by any host process before
/// the open. Confirmed after opening that the process with that pid has
/// `parent`, which must be a process that cannot have been reaped (an
/// unreaped child of ours, or a parent of such a chain): either the pidfd's
/// process is that child, or it died in between — it cannot share the pid
/// with a live child — and signalling it is a harmless ESRCH.
pub fn open_child(pid: i32, parent: i32) -> Option<OwnedFd> {
    let fd = open(pid).ok()?;
    let found = crate::process_identity::parent_pid(u32::try_from(pid).ok()?)?;
    (i64::from(found) == i64::from(parent)).then_some(fd)
}

/// Sends `signal`; a process that already exited is not an error.
pub fn send_signal(fd: &OwnedFd, signal: i32) -> std::io::Result<()> {
    match signal_live(fd, signal) {
        Err(err) if err.raw_os_error() == Some(libc::ESRCH) => Ok(()),
        other => other,
    }
}

/// Sends `signal`; ESRCH when the process already exited.
pub fn signal_live(fd: &OwnedFd, signal: i32) -> std::io::Result<()> {
    // SAFETY: pidfd_send_signal with a null siginfo and no flags.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            fd.as_raw_fd(),
            signal,
            std::ptr::null::<libc::siginfo_t>(),
            0,
        )
    };
    if rc < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Whether the process exited within `timeout` (readable pidfd = exited).
pub fn wait_exit(fd: &OwnedFd, timeout: Duration) -> bool {
    let mut pfd = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX);
    loop {
        // SAFETY: pfd is one valid pollfd for the duration of the call.
        let rc = unsafe { libc::poll(&mut pfd, 1, ms) };
        if rc >= 0 {
            return rc > 0;
        }
        if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return false;
        }
    }
}

/// Conventional name of a signal number (`SIGKILL`), or `SIG<n>`.
pub fn signal_name(signal: i32) -> String {
    let known = [
        (libc::SIGHUP, "SIGHUP"),
        (libc::SIGINT, "SIGINT"),
        (libc::SIGQUIT, "SIGQUIT"),
        (libc::SIGILL, "SIGILL"),
        (libc::SIGTRAP, "SIGTRAP"),
        (libc::SIGABRT, "SIGABRT"),
        (libc::SIGBUS, "SIGBUS"),
        (libc::SIGFPE, "SIGFPE"),
        (libc::SIGKILL, "SIGKILL"),
        (libc::SIGUSR1, "SIGUSR1"),
        (libc::SIGSEGV, "SIGSEGV"),
        (libc::SIGUSR2, "SIGUSR2"),
        (libc::SIGPIPE, "SIGPIPE"),
        (libc::SIGALRM, "SIGALRM"),
        (libc::SIGTERM, "SIGTERM"),
        (libc::SIGXCPU, "SIGXCPU"),
        (libc::SIGXFSZ, "SIGXFSZ"),
        (libc::SIGSYS, "SIGSYS"),
    ];
    known
        .iter()
        .find(|(n, _)| *n == signal)
        .map_or_else(|| format!("SIG{signal}"), |(_, name)| name.to_string())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_child_is_opened_only_under_its_real_parent_and_signalled_by_descriptor() {
        let mut sh = std::process::Command::new("/bin/sh")
            .args(["-c", "/bin/sleep 30 & wait"])
            .spawn()
            .unwrap();
        let sh_pid = sh.id() as i32;
        let children = format!("/proc/{sh_pid}/task/{sh_pid}/children");
        let mut sleep_pid = None;
        for _ in 0..500 {
            let text = std::fs::read_to_string(&children).unwrap_or_default();
            sleep_pid = text.split_whitespace().next().and_then(|p| p.parse().ok());
            if sleep_pid.is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let sleep_pid: i32 = sleep_pid.expect("sh started its sleep");
        let me = std::process::id() as i32;
        assert!(
            open_child(sleep_pid, me).is_none(),
            "not our child: refused"
        );
        let fd = open_child(sleep_pid, sh_pid).expect("sh's child");
        signal_live(&fd, libc::SIGTERM).unwrap();
        assert!(wait_exit(&fd, Duration::from_secs(5)), "the sleep exited");
        sh.wait().unwrap();
        let err = signal_live(&fd, libc::SIGTERM).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::ESRCH));
        send_signal(&fd, libc::SIGTERM).expect("ESRCH is not an error here");
    }
}
