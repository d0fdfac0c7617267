//! Killing every process of one uid: the backstop that takes a session's
//! orphans before its workspace is reused or removed (docs/sessions.md,
//! "Crashes"). A session's owner uid U is claimed for that session alone
//! (lib/sessions/owner-claims.js), and only its sandboxes (and, for a
//! non-root provider, its file helper) ever run as U, so any process of U
//! found once the session has no live sandbox is an orphan. The same for a
//! per-run uid whose lease a dead holder left ([`kill_per_run_uid`],
//! uid_lease.rs): only a lease's run ever runs as it.
//!
//! Why orphans exist at all: bwrap's namespace init (the child it clones
//! into the new namespaces) first blocks reading an eventfd until the outer
//! bwrap has written it, and arms its own `--die-with-parent` only after
//! that read and its set-up (bubblewrap.c, `read (child_wait_fd, …)`, then
//! `handle_die_with_parent ()` in `do_init`). Every run's orphans, not only
//! a session's, are also killed by each provider's periodic sweep
//! (orphan_init.rs). A provider killed in that window takes the
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
//!
//! Only a session owner uid is ever swept ([`session_owners`]): the store
//! record that names the uid is trusted with a path, not with the power to
//! kill a host account's processes (round 8, R8-7).

use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

use crate::host::pidfd;
use crate::host::process_identity::{RUN_UIDS, RUN_UID_FIRST, SANDBOX_UID, WORKSPACE_UIDS};
use crate::host::subordinate_ids::{self, IdRange};
use crate::host::userns_chain;

/// How long one round waits for each killed process to exit.
const EXIT_WAIT: Duration = Duration::from_millis(200);

#[derive(Debug, thiserror::Error)]
pub enum UidSweepError {
    #[error("refusing to sweep uid {0}: root and this process's own uid are never swept")]
    Refused(u32),
    #[error("refusing to sweep uid {uid}: not a session owner uid of this provider (those are {first}..={last})")]
    NotAnOwner { uid: u32, first: u32, last: u32 },
    #[error("refusing to sweep uid {uid}: not a per-run uid of this provider ({range})")]
    NotPerRun { uid: u32, range: String },
    #[error(
        "refusing to sweep uid {0}: this provider has no subordinate ids, so no session owner uids"
    )]
    NoOwners(u32),
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

/// The uids a session of this provider may own (lib/sessions claims them:
/// owner-claims.js): the workspace-owner range of a root provider
/// (process_identity.rs), or the owner half of a non-root provider's
/// subordinate uids (subordinate_ids.rs), each without its first uid (the
/// default workspace owner other runs use). `None`: a non-root provider
/// without subordinate ids, which has no session owners at all.
pub fn session_owners() -> Option<IdRange> {
    let owners = if nix::unistd::geteuid().is_root() {
        IdRange {
            first: SANDBOX_UID,
            count: WORKSPACE_UIDS,
        }
    } else {
        subordinate_ids::for_current_user().ok()?.uids.owners()
    };
    sessions_of(owners)
}

/// Pure: `owners` without its first uid; `None` when nothing is left.
fn sessions_of(owners: IdRange) -> Option<IdRange> {
    (owners.count > 1).then(|| IdRange {
        first: owners.first + 1,
        count: owners.count - 1,
    })
}

/// Pure: `Ok` when `uid` is one of `owners` (the range guard of [`kill_uid`]).
pub fn check_owner(uid: u32, owners: Option<IdRange>) -> Result<(), UidSweepError> {
    match owners {
        None => Err(UidSweepError::NoOwners(uid)),
        Some(range) if range.contains(uid) => Ok(()),
        Some(range) => Err(UidSweepError::NotAnOwner {
            uid,
            first: range.first,
            last: range.first + range.count.saturating_sub(1),
        }),
    }
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

/// One scan: a pidfd of every live process of `uid` (this process
/// excluded), and with `within` (a user namespace's `NS_GET_ID`), only of
/// those whose user namespace is that one or lies below it (userns_chain.rs).
fn scan(uid: u32, within: Option<u64>) -> Result<Vec<OwnedFd>, UidSweepError> {
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
        let ours = within.is_none_or(|ns| userns_chain::within(pid, ns));
        if is_live_process_of(&status, uid) && ours {
            found.push(fd);
        }
    }
    Ok(found)
}

/// Pure: until when one round waits for the processes it killed: one
/// window for the whole round, not one per process (N processes that do
/// not exit cost EXIT_WAIT, not N × EXIT_WAIT), and never past the
/// sweep's deadline (round 8, R8-8).
fn round_end(now: Instant, started: Instant, deadline: Duration) -> Instant {
    (now + EXIT_WAIT).min(started + deadline)
}

