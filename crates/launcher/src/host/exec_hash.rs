//! The executable's SHA-256 for the receipt, and the staged copy that
//! runs: the hash always names the bytes that ran.
//!
//! The executable is opened once; its hash and a content-addressed copy
//! under `<base>/exec/` are made from that one descriptor in one pass, and
//! the sandbox runs the copy (bound at the executable's own path), never
//! the caller's file: a file rewritten after hashing (by a sandbox that
//! can write it, or anyone) cannot run under the old hash. The copy also
//! lets an unprivileged bwrap reach an executable under a 0700 directory.
//!
//! The hash is cached per file identity (device, inode, size, mtime and
//! change time, from `fstat` of that descriptor) so an unchanged file is
//! not read again per run. The change time is the key user space cannot
//! forge: `utimensat` puts an mtime back, but every write and every
//! `utimensat` sets the ctime to the current time (and the clock cannot
//! be set from a sandbox). A file whose ctime is within [`RACY_WINDOW`] of
//! the hash is not cached: a write in the same timestamp tick would leave
//! its ctime unchanged (git's "racy clean" rule).

use std::collections::HashMap;
use std::fs;
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use nix::fcntl::{Flock, FlockArg};
use sha2::{Digest, Sha256};
use tempfile::NamedTempFile;

use crate::request::policy::hex;

/// Staging directory name under the per-uid base directory.
pub const STAGING_DIR: &str = "exec";
/// Staged copies unused for this long are pruned: each is a whole copy of
/// an executable (in memory when the base is a tmpfs).
pub const STAGED_TTL: Duration = Duration::from_secs(24 * 3600);
/// A temp file being copied carries an `flock` its copier holds from just
/// after creating it until it is published or dropped (a killed provider's
/// lock goes with it): one older than this that no one holds is a copy
/// abandoned mid-way and is pruned at the next sweep, without waiting for
/// [`STAGED_TTL`] (on a tmpfs base it holds memory till then). The grace
/// covers the instant between a temp file's creation and its lock.
pub const STAGING_TEMP_GRACE: Duration = Duration::from_secs(60);
/// Read size while hashing/copying (bytes).
const COPY_CHUNK_BYTES: usize = 256 * 1024;
/// A file changed less than this long before it was hashed is hashed again
/// next time: ctime has the granularity of the kernel's coarse clock.
const RACY_WINDOW: Duration = Duration::from_secs(2);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct FileIdentity {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: i64,
    mtime_nsec: i64,
    ctime: i64,
    ctime_nsec: i64,
}

impl FileIdentity {
    fn of(meta: &fs::Metadata) -> Self {
        FileIdentity {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            mtime: meta.mtime(),
            mtime_nsec: meta.mtime_nsec(),
            ctime: meta.ctime(),
            ctime_nsec: meta.ctime_nsec(),
        }
    }

    /// Changed so recently that a write in the same tick could be hidden.
    fn is_racy(&self) -> bool {
        let changed = u64::try_from(self.ctime).ok().map(Duration::from_secs);
        let now = SystemTime::now().duration_since(UNIX_EPOCH).ok();
        match (changed, now) {
            (Some(changed), Some(now)) => now.saturating_sub(changed) < RACY_WINDOW,
            _ => true,
        }
    }
}

