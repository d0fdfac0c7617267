//! Per-run host uids for a provider's sandboxes, leased from a range (a
//! root provider's reserved range, a non-root provider's subordinate ids)
//! so that no two live runs share one: per-user kernel quotas
//! (inotify instances, POSIX message queues, pipe buffer pages,
//! RLIMIT_NPROC, locked memory) and `/proc` access are then per sandbox.
//!
//! A lease is a lock file `<dir>/<uid>` held with an exclusive `flock` for
//! the run's whole life (until its processes are confirmed gone). Leases are
//! host-wide (every provider process on the host uses the same directory)
//! and die with their holder: a crashed provider's lock is released by the
//! kernel, and the file left behind is taken by the next lessee. That file
//! says its holder died without a release, and a provider killed while
//! bwrap set its run up can leave that run's sandbox alive as that uid
//! (orphan_init.rs): so a lessee that takes over a left file first has
//! every process of the uid killed (the caller's `clear`, uid_sweep.rs),
//! and leaves the file (and the uid) alone when that fails.
//!
//! Steps of [`UidLease::acquire`]: the lock directory (root-owned, 0700,
//! checked) → a random uid of the range → open/create its file → try the
//! lock (taken: another random uid) → check the path still names the
//! locked file (a releasing holder may have unlinked it meanwhile) → a file
//! that existed before the open: `clear` the uid (failed: another uid).
//! Release: unlink while still holding the lock, then close.

use std::fs::{self, File, OpenOptions};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Directories that may hold the lock directory, first existing wins: every
/// provider on a host picks the same one.
const LOCK_PARENTS: [&str; 3] = ["/run", "/dev/shm", "/tmp"];
/// The lock directory's name under its parent: `cordon-uids` for root,
/// `cordon-uids-<euid>` for any other provider (whose ids are its own
/// subordinate range, so its leases are its own too).
const LOCK_DIR_NAME: &str = "cordon-uids";
/// Random uids tried before giving up: with 65536 uids and a few hundred
/// live runs, the chance that 64 picks are all taken is nil.
const MAX_ATTEMPTS: usize = 64;

#[derive(Debug, thiserror::Error)]
pub enum UidLeaseError {
    #[error("no directory for the sandbox uid locks (none of {LOCK_PARENTS:?} exists)")]
    NoLockParent,
    #[error("create the sandbox uid lock directory {path}: {source}")]
    CreateDir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{path} is not a private directory of this user: refusing to lease sandbox uids there"
    )]
    UnsafeDir { path: PathBuf },
    #[error("lock {path}: {source}")]
    Lock {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("random uid: {0}")]
    Random(std::io::Error),
    #[error("no free sandbox uid after {MAX_ATTEMPTS} tries in {first}..={last}")]
    Exhausted { first: u32, last: u32 },
}

/// A uid leased for one run; released (file unlinked, lock dropped) on drop.
#[derive(Debug)]
pub struct UidLease {
    uid: u32,
    path: PathBuf,
    /// Holds the lock; closed after the unlink in `Drop`.
    file: Option<File>,
    /// The file existed before this lessee opened it: left by a holder that
    /// died without a release (or made by a lessee that lost the lock race).
    inherited: bool,
}

impl UidLease {
    /// Leases a uid of `first..first + count` (this provider's per-run
    /// uids) no other live lease holds and, once a dead holder's file was
    /// taken over, nothing runs as.
    pub fn acquire(first: u32, count: u32) -> Result<UidLease, UidLeaseError> {
        Self::acquire_in(&lock_dir()?, first, count, &clear_per_run_uid)
    }

    /// [`UidLease::acquire`] in an explicit (already checked) directory;
    /// `clear(uid)` kills what runs as a taken-over uid, true when nothing
    /// is left.
    pub fn acquire_in(
        dir: &Path,
        first: u32,
        count: u32,
        clear: &dyn Fn(u32) -> bool,
    ) -> Result<UidLease, UidLeaseError> {
        for _ in 0..MAX_ATTEMPTS {
            let uid = first + random_below(count)?;
            match try_lease(dir, uid)? {
                Some(lease) if !lease.inherited || clear(uid) => return Ok(lease),
                Some(lease) => lease.leave_stale(),
                None => {}
            }
        }
        let last = first + count.saturating_sub(1);
        Err(UidLeaseError::Exhausted { first, last })
    }

