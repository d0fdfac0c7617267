//! Process descriptors: signal a process without racing pid reuse, and
//! wait for its exit with a timeout. The launcher's one place for pidfds
//! (the stop ladder, the supervisor and the cgroup kill all come here):
//! `pidfd_open`/`pidfd_send_signal` through `rustix`, as `nix` does not wrap
//! them; the exit wait is `nix::poll`.

use std::os::fd::{AsFd, OwnedFd};
use std::time::Duration;

/// `pidfd_open(pid)`. The caller must know `pid` cannot have been reaped
/// and reused yet (it is our unreaped child, or its parent is).
pub fn open(pid: i32) -> std::io::Result<OwnedFd> {
    let pid = rustix::process::Pid::from_raw(pid)
        .ok_or_else(|| std::io::Error::from_raw_os_error(libc::ESRCH))?;
    Ok(rustix::process::pidfd_open(
        pid,
        rustix::process::PidfdFlags::empty(),
    )?)
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
    let found = crate::host::process_identity::parent_pid(u32::try_from(pid).ok()?)?;
    (i64::from(found) == i64::from(parent)).then_some(fd)
}

/// How long after bwrap its namespace init may start: bwrap forks it as
/// soon as it has its options (clock ticks, 100 per second on Linux: 5 s,
/// far above any set-up seen under load).
pub const INIT_START_WINDOW_TICKS: u64 = 500;

/// `pidfd_open(pid)` for bwrap's namespace init when [`open_child`] refused
/// it because bwrap is already gone and the init was reparented (a program
/// that rewrote the init through `/proc/1/mem` can make bwrap exit before
/// the launcher opened the init). Confirmed after opening that the process
/// with that pid is pid 1 of a pid namespace below ours, runs as `uid`, and
/// started within [`INIT_START_WINDOW_TICKS`] after `bwrap_started`. A
/// pidfd whose process died before the check is harmless: the init's pid
/// can only name another process after the init itself was reaped.
pub fn open_namespace_init(pid: i32, uid: u32, bwrap_started: u64) -> Option<OwnedFd> {
    let fd = open(pid).ok()?;
    let pid = u32::try_from(pid).ok()?;
    let started = crate::host::process_identity::process_start_time(pid)?;
    let in_window = (bwrap_started..=bwrap_started + INIT_START_WINDOW_TICKS).contains(&started);
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    (in_window && is_namespace_init(&status, uid)).then_some(fd)
}

/// Pure over `/proc/<pid>/status`: `NSpid` ends in 1 in a nested namespace,
/// and the real uid is `uid`.
fn is_namespace_init(status: &str, uid: u32) -> bool {
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map(|rest| rest.split_whitespace().collect::<Vec<_>>())
            .unwrap_or_default()
    };
    let nspid = field("NSpid:");
    let uids = field("Uid:");
    nspid.len() >= 2
        && nspid.last() == Some(&"1")
        && uids.first() == Some(&uid.to_string().as_str())
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
    let signal = rustix::process::Signal::from_named_raw(signal)
        .ok_or_else(|| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    Ok(rustix::process::pidfd_send_signal(fd, signal)?)
}

/// Whether the process exited within `timeout` (readable pidfd = exited).
pub fn wait_exit(fd: &OwnedFd, timeout: Duration) -> bool {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    let ms = PollTimeout::try_from(timeout).unwrap_or(PollTimeout::MAX);
    let mut fds = [PollFd::new(fd.as_fd(), PollFlags::POLLIN)];
    loop {
        match poll(&mut fds, ms) {
            Ok(ready) => return ready > 0,
            Err(nix::errno::Errno::EINTR) => continue,
            Err(_) => return false,
        }
    }
}

/// Reaps the pidfd's process if it is an exited child of this process
/// (`waitid(P_PIDFD, WEXITED | WNOHANG)`): `true` when it did. A sandbox's
/// namespace init is orphaned when its outer bwrap exits (bwrap does not
/// reap it) and goes to the nearest reaper — this process when it is pid 1
/// of its pid namespace (a container's `node server.js`, the Kubernetes
/// image's `cordon host`) or a subreaper. Nobody else would reap it then:
/// libuv waits only for the pids it spawned, so one zombie per run stayed
/// for the life of the process (a pod's pid limit reached in time). For a
/// process that is not our child (the usual case: the host's pid 1 reaps
/// it) this is one `ECHILD`, and it never touches another child's status.
pub fn reap_if_child(fd: &OwnedFd) -> bool {
    use nix::sys::wait::{waitid, Id, WaitPidFlag, WaitStatus};
    let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG;
    loop {
        match waitid(Id::PIDFd(fd.as_fd()), flags) {
            Ok(WaitStatus::StillAlive) => return false,
            Ok(_) => return true,
            Err(nix::errno::Errno::EINTR) => continue,
            Err(_) => return false,
        }
    }
}

