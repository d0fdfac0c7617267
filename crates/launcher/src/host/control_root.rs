//! The per-execution control root: a random, mode-0700 directory holding
//! the plan, the receipt, the default workspace and the sandbox temp. It is
//! never mounted into the sandbox and is removed when the execution ends.
//!
//! Layout: `<base>/cordon-<euid>/` (mode 0711: traversable, not listable)
//! holds one `<32 hex>/` per execution and the `exec/` staging cache; the
//! base is `$TMPDIR` if set, else `/dev/shm` if a tmpfs, else `/tmp`.
//!
//! When bwrap runs as an unprivileged identity (provider is root), bwrap
//! must traverse the control root to mount `workspace/` and `sandbox-temp/`
//! (bwrap resolves even `--bind-fd` sources by path). The control root is
//! then owned by that identity, still mode 0700; the plan and receipt in it
//! are root-owned 0600 files.

use std::fs;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

use crate::host::atomic_file::{self, Durability};
use crate::host::process_identity::{process_start_time, random_hex, Identity};
use crate::host::tree_removal;

/// Mode of the per-uid base directory: others may traverse (bwrap as the
/// sandbox identity must), nobody else may list or write.
pub const BASE_MODE: u32 = 0o711;
/// Mode of each control root.
pub const ROOT_MODE: u32 = 0o700;
/// Mode of a control root, and of the directories in it that the sandbox
/// binds, when the sandbox runs as a subordinate id the (non-root) provider
/// cannot chown to: bwrap resolves every bind source's path (`realpath`)
/// as that id, so it must traverse them. Others may traverse, never list:
/// the root's name is random and the base is not listable; every file in it
/// stays 0600.
pub const TRAVERSABLE_MODE: u32 = 0o711;
/// Mode of the files written in it (owner record, plan, receipt).
const FILE_MODE: u32 = 0o600;
/// A control root without an owner record older than this is an abandoned
/// half-created root (its creator crashed between mkdir and the record).
pub const ORPHAN_GRACE: Duration = Duration::from_secs(60);
/// Stale-root sweeps happen at most this often per process.
pub const REAP_INTERVAL: Duration = Duration::from_secs(60);
/// Random bytes in a control root name (hex-encoded: 32 characters).
const ROOT_NAME_BYTES: usize = 16;
const OWNER_FILE: &str = "owner";
/// Appended to a control root's name once its run settled (see `detach`).
const DETACHED_SUFFIX: &str = ".removing";
/// The shared-memory tmpfs preferred for control roots when `$TMPDIR` is unset.
const SHM_DIR: &str = "/dev/shm";
pub const TEMP_DIR: &str = "sandbox-temp";
pub const WORKSPACE_DIR: &str = "workspace";
/// The egress engine socket's directory (mediated network only).
pub const EGRESS_DIR: &str = "egress";

#[derive(Debug, thiserror::Error)]
pub enum ControlRootError {
    #[error("create base directory {path}: {source}")]
    CreateBase {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("base directory {path} is not a private directory owned by uid {uid} (a symlink, foreign owner or group/other-writable): refusing to use it (`npx cordon doctor` says how to recover)")]
    UnsafeBase { path: PathBuf, uid: u32 },
    #[error("create control root {path}: {source}")]
    Create {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("hand {path} to uid {uid}: {source}")]
    Chown {
        path: PathBuf,
        uid: u32,
        source: std::io::Error,
    },
    #[error("open {path} to the sandbox's subordinate id (chmod): {source}")]
    Chmod {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("random name: {0}")]
    Random(std::io::Error),
}

/// A live control root; [`ControlRoot::remove`] is idempotent.
#[derive(Debug)]
pub struct ControlRoot {
    path: PathBuf,
    removed: bool,
}

/// Where control roots live: `$TMPDIR` when the provider set it; else
/// `/dev/shm` when it is a tmpfs (control roots are small, short-lived and
/// private: on a disk-backed /tmp their mkdir/unlink journaling cost more
/// than the whole sandbox start); else `/tmp`. Pure apart from one statfs.
pub fn base_path() -> PathBuf {
    let uid = nix::unistd::geteuid().as_raw();
    let parent = match std::env::var_os("TMPDIR").filter(|t| Path::new(t).is_absolute()) {
        Some(tmpdir) => PathBuf::from(tmpdir),
        None if is_tmpfs(Path::new(SHM_DIR)) => PathBuf::from(SHM_DIR),
        None => PathBuf::from("/tmp"),
    };
    parent.join(format!("cordon-{uid}"))
}