    pub fn uid(&self) -> u32 {
        self.uid
    }

    /// Lets the lock go and leaves the file: its uid still has a dead
    /// holder's processes, and the next lessee must try to clear it again.
    fn leave_stale(mut self) {
        drop(self.file.take());
        self.path = PathBuf::new();
    }
}

/// How long a lessee waits for a dead holder's processes to exit.
const CLEAR_DEADLINE: std::time::Duration = std::time::Duration::from_secs(5);

/// The `clear` of [`UidLease::acquire`]: every process of a per-run uid
/// killed (uid_sweep.rs, which refuses any other uid).
pub fn clear_per_run_uid(uid: u32) -> bool {
    crate::host::uid_sweep::kill_per_run_uid(uid, CLEAR_DEADLINE).is_ok()
}

impl Drop for UidLease {
    fn drop(&mut self) {
        // Unlink first, under the lock: a lessee that opened the old file
        // sees it is no longer the path's file and tries again. A lease
        // left stale has no lock (and no path) any more.
        if self.file.is_some() {
            let _ = fs::remove_file(&self.path);
        }
        drop(self.file.take());
    }
}

/// Removes lock files no live lease holds (their holder was killed before
/// it could release them): each is leased, its uid cleared (`clear`, as
/// [`UidLease::acquire_in`]), and released, which unlinks it under its
/// lock, so a concurrent lessee is never disturbed. A uid that cannot be
/// cleared keeps its file. Returns how many were removed. Lock files of
/// other names are left alone.
pub fn sweep_stale(dir: &Path, clear: &dyn Fn(u32) -> bool) -> usize {
    let Ok(entries) = fs::read_dir(dir) else {
        return 0;
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|uid| match try_lease(dir, *uid) {
            Ok(Some(lease)) if clear(*uid) => {
                drop(lease);
                true
            }
            Ok(Some(lease)) => {
                lease.leave_stale();
                false
            }
            _ => false,
        })
        .count()
}

/// One attempt: `Some` when `uid`'s lock was free and is now ours.
fn try_lease(dir: &Path, uid: u32) -> Result<Option<UidLease>, UidLeaseError> {
    let path = dir.join(uid.to_string());
    let lock_error = |source| UidLeaseError::Lock {
        path: path.clone(),
        source,
    };
    let open = |create_new: bool| {
        OpenOptions::new()
            .read(true)
            .write(true)
            .create(!create_new)
            .create_new(create_new)
            .truncate(false)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)
    };
    // Made here, or there before (module doc: `inherited`).
    let (file, inherited) = match open(true) {
        Ok(file) => (file, false),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            (open(false).map_err(lock_error)?, true)
        }
        Err(e) => return Err(lock_error(e)),
    };
    match file.try_lock() {
        Ok(()) => {}
        Err(fs::TryLockError::WouldBlock) => return Ok(None),
        Err(fs::TryLockError::Error(source)) => return Err(lock_error(source)),
    }
    let held = file.metadata().map_err(lock_error)?;
    let current = fs::symlink_metadata(&path).ok();
    let same = current.is_some_and(|m| m.dev() == held.dev() && m.ino() == held.ino());
    Ok(same.then(|| UidLease {
        uid,
        path: path.clone(),
        file: Some(file),
        inherited,
    }))
}

