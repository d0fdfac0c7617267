//! Killing every process of one uid: the backstop that takes a session's
//! orphans before its workspace is reused or removed (docs/sessions.md,
//! "Crashes"). A session's owner uid U is claimed for that session alone
//! (lib/sessions/owner-claims.js), and only its sandboxes (and, for a
//! non-root provider, its file helper) ever run as U, so any process of U
//! found once the session has no live sandbox is an orphan.
//!
//! Why orphans exist at all: bwrap's namespace init (the child it clones
//! into the new namespaces) first blocks reading an eventfd until the outer
//! bwrap has written it, and arms its own `--die-with-parent` only after
//! that read (bubblewrap.c, `read (child_wait_fd, …)` then
//! `handle_die_with_parent ()`). A provider killed in that window takes the
//! outer bwrap with it (its parent-death signal), and the init, whose
//! parent-death signal is not armed yet, blocks on the eventfd forever: pid 1
//! of a pid namespace of its own, reparented to the host's init, holding the
//! session's mount namespace (round 7b, R7b-3). No signal reaches it by
//! itself, so the next provider that opens or removes the session kills it.
//!
//! Steps ([`kill_uid`]): scan `/proc`; for each process open a pidfd first,
//! then read its status: a pid reused between the scan and the open is
//! read as the process the pidfd names (or, if that one died meanwhile,
//! signalling it is a harmless ESRCH), so a recycled pid of another uid is
//! never signalled. SIGKILL each process of the uid that is not a zombie,
//! wait for them to exit, scan again; done when a scan finds none, failed
//! when the deadline passes first.

use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

use crate::host::pidfd;

/// How long one round waits for each killed process to exit.
const EXIT_WAIT: Duration = Duration::from_millis(200);

#[derive(Debug, thiserror::Error)]
pub enum UidSweepError {
    #[error("refusing to sweep uid {0}: root and this process's own uid are never swept")]
    Refused(u32),
    #[error("list /proc: {0}")]
    ListProc(std::io::Error),
    #[error("{alive} process(es) of uid {uid} still alive after {waited_ms} ms (a kill was refused: {refused})")]
    StillAlive {
        uid: u32,
        alive: usize,
        waited_ms: u128,
        refused: String,
    },
}

/// Pure over `/proc/<pid>/status`: the real uid is `uid` and the process is
/// not a zombie (a zombie runs nothing and holds no namespace). A leader
/// that exited while other threads of its group run shows `Z` too, with
/// `Threads:` above 1: that process is alive and is swept (round 8, R8-4).
pub fn is_live_process_of(status: &str, uid: u32) -> bool {
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map(str::trim)
            .unwrap_or("")
    };
    let real_uid = field("Uid:").split_whitespace().next();
    let threads: u32 = field("Threads:").parse().unwrap_or(1);
    let zombie = field("State:").starts_with('Z') && threads <= 1;
    real_uid == Some(uid.to_string().as_str()) && !zombie
}

/// One scan: a pidfd of every live process of `uid` (this process excluded).
fn scan(uid: u32) -> Result<Vec<OwnedFd>, UidSweepError> {
    let me = std::process::id();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").map_err(UidSweepError::ListProc)? {
        let Ok(entry) = entry else { continue };
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == me {
            continue;
        }
        // The pidfd first, the status second (module doc).
        let Ok(fd) = pidfd::open(pid as i32) else {
            continue;
        };
        let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
            continue;
        };
        if is_live_process_of(&status, uid) {
            found.push(fd);
        }
    }
    Ok(found)
}

/// Kills every process of `uid` and waits until none is left, or fails
/// once `deadline` has passed. Returns how many processes it signalled.
pub fn kill_uid(uid: u32, deadline: Duration) -> Result<u32, UidSweepError> {
    // SAFETY: geteuid/getuid cannot fail and touch no memory.
    let (euid, ruid) = unsafe { (libc::geteuid(), libc::getuid()) };
    if uid == 0 || uid == euid || uid == ruid {
        return Err(UidSweepError::Refused(uid));
    }
    let started = Instant::now();
    let mut signalled = 0u32;
    loop {
        let found = scan(uid)?;
        if found.is_empty() {
            return Ok(signalled);
        }
        let mut refused = String::new();
        for fd in &found {
            match pidfd::send_signal(fd, libc::SIGKILL) {
                Ok(()) => signalled = signalled.saturating_add(1),
                Err(e) => refused = e.to_string(),
            }
        }
        for fd in &found {
            pidfd::wait_exit(fd, EXIT_WAIT);
        }
        if started.elapsed() >= deadline {
            let alive = scan(uid)?.len();
            if alive == 0 {
                return Ok(signalled);
            }
            return Err(UidSweepError::StillAlive {
                uid,
                alive,
                waited_ms: started.elapsed().as_millis(),
                refused: if refused.is_empty() {
                    "no".into()
                } else {
                    refused
                },
            });
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn status(uid: &str, state: &str) -> String {
        format!("Name:\tbwrap\nState:\t{state}\nUid:\t{uid}\t{uid}\t{uid}\t{uid}\n")
    }

    #[test]
    fn a_live_process_of_the_uid_is_matched_by_its_real_uid_and_a_zombie_is_not() {
        assert!(is_live_process_of(
            &status("1342220575", "S (sleeping)"),
            1_342_220_575
        ));
        assert!(!is_live_process_of(
            &status("1342220575", "Z (zombie)"),
            1_342_220_575
        ));
        assert!(!is_live_process_of(
            &status("13422205750", "S (sleeping)"),
            1_342_220_575
        ));
        assert!(!is_live_process_of(
            &status("1", "R (running)"),
            1_342_220_575
        ));
        assert!(!is_live_process_of("Name:\tx\n", 1));
        // A leader gone with its threads still running is alive (R8-4).
        let leader_gone = format!("{}Threads:\t2\n", status("1342220575", "Z (zombie)"));
        assert!(is_live_process_of(&leader_gone, 1_342_220_575));
        let last_gone = format!("{}Threads:\t1\n", status("1342220575", "Z (zombie)"));
        assert!(!is_live_process_of(&last_gone, 1_342_220_575));
    }

    #[test]
    fn root_and_the_callers_own_uid_are_never_swept() {
        assert!(matches!(
            kill_uid(0, Duration::ZERO),
            Err(UidSweepError::Refused(0))
        ));
        // SAFETY: cannot fail.
        let me = unsafe { libc::geteuid() };
        assert!(matches!(
            kill_uid(me, Duration::ZERO),
            Err(UidSweepError::Refused(_))
        ));
    }

    #[test]
    fn a_real_process_of_another_uid_is_killed_and_waited_for() {
        use std::os::unix::process::CommandExt;
        // SAFETY: cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            return; // only root can start a process as another uid here
        }
        let uid = 0x6fff_f0e1; // in no range cordon or a host account uses
        let mut child = std::process::Command::new("/bin/sleep")
            .arg("600")
            .uid(uid)
            .gid(uid)
            .spawn()
            .expect("spawn sleep as another uid");
        // Reaped by a thread, as an orphan's reaper (init) would: the sweep waits for the exit.
        let pid = child.id();
        let reaper = std::thread::spawn(move || child.wait().expect("wait"));
        assert!(kill_uid(uid, Duration::from_secs(30)).unwrap() >= 1);
        let status = reaper.join().unwrap();
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&status),
            Some(libc::SIGKILL)
        );
        assert!(
            scan(uid).unwrap().is_empty(),
            "pid {pid} of uid {uid} is gone"
        );
    }
}