/// Kills every process of `uid` (a session owner uid of this provider:
/// [`session_owners`], else refused) and waits until none is left, or
/// fails once `deadline` has passed. Returns how many processes it
/// signalled. `within`: a non-root session holder's user namespace (its
/// `NS_GET_ID`, never its inode, which the kernel reuses: round 10, R10-1):
/// only processes in it or below it are the session's, and a process of
/// the uid elsewhere is left alone (round 8, R8-1).
pub fn kill_uid(uid: u32, within: Option<u64>, deadline: Duration) -> Result<u32, UidSweepError> {
    refuse_own(uid)?;
    check_owner(uid, session_owners())?;
    kill_all_of(uid, within, deadline)
}

/// The per-run uids of this provider's leases (uid_lease.rs): the per-run
/// range of a root provider (process_identity.rs), or the per-run half of
/// a non-root provider's subordinate uids. `None`: a non-root provider
/// without subordinate ids.
pub fn per_run_uids() -> Option<IdRange> {
    if nix::unistd::geteuid().is_root() {
        return Some(IdRange {
            first: RUN_UID_FIRST,
            count: RUN_UIDS,
        });
    }
    Some(subordinate_ids::for_current_user().ok()?.uids.per_run())
}

/// Kills every process of `uid`, a per-run uid of this provider
/// ([`per_run_uids`], else refused) whose lease was just taken over from a
/// holder that died without releasing it (uid_lease.rs): no live run holds
/// it, so whatever runs as it is that dead holder's sandbox. Waits until
/// none is left, or fails once `deadline` has passed.
pub fn kill_per_run_uid(uid: u32, deadline: Duration) -> Result<u32, UidSweepError> {
    refuse_own(uid)?;
    match per_run_uids() {
        Some(range) if range.contains(uid) => kill_all_of(uid, None, deadline),
        Some(range) => Err(UidSweepError::NotPerRun {
            uid,
            range: format!(
                "{}..={}",
                range.first,
                range.first + range.count.saturating_sub(1)
            ),
        }),
        None => Err(UidSweepError::NotPerRun {
            uid,
            range: "none: no subordinate ids".into(),
        }),
    }
}

/// Root and this process's own uids are never swept.
fn refuse_own(uid: u32) -> Result<(), UidSweepError> {
    // SAFETY: geteuid/getuid cannot fail and touch no memory.
    let (euid, ruid) = unsafe { (libc::geteuid(), libc::getuid()) };
    if uid == 0 || uid == euid || uid == ruid {
        return Err(UidSweepError::Refused(uid));
    }
    Ok(())
}