/// The host-wide lock directory of this euid, created private and checked:
/// under the first of [`LOCK_PARENTS`] where that works (a read-only `/run`
/// in a container, or a non-root provider, falls through to `/dev/shm`).
pub fn lock_dir() -> Result<PathBuf, UidLeaseError> {
    let mut last = UidLeaseError::NoLockParent;
    let euid = nix::unistd::geteuid().as_raw();
    let name = match euid {
        0 => LOCK_DIR_NAME.to_string(),
        _ => format!("{LOCK_DIR_NAME}-{euid}"),
    };
    for parent in LOCK_PARENTS.iter().map(Path::new).filter(|p| p.is_dir()) {
        match private_dir(&parent.join(&name)) {
            Ok(path) => return Ok(path),
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// `path` as a directory only this euid may use, created 0700 if missing.
fn private_dir(path: &Path) -> Result<PathBuf, UidLeaseError> {
    let path = path.to_path_buf();
    match fs::DirBuilder::new().mode(0o700).create(&path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(source) => return Err(UidLeaseError::CreateDir { path, source }),
    }
    // Not a link, ours, nobody else may write: a local user who pre-created
    // it in /tmp could otherwise hold or steal leases.
    let euid = nix::unistd::geteuid().as_raw();
    let meta = fs::symlink_metadata(&path).map_err(|source| UidLeaseError::CreateDir {
        path: path.clone(),
        source,
    })?;
    if !meta.is_dir() || meta.uid() != euid || meta.mode() & 0o077 != 0 {
        return Err(UidLeaseError::UnsafeDir { path });
    }
    Ok(path)
}

/// A uniformly random number below `bound` (> 0) from the kernel.
fn random_below(bound: u32) -> Result<u32, UidLeaseError> {
    let hex = crate::host::process_identity::random_hex(4).map_err(UidLeaseError::Random)?;
    let value = u32::from_str_radix(&hex, 16).unwrap_or(0);
    // Modulo bias is irrelevant for a range of 2^16 out of 2^32.
    Ok(value % bound.max(1))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn scratch() -> tempfile::TempDir {
        tempfile::tempdir().unwrap()
    }

    #[test]
    fn a_held_uid_is_never_leased_twice_and_is_free_again_once_released() {
        let dir = scratch();
        let first = UidLease::acquire_in(dir.path(), 1000, 2, &|_| true).unwrap();
        let second = UidLease::acquire_in(dir.path(), 1000, 2, &|_| true).unwrap();
        assert_ne!(first.uid(), second.uid(), "two live leases, two uids");
        let full = UidLease::acquire_in(dir.path(), 1000, 2, &|_| true).unwrap_err();
        assert!(matches!(full, UidLeaseError::Exhausted { .. }), "{full}");
        let freed = first.uid();
        drop(first);
        assert!(
            !dir.path().join(freed.to_string()).exists(),
            "released: unlinked"
        );
        assert_eq!(
            UidLease::acquire_in(dir.path(), 1000, 2, &|_| true)
                .unwrap()
                .uid(),
            freed
        );
    }

    #[test]
    fn a_lock_directory_open_to_others_or_a_link_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = scratch();
        let open = dir.path().join("open");
        fs::create_dir(&open).unwrap();
        fs::set_permissions(&open, fs::Permissions::from_mode(0o777)).unwrap();
        assert!(matches!(
            private_dir(&open),
            Err(UidLeaseError::UnsafeDir { .. })
        ));
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(dir.path(), &link).unwrap();
        assert!(matches!(
            private_dir(&link),
            Err(UidLeaseError::UnsafeDir { .. })
        ));
        let fresh = private_dir(&dir.path().join("fresh")).unwrap();
        assert_eq!(fs::metadata(fresh).unwrap().mode() & 0o777, 0o700);
    }

    #[test]
    fn the_sweep_removes_unheld_lock_files_and_keeps_held_ones() {
        let dir = scratch();
        let held = UidLease::acquire_in(dir.path(), 40, 1, &|_| true).unwrap();
        fs::write(dir.path().join("41"), b"").unwrap();
        fs::write(dir.path().join("42"), b"").unwrap();
        fs::write(dir.path().join("notes"), b"").unwrap();
        assert_eq!(sweep_stale(dir.path(), &|_| true), 2);
        let mut left: Vec<String> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(left, ["40", "notes"]);
        drop(held);
    }

    #[test]
    fn a_lock_file_left_by_a_crashed_holder_is_taken_over() {
        let dir = scratch();
        fs::write(dir.path().join("7"), b"").unwrap();
        let lease = UidLease::acquire_in(dir.path(), 7, 1, &|_| true).unwrap();
        assert_eq!(lease.uid(), 7);
    }

    #[test]
    fn a_taken_over_file_is_cleared_first_and_left_alone_when_that_fails() {
        use std::cell::RefCell;
        let dir = scratch();
        fs::write(dir.path().join("7"), b"").unwrap();
        let asked = RefCell::new(Vec::new());
        let refuse = |uid| {
            asked.borrow_mut().push(uid);
            false
        };
        let err = UidLease::acquire_in(dir.path(), 7, 1, &refuse).unwrap_err();
        assert!(matches!(err, UidLeaseError::Exhausted { .. }), "{err}");
        assert!(asked.borrow().iter().all(|&u| u == 7) && !asked.borrow().is_empty());
        assert!(dir.path().join("7").exists(), "left for the next lessee");
        assert_eq!(sweep_stale(dir.path(), &refuse), 0, "kept by the sweep too");
        assert!(dir.path().join("7").exists());
        asked.borrow_mut().clear();
        let allow = |uid| {
            asked.borrow_mut().push(uid);
            true
        };
        let lease = UidLease::acquire_in(dir.path(), 7, 1, &allow).unwrap();
        assert_eq!((lease.uid(), asked.borrow().clone()), (7, vec![7]));
        drop(lease);
        // A file this lessee made itself has nothing to clear.
        asked.borrow_mut().clear();
        let fresh = UidLease::acquire_in(dir.path(), 8, 1, &allow).unwrap();
        assert_eq!((fresh.uid(), asked.borrow().len()), (8, 0));
        drop(fresh);
        fs::write(dir.path().join("9"), b"").unwrap();
        assert_eq!(sweep_stale(dir.path(), &allow), 1);
        assert_eq!(asked.borrow().clone(), vec![9]);
    }

    #[test]
    fn taking_over_a_dead_holders_uid_kills_what_still_runs_as_it() {
        use crate::host::process_identity::{RUN_UIDS, RUN_UID_FIRST};
        use std::os::unix::process::CommandExt;
        if !nix::unistd::geteuid().is_root() {
            crate::test_skip::skip(
                "uid_lease::taking_over_a_dead_holders_uid_kills_what_still_runs_as_it",
                "only root starts a process as a per-run uid here",
            );
            return;
        }
        // A per-run uid near the top (random leases rarely land there) that
        // nothing runs as: the dead holder's sandbox is a sleep of it.
        let running = |uid: u32| {
            fs::read_dir("/proc").unwrap().flatten().any(|e| {
                let status = fs::read_to_string(e.path().join("status")).unwrap_or_default();
                status.lines().any(|l| {
                    l.strip_prefix("Uid:")
                        .and_then(|r| r.split_whitespace().next())
                        == Some(&uid.to_string())
                }) && !status.contains("State:\tZ")
            })
        };
        let uid = (RUN_UID_FIRST + RUN_UIDS - 128..RUN_UID_FIRST + RUN_UIDS - 64)
            .find(|&u| !running(u))
            .unwrap();
        let orphan = std::process::Command::new("/bin/sleep")
            .arg("600")
            .uid(uid)
            .gid(uid)
            .spawn()
            .unwrap();
        let dir = scratch();
        fs::write(dir.path().join(uid.to_string()), b"").unwrap();
        let pidfd = crate::host::pidfd::open(orphan.id() as i32).unwrap();
        // Reaped by a thread, as an orphan's reaper would: the clear waits for the exit.
        let mut orphan = orphan;
        let reaper = std::thread::spawn(move || orphan.wait().unwrap());
        let lease = UidLease::acquire_in(dir.path(), uid, 1, &clear_per_run_uid);
        let killed = crate::host::pidfd::wait_exit(&pidfd, std::time::Duration::ZERO);
        let _ = crate::host::pidfd::send_signal(&pidfd, libc::SIGKILL);
        let status = reaper.join().unwrap();
        assert!(
            killed,
            "the dead holder's process was gone when the lease was granted"
        );
        assert_eq!(lease.unwrap().uid(), uid);
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&status),
            Some(libc::SIGKILL)
        );
        // Outside the per-run range nothing is killed, and the uid is not leased.
        let owner = RUN_UID_FIRST - 1;
        fs::write(dir.path().join(owner.to_string()), b"").unwrap();
        assert!(UidLease::acquire_in(dir.path(), owner, 1, &clear_per_run_uid).is_err());
    }

    #[test]
    fn a_lock_held_by_another_open_file_description_excludes() {
        let dir = scratch();
        let other = File::create(dir.path().join("9")).unwrap();
        other.lock().unwrap();
        assert!(try_lease(dir.path(), 9).unwrap().is_none());
        drop(other);
        assert!(try_lease(dir.path(), 9).unwrap().is_some());
    }
}
