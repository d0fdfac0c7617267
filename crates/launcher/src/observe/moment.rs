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
}

impl NotObserved {
    pub fn as_str(self) -> &'static str {
        match self {
            NotObserved::Ended => "the program ended before it could be observed",
            NotObserved::NotStarted => {
                "the program was still not exec'ed (still bwrap's file) at the end of the observation window"
            }
        }
    }
}

/// Waits for the program to have exec'ed; `bwrap_exe` is bwrap's (device, inode).
pub fn await_program(
    init_pid: i32,
    init: &OwnedFd,
    bwrap_exe: (u64, u64),
    window: Duration,
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
        if Instant::now() >= end {
            return Err(NotObserved::NotStarted);
        }
        std::thread::sleep(POLL);
    }
}