/// Conventional name of a signal number (`SIGKILL`, nix's table), or
/// `SIG<n>` for a real-time or unknown one.
pub fn signal_name(signal: i32) -> String {
    nix::sys::signal::Signal::try_from(signal)
        .map_or_else(|_| format!("SIG{signal}"), |s| s.as_str().to_string())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    /// Starts `command` in the background of a `sh` that exits at once:
    /// the command's process (its pid returned) is reparented.
    fn orphaned(command: &str) -> u32 {
        let mut sh = std::process::Command::new("/bin/sh")
            .args([
                "-c",
                &format!("{command} </dev/null >/dev/null 2>&1 & echo $!"),
            ])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut out = String::new();
        std::io::Read::read_to_string(sh.stdout.as_mut().unwrap(), &mut out).unwrap();
        sh.wait().unwrap();
        out.trim().parse().unwrap()
    }

    #[test]
    fn signals_are_named_conventionally_and_unknown_ones_by_number() {
        assert_eq!(signal_name(libc::SIGKILL), "SIGKILL");
        assert_eq!(signal_name(libc::SIGSYS), "SIGSYS");
        assert_eq!(signal_name(libc::SIGXCPU), "SIGXCPU");
        assert_eq!(signal_name(40), "SIG40");
        assert_eq!(signal_name(0), "SIG0");
    }

    #[test]
    fn a_namespace_init_is_recognised_by_its_nspid_and_uid() {
        let init =
            "Name:\tbwrap\nUid:\t1879048192\t1879048192\t1879048192\t1879048192\nNSpid:\t4242\t1\n";
        assert!(is_namespace_init(init, 1879048192));
        assert!(!is_namespace_init(init, 0), "another uid");
        let program = init.replace("NSpid:\t4242\t1", "NSpid:\t4243\t2");
        assert!(
            !is_namespace_init(&program, 1879048192),
            "pid 2 of the namespace"
        );
        let host = init.replace("NSpid:\t4242\t1", "NSpid:\t1");
        assert!(!is_namespace_init(&host, 1879048192), "the host's own init");
    }

    #[test]
    fn a_reparented_bwrap_init_is_opened_and_a_plain_process_is_refused() {
        let bwrap = std::path::Path::new("/usr/bin/bwrap");
        if !bwrap.exists() {
            crate::test_skip::skip(
                "pidfd::a_reparented_bwrap_init_is_opened_and_a_plain_process_is_refused",
                "no /usr/bin/bwrap",
            );
            return;
        }
        // `sh -c 'bwrap … & '` exits at once: the bwrap it started (and so
        // its init) is reparented, as after a faked exit.
        let bwrap_pid = orphaned(
            "/usr/bin/bwrap --unshare-user --unshare-pid --ro-bind / / --proc /proc /bin/sleep 30",
        );
        let children = format!("/proc/{bwrap_pid}/task/{bwrap_pid}/children");
        let mut init = None;
        for _ in 0..500 {
            let text = std::fs::read_to_string(&children).unwrap_or_default();
            init = text
                .split_whitespace()
                .next()
                .and_then(|p| p.parse::<i32>().ok());
            if init.is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let init = init.expect("bwrap forked its init");
        let started = crate::host::process_identity::process_start_time(bwrap_pid).unwrap();
        let uid = nix::unistd::geteuid().as_raw();
        assert!(
            open_child(init, std::process::id() as i32).is_none(),
            "not our child"
        );
        let fd = open_namespace_init(init, uid, started).expect("bwrap's init");
        assert!(
            open_namespace_init(init, uid + 1, started).is_none(),
            "another uid"
        );
        assert!(
            open_namespace_init(bwrap_pid as i32, uid, started).is_none(),
            "bwrap is no init"
        );
        send_signal(&fd, libc::SIGKILL).unwrap();
        assert!(wait_exit(&fd, Duration::from_secs(10)), "the init died");
    }

    #[test]
    fn an_exited_child_is_reaped_and_a_process_that_is_not_ours_is_left_alone() {
        // Our child: not reaped while it runs, reaped once it exited.
        let mut child = std::process::Command::new("/bin/sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let fd = open(child.id() as i32).unwrap();
        assert!(!reap_if_child(&fd), "a live child was reaped");
        send_signal(&fd, libc::SIGKILL).unwrap();
        assert!(wait_exit(&fd, Duration::from_secs(10)));
        assert!(reap_if_child(&fd), "an exited child was not reaped");
        let gone = format!("/proc/{}", child.id());
        assert!(!std::path::Path::new(&gone).exists(), "still a zombie");
        // Reaped here, so std's own wait finds no child any more.
        assert!(child.wait().is_err());

        // Not ours: a grandchild, reparented when its parent exits.
        let grandchild = open(orphaned("/bin/sleep 30") as i32).unwrap();
        send_signal(&grandchild, libc::SIGKILL).unwrap();
        assert!(wait_exit(&grandchild, Duration::from_secs(10)));
        assert!(!reap_if_child(&grandchild), "reaped another's child");
    }

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
