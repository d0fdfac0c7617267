//! When to look: the program is the namespace init's first child (bwrap's
//! init forks exactly the program), and its confinement is complete only
//! once that child has exec'ed — bwrap installs the seccomp filter, drops
//! the capabilities and enters the final root just before `execvp`. Before
//! that the child is still bwrap (same executable file): so the program is
//! ready to observe when its `exe` is no longer bwrap's file.
//!
//! Races: the init's pid is bwrap's report, and the init is confirmed alive
//! after the child was opened (so the parent pid checked was not a reused
//! one); the child is held by a `/proc/<pid>` descriptor, so a program that
//! exits and whose pid is reused is never confused with another process. A
//! program that exits before it is seen (`/usr/bin/true`) cannot be
//! observed: the receipt says so rather than guessing.

use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

use super::reader::ProcDir;
use crate::host::pidfd;

/// Pause between looks while bwrap finishes setting up (ms): a sandbox
/// execs its program within a few ms of reporting its init.
const POLL: Duration = Duration::from_millis(1);

/// Why the program was not observed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotObserved {
    /// The sandbox ended before (or while) the program could be seen.
    Ended,
    /// The program had not exec'ed within the observation window.
    NotStarted,
    /// The run's stop had killed the sandbox (its forced rung, or a kill
    /// with no grace) before the program could be seen: nothing of it can
    /// run again, and a sandbox whose init the kernel is still taking down
    /// (seconds, with a large tmpfs to free or a loaded host) is not a
    /// program that refused to show itself (black-box round B2: a
    /// `deadlineMs: 5`, `graceMs: 0` run failed as a mismatch after the
    /// whole window).
    Stopped,
}

impl NotObserved {
    pub fn as_str(self) -> &'static str {
        match self {
            NotObserved::Ended => "the program ended before it could be observed",
            NotObserved::NotStarted => {
                "the program was still not exec'ed (still bwrap's file) at the end of the observation window"
            }
            NotObserved::Stopped => {
                "the run's stop killed the sandbox before the program could be observed"
            }
        }
    }
}

/// Waits for the program to have exec'ed; `bwrap_exe` is bwrap's (device,
/// inode). `killed` says whether the run's stop has taken the sandbox down
/// (its SIGKILL sent and every process of it exiting: Supervision::
/// sandbox_dying): then the wait ends (a program not yet seen never runs).
pub fn await_program(
    init_pid: i32,
    init: &OwnedFd,
    bwrap_exe: (u64, u64),
    window: Duration,
    killed: &dyn Fn() -> bool,
) -> Result<ProcDir, NotObserved> {
    let end = Instant::now() + window;
    let children = format!("/proc/{init_pid}/task/{init_pid}/children");
    loop {
        let first = std::fs::read_to_string(&children)
            .ok()
            .and_then(|t| t.split_whitespace().next()?.parse::<i32>().ok());
        if let Some(dir) = first.and_then(|pid| ProcDir::open(pid).ok()) {
            let child_of_init = dir.parent_pid() == Some(init_pid);
            let exe = dir.exe_identity();
            // The init alive after the checks: `init_pid` was still its pid.
            if pidfd::wait_exit(init, Duration::ZERO) {
                return Err(NotObserved::Ended);
            }
            if child_of_init && exe.is_some_and(|e| e != bwrap_exe) {
                return Ok(dir);
            }
        } else if pidfd::wait_exit(init, Duration::ZERO) {
            return Err(NotObserved::Ended);
        }
        if killed() {
            return Err(NotObserved::Stopped);
        }
        if Instant::now() >= end {
            return Err(NotObserved::NotStarted);
        }
        std::thread::sleep(POLL);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use std::process::{Command, Stdio};

    /// A stand-in sandbox: `sh` as the init, its first child `sleep`, and
    /// `sleep`'s own file as "bwrap's": the child looks never exec'ed.
    fn stand_in() -> (std::process::Child, OwnedFd, (u64, u64)) {
        let init = Command::new("/bin/sh")
            .args(["-c", "sleep 30; true"])
            .stdin(Stdio::null())
            .spawn()
            .expect("sh");
        let pid = i32::try_from(init.id()).expect("pid");
        let fd = pidfd::open(pid).expect("pidfd");
        let exe = super::super::reader::file_identity(std::path::Path::new("/bin/sleep"))
            .expect("identity");
        // Until sh's child has exec'ed sleep (before that it is sh's file).
        let children = format!("/proc/{pid}/task/{pid}/children");
        let started = Instant::now();
        let sleeping = || {
            let text = std::fs::read_to_string(&children).unwrap_or_default();
            let child = text.split_whitespace().next()?.parse::<i32>().ok()?;
            ProcDir::open(child).ok()?.exe_identity()
        };
        while sleeping() != Some(exe) {
            assert!(started.elapsed() < Duration::from_secs(5), "no sleep child");
            std::thread::sleep(Duration::from_millis(2));
        }
        (init, fd, exe)
    }

    /// The init first (so it does not report its child's death), then the child.
    fn end(mut init: std::process::Child) {
        let pid = init.id();
        let children = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"));
        let _ = init.kill();
        let _ = init.wait();
        for child in children.unwrap_or_default().split_whitespace() {
            if let Ok(child) = child.parse::<i32>() {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(child),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
        }
    }

    #[test]
    fn a_program_not_yet_exec_ed_when_the_stop_kills_is_stopped_not_awaited_for_the_window() {
        let (init, fd, exe) = stand_in();
        let pid = i32::try_from(init.id()).expect("pid");
        let began = Instant::now();
        let killed = || began.elapsed() >= Duration::from_millis(50);
        let got = await_program(pid, &fd, exe, Duration::from_secs(3), &killed);
        let took = began.elapsed();
        end(init);
        assert_eq!(got.err(), Some(NotObserved::Stopped));
        assert!(took < Duration::from_secs(2), "waited {took:?}");
    }

    #[test]
    fn without_a_stop_a_program_never_exec_ed_is_not_started_at_the_window_end() {
        let (init, fd, exe) = stand_in();
        let pid = i32::try_from(init.id()).expect("pid");
        let got = await_program(pid, &fd, exe, Duration::from_millis(200), &|| false);
        end(init);
        assert_eq!(got.err(), Some(NotObserved::NotStarted));
    }
}