/// Whether `path` is on a tmpfs (statfs magic).
fn is_tmpfs(path: &Path) -> bool {
    use nix::sys::statfs::{statfs, TMPFS_MAGIC};
    statfs(path).is_ok_and(|s| s.filesystem_type() == TMPFS_MAGIC)
}

/// [`base_path`], created (mode 0711) and checked.
pub fn base_dir() -> Result<PathBuf, ControlRootError> {
    let uid = nix::unistd::geteuid().as_raw();
    let path = base_path();
    match fs::DirBuilder::new().mode(BASE_MODE).create(&path) {
        Ok(()) => {
            fs::set_permissions(&path, fs::Permissions::from_mode(BASE_MODE)).map_err(|source| {
                ControlRootError::CreateBase {
                    path: path.clone(),
                    source,
                }
            })?
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(source) => return Err(ControlRootError::CreateBase { path, source }),
    }
    let meta = fs::symlink_metadata(&path).map_err(|source| ControlRootError::CreateBase {
        path: path.clone(),
        source,
    })?;
    if !meta.is_dir() || meta.uid() != uid || meta.mode() & 0o022 != 0 {
        return Err(ControlRootError::UnsafeBase { path, uid });
    }
    Ok(path)
}

impl ControlRoot {
    /// Steps: random name → mkdir 0700 → owner record (pid, start time and
    /// pid namespace, for reaping) → `sandbox-temp/` → hand both to `identity`.
    pub fn create(
        base: &Path,
        identity: Option<Identity>,
    ) -> Result<ControlRoot, ControlRootError> {
        let name = random_hex(ROOT_NAME_BYTES).map_err(ControlRootError::Random)?;
        let path = base.join(name);
        fs::DirBuilder::new()
            .mode(ROOT_MODE)
            .create(&path)
            .map_err(|source| ControlRootError::Create {
                path: path.clone(),
                source,
            })?;
        let root = ControlRoot {
            path,
            removed: false,
        };
        let pid = std::process::id();
        let started = process_start_time(pid).unwrap_or(0);
        let pid_ns = own_pid_namespace().unwrap_or(0);
        root.write_atomic(OWNER_FILE, format!("{pid} {started} {pid_ns}\n").as_bytes())?;
        let temp = root.make_dir(TEMP_DIR, 0o700, identity)?;
        if let Some(id) = identity {
            chown(&root.path, id)?;
        }
        debug_assert!(temp.starts_with(&root.path));
        Ok(root)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Lets a sandbox of a subordinate id traverse the root (and, with
    /// `dirs`, those of its directories): [`TRAVERSABLE_MODE`].
    pub fn let_sandbox_traverse(&self, dirs: &[&Path]) -> Result<(), ControlRootError> {
        use std::os::unix::fs::PermissionsExt;
        for path in std::iter::once(self.path.as_path()).chain(dirs.iter().copied()) {
            fs::set_permissions(path, fs::Permissions::from_mode(TRAVERSABLE_MODE)).map_err(
                |source| ControlRootError::Chmod {
                    path: path.to_path_buf(),
                    source,
                },
            )?;
        }
        Ok(())
    }

    pub fn temp_dir(&self) -> PathBuf {
        self.path.join(TEMP_DIR)
    }

    /// The default workspace: fresh, empty, owned by the sandbox identity.
    pub fn create_workspace(
        &self,
        identity: Option<Identity>,
    ) -> Result<PathBuf, ControlRootError> {
        self.make_dir(WORKSPACE_DIR, 0o755, identity)
    }

    /// The egress engine's socket directory (mode 0700, owned by the sandbox
    /// identity so the in-sandbox relay may connect to the socket in it).
    pub fn create_egress_dir(
        &self,
        identity: Option<Identity>,
    ) -> Result<PathBuf, ControlRootError> {
        self.make_dir(EGRESS_DIR, 0o700, identity)
    }

    fn make_dir(
        &self,
        name: &str,
        mode: u32,
        identity: Option<Identity>,
    ) -> Result<PathBuf, ControlRootError> {
        let path = self.path.join(name);
        fs::DirBuilder::new()
            .mode(mode)
            .create(&path)
            .map_err(|source| ControlRootError::Create {
                path: path.clone(),
                source,
            })?;
        if let Some(id) = identity {
            chown(&path, id)?;
        }
        Ok(path)
    }

    /// Writes `name` whole ([`atomic_file::write`], mode 0600): when bwrap
    /// runs as the sandbox identity that identity owns the control root, and
    /// any host process of that uid could plant a symlink where the temp
    /// file goes; the temp file's random name is created `O_EXCL`, so a
    /// planted entry is never opened, let alone followed.
    pub fn write_atomic(&self, name: &str, bytes: &[u8]) -> Result<PathBuf, ControlRootError> {
        let path = self.path.join(name);
        atomic_file::write(&path, bytes, FILE_MODE, Durability::Volatile).map_err(|source| {
            ControlRootError::Write {
                path: path.clone(),
                source,
            }
        })?;
        Ok(path)
    }

    /// Moves the root off its name in one rename (to `<name>.removing`,
    /// still recognised by the stale-root sweep), so the run can settle now
    /// and [`ControlRoot::remove`] can take as long as what the sandbox left
    /// in it needs, off the caller's path. Returns whether it moved.
    pub fn detach(&mut self) -> bool {
        let Some(name) = self.path.file_name() else {
            return false;
        };
        let mut detached = name.to_os_string();
        detached.push(DETACHED_SUFFIX);
        let target = self.path.with_file_name(detached);
        if self.removed || fs::rename(&self.path, &target).is_err() {
            return false;
        }
        self.path = target;
        true
    }

    /// Removes the whole root (idempotent) with the hostile-tree walk
    /// ([`crate::host::tree_removal`]). Returns whether it is gone.
    pub fn remove(&mut self) -> bool {
        if !self.removed {
            self.removed = tree_removal::remove_tree(&self.path).is_ok();
        }
        self.removed
    }
}

impl Drop for ControlRoot {
    fn drop(&mut self) {
        self.remove();
    }
}

fn chown(path: &Path, id: Identity) -> Result<(), ControlRootError> {
    std::os::unix::fs::chown(path, Some(id.uid), Some(id.gid)).map_err(|source| {
        ControlRootError::Chown {
            path: path.to_path_buf(),
            uid: id.uid,
            source,
        }
    })
}

/// Whether the once-per-[`REAP_INTERVAL`] housekeeping of this process is
/// due (the first call always is); claims it when it is.
pub fn sweep_due() -> bool {
    static LAST: Mutex<Option<Instant>> = Mutex::new(None);
    let Ok(mut last) = LAST.lock() else {
        return false;
    };
    if last.is_some_and(|t| t.elapsed() < REAP_INTERVAL) {
        return false;
    }
    *last = Some(Instant::now());
    true
}

/// Removes control roots (and detached ones) whose owning provider is gone
/// (pid dead, or pid reused by a process with another start time); returns
/// how many.
pub fn sweep(base: &Path) -> usize {
    let Ok(entries) = fs::read_dir(base) else {
        return 0;
    };
    entries
        .flatten()
        .filter(|e| is_root_name(&e.file_name().to_string_lossy()))
        .filter(|e| is_stale(&e.path()))
        .filter(|e| tree_removal::remove_tree(&e.path()).is_ok())
        .count()
}

/// `<32 hex>`, or `<32 hex>.removing` for a detached root.
fn is_root_name(name: &str) -> bool {
    let name = name.strip_suffix(DETACHED_SUFFIX).unwrap_or(name);
    name.len() == ROOT_NAME_BYTES * 2 && name.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The inode of this process's pid namespace (`/proc/self/ns/pid`).
fn own_pid_namespace() -> Option<u64> {
    fs::metadata("/proc/self/ns/pid").ok().map(|m| m.ino())
}

/// An owner record is `<pid> <start time> [<pid namespace inode>]`. A pid
/// means something only in its own pid namespace: a provider in another
/// one (a container sharing this base, e.g. two containers of a pod, which
/// share `/dev/shm`) sees another process or none under that number and
/// took a live run's root for stale — removing it under the run (its
/// receipt then could not be written). A root recorded in another pid
/// namespace, or in one this process cannot name, is left to the providers
/// of that namespace; a record without the field (written before it
/// existed) is judged by its pid as before.
fn is_stale(root: &Path) -> bool {
    match fs::read_to_string(root.join(OWNER_FILE)) {
        Ok(text) => {
            let mut fields = text.split_whitespace().map(str::parse::<u64>);
            let (Some(Ok(pid)), Some(Ok(started))) = (fields.next(), fields.next()) else {
                return true;
            };
            if let Some(Ok(recorded)) = fields.next() {
                if recorded == 0 || own_pid_namespace() != Some(recorded) {
                    return false;
                }
            }
            let Ok(pid) = u32::try_from(pid) else {
                return true;
            };
            match process_start_time(pid) {
                // No start time was recorded: only a dead pid makes it stale.
                _ if started == 0 => !Path::new(&format!("/proc/{pid}")).exists(),
                now => now != Some(started),
            }
        }
        Err(_) => fs::symlink_metadata(root)
            .and_then(|m| m.modified())
            .map(|t| SystemTime::now().duration_since(t).unwrap_or_default() > ORPHAN_GRACE)
            .unwrap_or(false),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn scratch() -> PathBuf {
        let dir = std::env::temp_dir().join(format!("cordon-root-test-{}", random_hex(8).unwrap()));
        fs::DirBuilder::new().mode(BASE_MODE).create(&dir).unwrap();
        dir
    }

    #[test]
    fn a_control_root_is_private_records_its_owner_and_is_removed_idempotently() {
        let base = scratch();
        let mut root = ControlRoot::create(&base, None).unwrap();
        let meta = fs::metadata(root.path()).unwrap();
        assert_eq!(meta.mode() & 0o777, ROOT_MODE);
        assert!(is_root_name(
            &root.path().file_name().unwrap().to_string_lossy()
        ));
        assert_eq!(fs::metadata(root.temp_dir()).unwrap().mode() & 0o777, 0o700);
        let owner = fs::read_to_string(root.path().join(OWNER_FILE)).unwrap();
        let ns = own_pid_namespace().unwrap();
        assert!(owner.trim_end().ends_with(&format!(" {ns}")), "{owner}");
        assert!(owner.starts_with(&format!("{} ", std::process::id())));
        let receipt = root.write_atomic("receipt.json", b"{}").unwrap();
        assert_eq!(fs::metadata(&receipt).unwrap().mode() & 0o777, 0o600);
        let path = root.path().to_path_buf();
        assert!(root.remove());
        assert!(root.remove());
        assert!(!path.exists());
        fs::remove_dir_all(base).unwrap();
    }

    /// A symlink planted where a fixed-name temp file would go (the old
    /// writer's `.receipt.json.tmp`) is neither followed nor in the way.
    #[test]
    fn an_atomic_write_never_follows_a_planted_temp_symlink() {
        let base = scratch();
        let root = ControlRoot::create(&base, None).unwrap();
        let victim = base.join("victim");
        fs::write(&victim, "precious").unwrap();
        std::os::unix::fs::symlink(&victim, root.path().join(".receipt.json.tmp")).unwrap();
        let receipt = root.write_atomic("receipt.json", b"{}").unwrap();
        assert_eq!(fs::read_to_string(&victim).unwrap(), "precious");
        assert!(fs::symlink_metadata(&receipt).unwrap().is_file());
        assert_eq!(fs::read_to_string(&receipt).unwrap(), "{}");
        drop(root);
        fs::remove_dir_all(base).unwrap();
    }

    #[test]
    fn a_sweep_removes_roots_of_dead_or_reused_pids_and_keeps_live_ones() {
        let base = scratch();
        let live = ControlRoot::create(&base, None).unwrap();
        let dead_child = std::process::Command::new("/bin/true").spawn().unwrap();
        let dead_pid = dead_child.id();
        let mut dead_child = dead_child;
        dead_child.wait().unwrap();
        let make = |name: &str, owner: Option<String>| {
            let dir = base.join(name);
            fs::create_dir(&dir).unwrap();
            if let Some(text) = owner {
                fs::write(dir.join(OWNER_FILE), text).unwrap();
            }
            dir
        };
        let dead = make(&"a".repeat(32), Some(format!("{dead_pid} 12345\n")));
        let reused = make(&"b".repeat(32), Some(format!("{} 1\n", std::process::id())));
        let detached_dead = make(
            &format!("{}{DETACHED_SUFFIX}", "d".repeat(32)),
            Some(format!("{dead_pid} 12345\n")),
        );
        let fresh_orphan = make(&"c".repeat(32), None);
        let not_a_root = make("exec", None);
        // Recorded in this pid namespace: judged by its pid (dead: stale).
        let ns = own_pid_namespace().unwrap();
        let dead_here = make(&"e".repeat(32), Some(format!("{dead_pid} 12345 {ns}\n")));
        // Recorded in another pid namespace, or one its owner could not
        // name: its pid means nothing here, so it stays (a live run of a
        // provider in another container sharing the base).
        let elsewhere = make(
            &"f".repeat(32),
            Some(format!("{dead_pid} 12345 {}\n", ns + 1)),
        );
        let unnamed = make(&"9".repeat(32), Some(format!("{dead_pid} 12345 0\n")));
        assert_eq!(sweep(&base), 4);
        assert!(!dead.exists() && !reused.exists() && !detached_dead.exists());
        assert!(!dead_here.exists());
        assert!(
            elsewhere.exists() && unnamed.exists(),
            "another pid namespace's roots stay"
        );
        assert!(live.path().exists(), "the live provider's root stays");
        assert!(
            fresh_orphan.exists(),
            "an ownerless root younger than the grace stays"
        );
        assert!(not_a_root.exists());
        drop(live);
        fs::remove_dir_all(base).unwrap();
    }
}