/// What the launcher binds and records for `command[0]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreparedExecutable {
    pub sha256: String,
    /// The path whose descriptor is bound at the executable's own path.
    pub bind_source: PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub enum ExecHashError {
    #[error("read executable {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("stage executable copy {path}: {source}")]
    Stage {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Hashes `exe` (cached by identity) and, with `staging_base`, makes sure a
/// read-only copy named by its hash, owned by this process's euid, exists
/// under `<staging_base>/exec/`: that copy is what gets bound. Without a
/// staging base the file itself is bound (the egress relay, which is
/// cordon's own).
pub fn prepare(
    exe: &Path,
    staging_base: Option<&Path>,
) -> Result<PreparedExecutable, ExecHashError> {
    static CACHE: Mutex<Option<HashMap<FileIdentity, String>>> = Mutex::new(None);
    let read_err = |source| ExecHashError::Read {
        path: exe.to_path_buf(),
        source,
    };
    let mut input = fs::File::open(exe).map_err(read_err)?;
    let id = FileIdentity::of(&input.metadata().map_err(read_err)?);
    let cached = CACHE
        .lock()
        .ok()
        .and_then(|c| c.as_ref()?.get(&id).cloned());
    let staging = staging_base.map(|b| b.join(STAGING_DIR));
    let sha256 = match (&cached, &staging) {
        (Some(sha), Some(dir)) if is_staged(&dir.join(sha), id.size) => sha.clone(),
        (Some(sha), None) => sha.clone(),
        _ => {
            let sha = hash_and_stage(&mut input, exe, staging.as_deref())?;
            // Cached only when nothing changed while it was read, and not
            // within the tick a hidden write could share.
            let after = input.metadata().map(|m| FileIdentity::of(&m)).ok();
            if after == Some(id) && !id.is_racy() {
                if let Ok(mut cache) = CACHE.lock() {
                    cache
                        .get_or_insert_with(HashMap::new)
                        .insert(id, sha.clone());
                }
            }
            sha
        }
    };
    let bind_source = staging.map_or_else(|| exe.to_path_buf(), |d| d.join(&sha256));
    if staging_base.is_some() {
        mark_used(&bind_source);
    }
    Ok(PreparedExecutable {
        sha256,
        bind_source,
    })
}

/// Refreshes a staged copy's mtime so [`prune_staged`] keeps it.
fn mark_used(path: &Path) {
    if let Ok(file) = fs::File::open(path) {
        let _ = file.set_modified(SystemTime::now());
    }
}

/// Removes staged copies not used for [`STAGED_TTL`] and abandoned temp
/// files ([`STAGING_TEMP_GRACE`]); returns how many. Runs with the
/// stale-root sweep.
pub fn prune_staged(base: &Path) -> usize {
    let Ok(entries) = fs::read_dir(base.join(STAGING_DIR)) else {
        return 0;
    };
    let expired = |entry: &fs::DirEntry, meta: &fs::Metadata| {
        let older_than = |ttl| {
            meta.modified()
                .ok()
                .and_then(|t| SystemTime::now().duration_since(t).ok())
                .is_some_and(|age| age > ttl)
        };
        let name = entry.file_name();
        let name = name.to_string_lossy();
        // open_staging_temp's names; a published copy is named by its hash.
        if name.starts_with('.') && name.ends_with(".tmp") {
            older_than(STAGING_TEMP_GRACE) && !copy_in_progress(&entry.path())
        } else {
            older_than(STAGED_TTL)
        }
    };
    entries
        .flatten()
        .filter(|e| e.metadata().is_ok_and(|m| m.is_file() && expired(e, &m)))
        .filter(|e| fs::remove_file(e.path()).is_ok())
        .count()
}

/// Whether a copier holds this temp file's lock (a live copy, however
/// slow); one that cannot be opened to tell is kept.
fn copy_in_progress(path: &Path) -> bool {
    use std::os::unix::fs::OpenOptionsExt;
    let Ok(file) = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
    else {
        return true;
    };
    // Released at once: only a copier locks a temp file, and only the one
    // it has just created.
    Flock::lock(file, FlockArg::LockExclusiveNonblock).is_err()
}

/// A published copy of ours (root's, when the provider is root) of that size.
fn is_staged(path: &Path, size: u64) -> bool {
    let euid = nix::unistd::geteuid().as_raw();
    fs::symlink_metadata(path).is_ok_and(|m| m.is_file() && m.uid() == euid && m.len() == size)
}

/// One pass over the open file: hash it and, when staging, copy the same
/// bytes to a temp file then linked under their hash (so a staged name
/// always matches its content, and a published copy is never replaced).
fn hash_and_stage(
    input: &mut fs::File,
    exe: &Path,
    staging: Option<&Path>,
) -> Result<String, ExecHashError> {
    let read_err = |source| ExecHashError::Read {
        path: exe.to_path_buf(),
        source,
    };
    let mut staged = match staging {
        Some(dir) => Some(open_staging_temp(dir)?),
        None => None,
    };
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; COPY_CHUNK_BYTES];
    loop {
        let n = input.read(&mut buf).map_err(read_err)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        if let Some(staged) = staged.as_mut() {
            let file = &mut staged.tmp;
            file.write_all(&buf[..n])
                .map_err(|source| ExecHashError::Stage {
                    path: file.path().to_path_buf(),
                    source,
                })?;
        }
    }
    let sha256 = hex(&hasher.finalize());
    if let (Some(staged), Some(dir)) = (staged, staging) {
        // The lock is held until the name is published (then released).
        publish(staged.tmp, &dir.join(&sha256))?;
    }
    Ok(sha256)
}

/// A temp file being written, and the lock that tells [`prune_staged`] so.
struct StagingTemp {
    tmp: NamedTempFile,
    _live: Flock<fs::File>,
}

/// Publishes the finished copy under its hash without ever replacing an
/// existing one (`persist_noclobber`): other providers may have that inode
/// open for a bind right now, and a rename over it would leave them a
/// deleted file bwrap cannot resolve. When the name is taken (same hash,
/// same content) the temp file is dropped, which removes it.
fn publish(tmp: NamedTempFile, dest: &Path) -> Result<(), ExecHashError> {
    match tmp.persist_noclobber(dest) {
        Ok(_) => Ok(()),
        Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(ExecHashError::Stage {
            path: dest.to_path_buf(),
            source: e.error,
        }),
    }
}

/// A fresh read-only (0555) temp file in the 0711 staging directory,
/// removed unless published, locked while it lives.
fn open_staging_temp(dir: &Path) -> Result<StagingTemp, ExecHashError> {
    let stage_err = |path: &Path, source| ExecHashError::Stage {
        path: path.to_path_buf(),
        source,
    };
    match fs::DirBuilder::new().mode(0o711).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(stage_err(dir, e)),
    }
    fs::set_permissions(dir, fs::Permissions::from_mode(0o711)).map_err(|e| stage_err(dir, e))?;
    let tmp = tempfile::Builder::new()
        .prefix(".")
        .suffix(".tmp")
        .permissions(fs::Permissions::from_mode(0o555))
        .tempfile_in(dir)
        .map_err(|e| stage_err(dir, e))?;
    // Its own open file (read-only: 0555 lets its owner read), so the lock
    // lives apart from the handle `persist_noclobber` consumes. The
    // directory is ours alone (0711), so the path is the file just made.
    let live = fs::File::open(tmp.path())
        .map_err(|e| stage_err(tmp.path(), e))
        .and_then(|file| {
            Flock::lock(file, FlockArg::LockExclusiveNonblock)
                .map_err(|(_, errno)| stage_err(tmp.path(), errno.into()))
        })?;
    Ok(StagingTemp { tmp, _live: live })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::host::process_identity::random_hex;

    fn scratch() -> PathBuf {
        let dir = std::env::temp_dir().join(format!("cordon-exec-test-{}", random_hex(8).unwrap()));
        fs::create_dir(&dir).unwrap();
        dir
    }

    #[test]
    fn the_hash_is_the_file_sha256_and_follows_content_changes() {
        let dir = scratch();
        let exe = dir.join("prog");
        fs::write(&exe, b"#!/bin/sh\necho one\n").unwrap();
        let first = prepare(&exe, None).unwrap();
        assert_eq!(first.sha256, hex(&Sha256::digest(b"#!/bin/sh\necho one\n")));
        assert_eq!(first.bind_source, exe);
        assert_eq!(
            prepare(&exe, None).unwrap(),
            first,
            "cached by file identity"
        );
        fs::write(&exe, b"#!/bin/sh\necho two, longer\n").unwrap();
        let second = prepare(&exe, None).unwrap();
        assert_eq!(
            second.sha256,
            hex(&Sha256::digest(b"#!/bin/sh\necho two, longer\n"))
        );
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_staged_copy_is_named_by_its_hash_read_only_and_identical() {
        let dir = scratch();
        let private = dir.join("private");
        fs::DirBuilder::new().mode(0o700).create(&private).unwrap();
        let exe = private.join("prog");
        fs::write(&exe, b"#!/bin/sh\nexit 0\n").unwrap();
        let staged = prepare(&exe, Some(&dir)).unwrap();
        assert_eq!(
            staged.bind_source,
            dir.join(STAGING_DIR).join(&staged.sha256)
        );
        assert_eq!(
            fs::read(&staged.bind_source).unwrap(),
            fs::read(&exe).unwrap()
        );
        assert_eq!(
            fs::metadata(&staged.bind_source).unwrap().mode() & 0o777,
            0o555
        );
        assert_eq!(
            fs::metadata(dir.join(STAGING_DIR)).unwrap().mode() & 0o777,
            0o711
        );
        let inode = fs::metadata(&staged.bind_source).unwrap().ino();
        assert_eq!(prune_staged(&dir), 0, "a copy just used is kept");
        let old = SystemTime::now() - STAGED_TTL - Duration::from_secs(60);
        fs::File::open(&staged.bind_source)
            .unwrap()
            .set_modified(old)
            .unwrap();
        let reused = prepare(&exe, Some(&dir)).unwrap();
        assert_eq!(reused, staged);
        assert_eq!(prune_staged(&dir), 0, "using a copy refreshes it");
        let again = prepare(&exe, Some(&dir)).unwrap();
        assert_eq!(again, staged);
        // A second provider (empty cache) hashing the same content must not
        // replace the published inode another provider may be binding.
        let mut file = fs::File::open(&exe).unwrap();
        hash_and_stage(&mut file, &exe, Some(&dir.join(STAGING_DIR))).unwrap();
        assert_eq!(fs::metadata(&staged.bind_source).unwrap().ino(), inode);
        assert_eq!(
            fs::read_dir(dir.join(STAGING_DIR)).unwrap().count(),
            1,
            "no temp left behind"
        );
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_same_size_rewrite_with_the_mtime_put_back_is_hashed_and_staged_again() {
        let dir = scratch();
        let exe = dir.join("prog");
        fs::write(&exe, b"#!/bin/sh\necho one\n").unwrap();
        // Past the racy window, so the first hash is cached.
        std::thread::sleep(RACY_WINDOW + Duration::from_millis(200));
        let first = prepare(&exe, Some(&dir)).unwrap();
        let mtime = fs::metadata(&exe).unwrap().modified().unwrap();
        fs::write(&exe, b"#!/bin/sh\necho two\n").unwrap();
        fs::File::options()
            .write(true)
            .open(&exe)
            .unwrap()
            .set_modified(mtime)
            .unwrap();
        assert_eq!(fs::metadata(&exe).unwrap().modified().unwrap(), mtime);
        let second = prepare(&exe, Some(&dir)).unwrap();
        assert_eq!(
            second.sha256,
            hex(&Sha256::digest(b"#!/bin/sh\necho two\n"))
        );
        assert_ne!(second.bind_source, first.bind_source);
        assert_eq!(
            fs::read(&second.bind_source).unwrap(),
            b"#!/bin/sh\necho two\n"
        );
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn pruning_removes_copies_and_temp_files_unused_past_the_ttl_and_keeps_the_rest() {
        let dir = scratch();
        let private = dir.join("private");
        fs::DirBuilder::new().mode(0o700).create(&private).unwrap();
        let (old_exe, kept_exe) = (private.join("old"), private.join("kept"));
        fs::write(&old_exe, b"#!/bin/sh\nexit 1\n").unwrap();
        fs::write(&kept_exe, b"#!/bin/sh\nexit 2\n").unwrap();
        let old = prepare(&old_exe, Some(&dir)).unwrap().bind_source;
        let kept = prepare(&kept_exe, Some(&dir)).unwrap().bind_source;
        // An abandoned temp file (a provider killed mid-copy) ages the same way.
        let abandoned = dir.join(STAGING_DIR).join(".abandoned.tmp");
        fs::write(&abandoned, b"partial").unwrap();
        let expired = SystemTime::now() - STAGED_TTL - Duration::from_secs(60);
        for path in [&old, &abandoned] {
            fs::File::open(path).unwrap().set_modified(expired).unwrap();
        }
        assert_eq!(prune_staged(&dir), 2, "the expired copy and temp file");
        assert!(!old.exists() && !abandoned.exists());
        assert!(kept.exists(), "a copy used within the TTL stays");
        assert_eq!(prune_staged(&dir), 0, "nothing left to prune");
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn an_abandoned_temp_file_goes_at_the_next_sweep_and_a_live_copy_is_kept_however_old() {
        let dir = scratch();
        let private = dir.join("private");
        fs::DirBuilder::new().mode(0o700).create(&private).unwrap();
        let exe = private.join("exe");
        fs::write(&exe, b"#!/bin/sh\nexit 3\n").unwrap();
        let published = prepare(&exe, Some(&dir)).unwrap().bind_source;
        let staging = dir.join(STAGING_DIR);
        // Left by a killed provider (no one holds its lock), and one that is
        // just being created (within the grace between creation and lock).
        let (abandoned, fresh) = (staging.join(".a1b2c3.tmp"), staging.join(".d4e5f6.tmp"));
        fs::write(&abandoned, b"partial").unwrap();
        fs::write(&fresh, b"partial").unwrap();
        // A live copy, stalled for an hour (a hung source filesystem): its
        // copier holds the lock open_staging_temp took.
        let live = open_staging_temp(&staging).unwrap();
        let live_path = live.tmp.path().to_path_buf();
        let past_grace = SystemTime::now() - STAGING_TEMP_GRACE - Duration::from_secs(60);
        let hour_ago = SystemTime::now() - Duration::from_secs(3600);
        for (path, when) in [
            (&published, hour_ago),
            (&abandoned, past_grace),
            (&live_path, hour_ago),
        ] {
            fs::File::open(path).unwrap().set_modified(when).unwrap();
        }
        assert_eq!(prune_staged(&dir), 1, "only the abandoned temp file");
        assert!(!abandoned.exists());
        assert!(fresh.exists(), "a temp file within the grace is kept");
        assert!(live_path.exists(), "a locked copy is kept however old");
        assert!(published.exists(), "a published copy keeps its day");
        // Once its copier is gone (the lock with it), the next sweep takes it.
        drop(live._live);
        let _kept = live.tmp.into_temp_path().keep().unwrap();
        assert_eq!(prune_staged(&dir), 1, "the copy whose copier is gone");
        assert!(!live_path.exists());
        fs::remove_dir_all(dir).unwrap();
    }
}
