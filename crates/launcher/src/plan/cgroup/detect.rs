//! Which cgroup hierarchy this process can use for per-execution cgroups.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::CgroupError;

/// Where cgroup filesystems are mounted on every mainstream distribution.
pub const CGROUP_ROOT: &str = "/sys/fs/cgroup";

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Hierarchy {
    /// A unified hierarchy, used at its (namespace) root: v2 forbids enabling
    /// controllers below a cgroup that holds processes — the provider's own
    /// cgroup does — so run cgroups live in `<root>/cordon`, outside the
    /// provider's slice (their memory is not charged to it).
    V2 { own: PathBuf },
    /// Separate v1 hierarchies, each at this process's own cgroup.
    V1 {
        memory_own: PathBuf,
        pids_own: PathBuf,
    },
}

impl Hierarchy {
    pub fn version(&self) -> &'static str {
        match self {
            Self::V2 { .. } => "v2",
            Self::V1 { .. } => "v1",
        }
    }
}

/// Thin: the hierarchy this process can use, from `/proc/self/cgroup`,
/// proven by creating, limiting and removing a trial cgroup — a hierarchy
/// that looks writable but refuses (EBUSY from v2's no-internal-process
/// rule in a container, a read-only mount) must mean "no cgroup", never a
/// failed launch.
pub fn detect() -> Result<Hierarchy, CgroupError> {
    let path = PathBuf::from("/proc/self/cgroup");
    let own =
        fs::read_to_string(&path).map_err(|source| CgroupError::ReadSelfCgroup { path, source })?;
    let hierarchy = detect_in(Path::new(CGROUP_ROOT), &own)?;
    trial(&hierarchy).map_err(|e| CgroupError::NoUsableHierarchy {
        detail: format!(
            "{} found, but a trial cgroup failed: {e}",
            hierarchy.version()
        ),
    })?;
    Ok(hierarchy)
}

/// Ceilings of the trial cgroup (never used by a process).
const TRIAL_LIMITS: super::CgroupLimits = super::CgroupLimits {
    memory_bytes: 64 << 20,
    pids: 8,
};

fn trial(hierarchy: &Hierarchy) -> Result<(), CgroupError> {
    // Unique per call, not just per process: two threads detecting at once
    // (the launcher caches one detection, but tests and other callers may
    // not) must not race on one name (EEXIST reads as "no usable cgroup").
    static TRIALS: AtomicU64 = AtomicU64::new(0);
    let n = TRIALS.fetch_add(1, Ordering::Relaxed);
    let name = format!("trial-{}-{n}", std::process::id());
    let cgroup = super::create(&super::plan(hierarchy, &name, &TRIAL_LIMITS)?)?;
    cgroup.remove()
}

/// `root` is where cgroup filesystems are mounted; `self_cgroup` the text
/// of `/proc/self/cgroup` (`id:controllers:path` lines).
pub fn detect_in(root: &Path, self_cgroup: &str) -> Result<Hierarchy, CgroupError> {
    let v2 = detect_v2(root, self_cgroup);
    let v1 = || detect_v1(root, self_cgroup);
    match v2 {
        Ok(found) => Ok(found),
        Err(v2_detail) => v1().map_err(|v1_detail| CgroupError::NoUsableHierarchy {
            detail: format!("v2: {v2_detail}; v1: {v1_detail}"),
        }),
    }
}

/// The cgroup path of `controller` ("" = the v2 line) in /proc/self/cgroup.
pub fn own_path<'a>(self_cgroup: &'a str, controller: &str) -> Option<&'a str> {
    self_cgroup.lines().find_map(|line| {
        let mut fields = line.splitn(3, ':');
        let (_, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
        let matches = if controller.is_empty() {
            controllers.is_empty()
        } else {
            controllers.split(',').any(|c| c == controller)
        };
        matches.then_some(path)
    })
}

fn detect_v2(root: &Path, self_cgroup: &str) -> Result<Hierarchy, String> {
    let mount = [root.to_path_buf(), root.join("unified")]
        .into_iter()
        .find(|m| m.join("cgroup.controllers").is_file())
        .ok_or("no cgroup2 mount")?;
    own_path(self_cgroup, "").ok_or("no 0:: line in /proc/self/cgroup")?;
    let controllers =
        fs::read_to_string(mount.join("cgroup.controllers")).map_err(|e| e.to_string())?;
    let has = |name: &str| controllers.split_whitespace().any(|c| c == name);
    if !(has("memory") && has("pids")) {
        return Err(format!(
            "{} lacks memory and/or pids controllers",
            mount.display()
        ));
    }
    match writable(&mount) {
        Ok(()) => Ok(Hierarchy::V2 { own: mount }),
        // A non-root provider: the subtree systemd delegated to it, if any.
        Err(root) => match nix::unistd::geteuid().as_raw() {
            0 => Err(root),
            uid => delegated_v2(&mount, self_cgroup, uid)
                .map(|own| Hierarchy::V2 { own })
                .map_err(|why| format!("{root}; {why}")),
        },
    }
}

/// Where systemd puts the cgroup v2 subtree it delegates to `uid` (its user
/// manager, `user@UID.service`), under the mount `root`.
pub fn delegated_dir(root: &Path, uid: u32) -> PathBuf {
    root.join(format!("user.slice/user-{uid}.slice/user@{uid}.service"))
}

/// The delegated subtree of `uid` as run cgroups' home (`<it>/cordon/…`),
/// when it has memory and pids and this process runs inside it: a process
/// moves between cgroups only through a common ancestor it may write, and
/// bwrap starts in the provider's cgroup (`systemd-run --user --scope`
/// puts a provider there).
pub fn delegated_v2(root: &Path, self_cgroup: &str, uid: u32) -> Result<PathBuf, String> {
    let dir = delegated_dir(root, uid);
    let controllers = fs::read_to_string(dir.join("cgroup.controllers"))
        .map_err(|e| format!("no delegated subtree {}: {e}", dir.display()))?;
    let has = |name: &str| controllers.split_whitespace().any(|c| c == name);
    if !(has("memory") && has("pids")) {
        return Err(format!("{} lacks memory and/or pids", dir.display()));
    }
    let inside = format!("/user.slice/user-{uid}.slice/user@{uid}.service/");
    let own = own_path(self_cgroup, "").unwrap_or("");
    if !own.starts_with(&inside) {
        return Err(format!(
            "this process runs in {own}, outside {}",
            dir.display()
        ));
    }
    writable(&dir)?;
    Ok(dir)
}

fn detect_v1(root: &Path, self_cgroup: &str) -> Result<Hierarchy, String> {
    let own = |controller: &str| -> Result<PathBuf, String> {
        let path = own_path(self_cgroup, controller).ok_or(format!("no {controller} line"))?;
        let dir = root.join(controller).join(path.trim_start_matches('/'));
        if !dir.join("cgroup.procs").is_file() {
            return Err(format!("{} is not a cgroup", dir.display()));
        }
        writable(&dir)?;
        Ok(dir)
    };
    Ok(Hierarchy::V1 {
        memory_own: own("memory")?,
        pids_own: own("pids")?,
    })
}

fn writable(dir: &Path) -> Result<(), String> {
    nix::unistd::access(dir, nix::unistd::AccessFlags::W_OK).map_err(|errno| {
        format!(
            "{} is not writable: {}",
            dir.display(),
            io::Error::from(errno)
        )
    })
}