/// The sweep itself, once the guards passed (module doc, "Steps").
fn kill_all_of(uid: u32, within: Option<u64>, deadline: Duration) -> Result<u32, UidSweepError> {
    let started = Instant::now();
    let mut signalled = 0u32;
    loop {
        let found = scan(uid, within)?;
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
        let round_end = round_end(Instant::now(), started, deadline);
        for fd in &found {
            pidfd::wait_exit(fd, round_end.saturating_duration_since(Instant::now()));
        }
        if started.elapsed() >= deadline {
            let alive = scan(uid, within)?.len();
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
    fn only_a_session_owner_uid_passes_the_range_guard() {
        let owners = sessions_of(IdRange {
            first: SANDBOX_UID,
            count: WORKSPACE_UIDS,
        });
        assert_eq!(
            owners,
            Some(IdRange {
                first: SANDBOX_UID + 1,
                count: WORKSPACE_UIDS - 1
            })
        );
        assert!(check_owner(SANDBOX_UID + 1, owners).is_ok());
        assert!(check_owner(SANDBOX_UID + WORKSPACE_UIDS - 1, owners).is_ok());
        // The default owner, the per-run range, a host account and nobody are not.
        for uid in [
            SANDBOX_UID,
            SANDBOX_UID + WORKSPACE_UIDS,
            1000,
            65534,
            0x6fff_f0e1,
        ] {
            assert!(
                matches!(check_owner(uid, owners), Err(UidSweepError::NotAnOwner { uid: u, .. }) if u == uid),
                "{uid} is refused"
            );
        }
        // A non-root provider's owner half of nobody:1342177280:131072.
        let sub = sessions_of(
            IdRange {
                first: 1_342_177_280,
                count: 131_072,
            }
            .owners(),
        );
        assert!(check_owner(1_342_177_281, sub).is_ok());
        assert!(check_owner(1_342_177_280 + 65_535, sub).is_ok());
        assert!(
            check_owner(1_342_177_280 + 65_536, sub).is_err(),
            "a per-run uid"
        );
        assert!(check_owner(1_342_177_280, sub).is_err());
        // Too small a range has no session owners; nothing passes without one.
        assert_eq!(sessions_of(IdRange { first: 5, count: 1 }), None);
        assert!(matches!(
            check_owner(6, None),
            Err(UidSweepError::NoOwners(6))
        ));
    }

    #[test]
    fn a_uid_outside_the_owner_range_is_refused_before_anything_is_signalled() {
        // SAFETY: cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            return; // a non-root provider's range depends on /etc/subuid
        }
        for uid in [1000, 65534, SANDBOX_UID, SANDBOX_UID + WORKSPACE_UIDS] {
            assert!(matches!(
                kill_uid(uid, None, Duration::ZERO),
                Err(UidSweepError::NotAnOwner { .. })
            ));
        }
    }

    #[test]
    fn a_uid_outside_the_per_run_range_is_refused_before_anything_is_signalled() {
        // SAFETY: cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            return; // a non-root provider's range depends on /etc/subuid
        }
        for uid in [
            1000,
            65534,
            SANDBOX_UID,
            RUN_UID_FIRST - 1,
            RUN_UID_FIRST + RUN_UIDS,
        ] {
            let refused = kill_per_run_uid(uid, Duration::ZERO);
            assert!(
                matches!(refused, Err(UidSweepError::NotPerRun { uid: u, .. }) if u == uid),
                "{uid}: {refused:?}"
            );
        }
        assert!(matches!(
            kill_per_run_uid(0, Duration::ZERO),
            Err(UidSweepError::Refused(0))
        ));
    }

    #[test]
    fn a_round_waits_one_window_at_most_and_never_past_the_deadline() {
        let started = Instant::now();
        let deadline = Duration::from_secs(5);
        assert_eq!(round_end(started, started, deadline), started + EXIT_WAIT);
        let late = started + Duration::from_millis(4_900);
        assert_eq!(round_end(late, started, deadline), started + deadline);
        let past = started + Duration::from_secs(6);
        assert_eq!(round_end(past, started, deadline), started + deadline);
    }

    #[test]
    fn root_and_the_callers_own_uid_are_never_swept() {
        assert!(matches!(
            kill_uid(0, None, Duration::ZERO),
            Err(UidSweepError::Refused(0))
        ));
        // SAFETY: cannot fail.
        let me = unsafe { libc::geteuid() };
        assert!(matches!(
            kill_uid(me, None, Duration::ZERO),
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
        // A session owner uid near the top of the range, where random claims
        // rarely land, that nothing runs as now (checked: the sweep kills all of it).
        let uid = (SANDBOX_UID + WORKSPACE_UIDS - 64..SANDBOX_UID + WORKSPACE_UIDS)
            .find(|&u| scan(u, None).unwrap().is_empty())
            .expect("an unused owner uid");
        let mut child = std::process::Command::new("/bin/sleep")
            .arg("600")
            .uid(uid)
            .gid(uid)
            .spawn()
            .expect("spawn sleep as another uid");
        // Scoped to a user namespace it is not in (a holder's of another
        // session, here a fresh one of ours): it is left alone.
        let mut other = std::process::Command::new("/usr/bin/unshare")
            .args(["--user", "/bin/sleep", "60"])
            .spawn()
            .expect("unshare");
        let userns_chain::NsId::Id(mine) = userns_chain::id_of(std::process::id()) else {
            other.kill().unwrap();
            let _ = other.wait();
            child.kill().unwrap();
            let _ = child.wait();
            return; // a kernel without NS_GET_ID: no scoped sweep to test
        };
        let elsewhere = (0..1000)
            .find_map(|_| match userns_chain::id_of(other.id()) {
                userns_chain::NsId::Id(id) if id != mine => Some(id),
                _ => {
                    std::thread::sleep(Duration::from_millis(10));
                    None
                }
            })
            .expect("a nested user namespace");
        let scoped = kill_uid(uid, Some(elsewhere), Duration::from_secs(30));
        other.kill().unwrap();
        let _ = other.wait();
        assert_eq!(
            scoped.unwrap(),
            0,
            "nothing of the uid is in that namespace"
        );
        assert_eq!(scan(uid, None).unwrap().len(), 1, "the process still runs");
        // Scoped to ours (the initial one, where it runs): it is the sweep's.
        // Reaped by a thread, as an orphan's reaper (init) would: the sweep waits for the exit.
        let pid = child.id();
        let reaper = std::thread::spawn(move || child.wait().expect("wait"));
        assert!(kill_uid(uid, Some(mine), Duration::from_secs(30)).unwrap() >= 1);
        let status = reaper.join().unwrap();
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&status),
            Some(libc::SIGKILL)
        );
        assert!(
            scan(uid, None).unwrap().is_empty(),
            "pid {pid} of uid {uid} is gone"
        );
    }
}
