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
//! kernel, and the file left behind is simply taken by the next lessee.
//!
//! Steps of [`UidLease::acquire`]: the lock directory (root-owned, 0700,
//! checked) → a random uid of the range → open/create its file → try the
//! lock (taken: another random uid) → check the path still names the
//! locked file (a releasing holder may have unlinked it meanwhile).
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
}

impl UidLease {
    /// Leases a uid of `first..first + count` no other live lease holds.
    pub fn acquire(first: u32, count: u32) -> Result<UidLease, UidLeaseError> {
        Self::acquire_in(&lock_dir()?, first, count)
    }

    /// [`UidLease::acquire`] in an explicit (already checked) directory.
    pub fn acquire_in(dir: &Path, first: u32, count: u32) -> Result<UidLease, UidLeaseError> {
        for _ in 0..MAX_ATTEMPTS {
            let uid = first + random_below(count)?;
            if let Some(lease) = try_lease(dir, uid)? {
                return Ok(lease);
            }
        }
        let last = first + count.saturating_sub(1);
        Err(UidLeaseError::Exhausted { first, last })
    }

    pub fn uid(&self) -> u32 {
        self.uid
    }
}

impl Drop for UidLease {
    fn drop(&mut self) {
        // Unlink first, under the lock: a lessee that opened the old file
        // sees it is no longer the path's file and tries again.
        let _ = fs::remove_file(&self.path);
        drop(self.file.take());
    }
}

/// Removes lock files no live lease holds (their holder was killed before
/// it could release them): each is leased and released, which unlinks it
/// under its lock, so a concurrent lessee is never disturbed. Returns how
/// many were removed. Lock files of other names are left alone.
pub fn sweep_stale(dir: &Path) -> usize {
    let Ok(entries) = fs::read_dir(dir) else {
        return 0;
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|uid| matches!(try_lease(dir, *uid), Ok(Some(_))))
        .count()
}

/// One attempt: `Some` when `uid`'s lock was free and is now ours.
fn try_lease(dir: &Path, uid: u32) -> Result<Option<UidLease>, UidLeaseError> {
    let path = dir.join(uid.to_string());
    let lock_error = |source| UidLeaseError::Lock {
        path: path.clone(),
        source,
    };
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&path)
        .map_err(lock_error)?;
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
        let first = UidLease::acquire_in(dir.path(), 1000, 2).unwrap();
        let second = UidLease::acquire_in(dir.path(), 1000, 2).unwrap();
        assert_ne!(first.uid(), second.uid(), "two live leases, two uids");
        let full = UidLease::acquire_in(dir.path(), 1000, 2).unwrap_err();
        assert!(matches!(full, UidLeaseError::Exhausted { .. }), "{full}");
        let freed = first.uid();
        drop(first);
        assert!(
            !dir.path().join(freed.to_string()).exists(),
            "released: unlinked"
        );
        assert_eq!(
            UidLease::acquire_in(dir.path(), 1000, 2).unwrap().uid(),
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
        let held = UidLease::acquire_in(dir.path(), 40, 1).unwrap();
        fs::write(dir.path().join("41"), b"").unwrap();
        fs::write(dir.path().join("42"), b"").unwrap();
        fs::write(dir.path().join("notes"), b"").unwrap();
        assert_eq!(sweep_stale(dir.path()), 2);
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
        let lease = UidLease::acquire_in(dir.path(), 7, 1).unwrap();
        assert_eq!(lease.uid(), 7);
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
