//! A cgroup per execution: memory and process ceilings for the whole
//! sandbox tree, and a kill that reaches every process in it.
//!
//! Steps (each a small function; the paths and values are planned purely):
//! 1. `detect`: a writable cgroup v2 hierarchy with `memory` and `pids`, else
//!    v1 `memory` and `pids` hierarchies, nested under this process's own
//!    cgroup (so the host's accounting of the provider still covers it).
//! 2. `plan`: the `cordon/<invocation id>` leaves, limit writes, kill method.
//! 3. `create`: mkdir, write limits.
//! 4. The join, so bwrap is inside before it forks anything. v1:
//!    `open_spawn_joins`, and bwrap's child writes "0" to each leaf's
//!    `tasks` before its exec (run/spawn.rs): a thread's own move, which
//!    waits for no RCU grace period. v2: `add_pid` (supervisor.rs
//!    `release_bwrap`) writes bwrap's pid to `cgroup.procs` while bwrap
//!    still waits for its options; a migration by pid can wait an RCU grace
//!    period, which then overlaps bwrap's exec (docs/performance.md).
//! 5. `kill_all`: `cgroup.kill` on v2; on v1 `pids.max` = 0 (no new forks),
//!    then SIGKILL every member via a pidfd until `cgroup.procs` is empty.
//! 6. `remove`: rmdir the leaves, then the `cordon` parents if now empty.

use std::fs;
use std::io::{self, ErrorKind};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

mod detect;
mod plan;

pub use detect::{
    delegated_dir, delegated_v2, detect, detect_in, own_path, Hierarchy, CGROUP_ROOT,
};
pub use plan::{in_leaf, plan, CgroupLimits, CgroupPlan, KillMethod, Need, Write, PARENT_NAME};

/// First pause between kill rounds: a SIGKILLed task usually exits within
/// microseconds; the pause doubles up to `KILL_ROUND_PAUSE_MAX`.
const KILL_ROUND_PAUSE_MIN: Duration = Duration::from_micros(100);
/// Longest pause between kill rounds (a busy host, a large tree).
const KILL_ROUND_PAUSE_MAX: Duration = Duration::from_millis(2);
/// Stale-leaf sweeps run at most this often per process (each costs a
/// readdir of the parents).
const REAP_INTERVAL_SECS: u64 = 30;
/// An empty leaf older than this belongs to a run whose provider died.
pub const STALE_LEAF_AGE: Duration = Duration::from_secs(60);
/// Attempts at creating a leaf whose parent a concurrent teardown removed.
const CREATE_ATTEMPTS: usize = 3;

#[derive(Debug, thiserror::Error)]
pub enum CgroupError {
    #[error("reading {path}: {source}")]
    ReadSelfCgroup { path: PathBuf, source: io::Error },
    #[error("no usable cgroup hierarchy: {detail}")]
    NoUsableHierarchy { detail: String },
    #[error("invocation id {id:?} is not a safe cgroup name")]
    InvalidInvocationId { id: String },
    #[error("creating cgroup {path}: {source}")]
    CreateDir { path: PathBuf, source: io::Error },
    #[error("writing {path}: {source}")]
    WriteFile { path: PathBuf, source: io::Error },
    #[error("opening {path}: {source}")]
    OpenProcs { path: PathBuf, source: io::Error },
    #[error("reading {path}: {source}")]
    ReadProcs { path: PathBuf, source: io::Error },
    #[error("{remaining} processes still in {path} after the kill")]
    KillTimedOut { path: PathBuf, remaining: usize },
    #[error("removing cgroup {path}: {source}")]
    RemoveDir { path: PathBuf, source: io::Error },
}

/// A created cgroup; `remove` (or drop after `kill_all`) tears it down.
#[derive(Debug)]
pub struct ExecutionCgroup {
    plan: CgroupPlan,
}

/// Thin: reap stale siblings, mkdir the leaves, write the limits. On
/// failure, whatever was created is removed.
pub fn create(plan: &CgroupPlan) -> Result<ExecutionCgroup, CgroupError> {
    if reap_due() {
        plan.parents
            .iter()
            .for_each(|p| reap_stale(p, STALE_LEAF_AGE));
    }
    let cgroup = ExecutionCgroup { plan: plan.clone() };
    match populate(&cgroup.plan) {
        Ok(()) => Ok(cgroup),
        Err(error) => {
            let _ = cgroup.remove();
            Err(error)
        }
    }
}

fn populate(plan: &CgroupPlan) -> Result<(), CgroupError> {
    for (parent, leaf) in plan.parents.iter().zip(&plan.leaves) {
        make_leaf(parent, leaf, &plan.parent_setup)?;
    }
    plan.limits.iter().try_for_each(write_value)
}

/// True at most once per `REAP_INTERVAL_SECS` in this process.
fn reap_due() -> bool {
    use std::sync::atomic::{AtomicU64, Ordering};
    static LAST: AtomicU64 = AtomicU64::new(0);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let last = LAST.load(Ordering::Relaxed);
    now.saturating_sub(last) >= REAP_INTERVAL_SECS
        && LAST
            .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
}

/// Removes empty leaves older than `age` under `parent`: runs whose provider
/// died before its teardown. Young empty leaves may be another launch between
/// mkdir and join, and populated ones may be live sandboxes of another
/// provider, so both are left alone. Best effort: errors are ignored.
pub fn reap_stale(parent: &Path, age: Duration) {
    let Ok(entries) = fs::read_dir(parent) else {
        return;
    };
    for leaf in entries.flatten().map(|e| e.path()).filter(|p| p.is_dir()) {
        let old = fs::metadata(&leaf)
            .and_then(|m| m.modified())
            .is_ok_and(|t| t.elapsed().is_ok_and(|e| e > age));
        let empty =
            fs::read_to_string(leaf.join("cgroup.procs")).is_ok_and(|p| p.trim().is_empty());
        if old && empty {
            let _ = fs::remove_dir(&leaf);
        }
    }
}

/// A concurrent teardown may rmdir an empty parent between our mkdirs.
fn make_leaf(parent: &Path, leaf: &Path, parent_setup: &[Write]) -> Result<(), CgroupError> {
    let mut last = None;
    for _ in 0..CREATE_ATTEMPTS {
        if let Err(source) = fs::create_dir(parent).or_else(ignore(ErrorKind::AlreadyExists)) {
            return Err(CgroupError::CreateDir {
                path: parent.to_path_buf(),
                source,
            });
        }
        for write in parent_setup {
            write_value(write)?;
        }
        match fs::create_dir(leaf) {
            Ok(()) => return Ok(()),
            Err(source) if source.kind() == ErrorKind::NotFound => last = Some(source),
            Err(source) => {
                return Err(CgroupError::CreateDir {
                    path: leaf.to_path_buf(),
                    source,
                })
            }
        }
    }
    let source = last.unwrap_or_else(|| io::Error::from(ErrorKind::NotFound));
    Err(CgroupError::CreateDir {
        path: leaf.to_path_buf(),
        source,
    })
}

fn ignore(kind: ErrorKind) -> impl Fn(io::Error) -> io::Result<()> {
    move |e| if e.kind() == kind { Ok(()) } else { Err(e) }
}

fn write_value(write: &Write) -> Result<(), CgroupError> {
    match (fs::write(&write.path, &write.value), write.need) {
        (Ok(()), _) => Ok(()),
        (Err(e), Need::IfPresent) if e.kind() == ErrorKind::NotFound => Ok(()),
        (Err(source), _) => Err(CgroupError::WriteFile {
            path: write.path.clone(),
            source,
        }),
    }
}

impl ExecutionCgroup {
    pub fn plan(&self) -> &CgroupPlan {
        &self.plan
    }

    /// The leaves' `tasks` files, open for writing, for bwrap's child to
    /// join them before its exec (v1: `CgroupPlan::spawn_joins`); empty when
    /// the hierarchy joins by pid after the exec ([`Self::add_pid`], v2).
    /// The child writes before it changes identity: v1 lets a writer move a
    /// task of its own uid (or any, as root), and the moved task is the
    /// writer itself, still with the provider's uid.
    pub fn open_spawn_joins(&self) -> Result<Vec<(PathBuf, std::os::fd::OwnedFd)>, CgroupError> {
        self.plan
            .spawn_joins
            .iter()
            .map(|path| {
                fs::OpenOptions::new()
                    .write(true)
                    .open(path)
                    .map(|file| (path.clone(), std::os::fd::OwnedFd::from(file)))
                    .map_err(|source| CgroupError::OpenProcs {
                        path: path.clone(),
                        source,
                    })
            })
            .collect()
    }

    /// Whether bwrap joins at its spawn ([`Self::open_spawn_joins`]) rather
    /// than by pid after its exec.
    pub fn joins_at_spawn(&self) -> bool {
        !self.plan.spawn_joins.is_empty()
    }

    /// Moves `pid` (and its threads) into every leaf.
    pub fn add_pid(&self, pid: u32) -> Result<(), CgroupError> {
        for path in &self.plan.procs {
            fs::write(path, pid.to_string()).map_err(|source| CgroupError::WriteFile {
                path: path.clone(),
                source,
            })?;
        }
        Ok(())
    }

    /// The pids in the cgroup (the kill method's `procs` view).
    pub fn members(&self) -> Result<Vec<i32>, CgroupError> {
        let path = self.plan.procs.last().cloned().unwrap_or_default();
        let text =
            fs::read_to_string(&path).map_err(|source| CgroupError::ReadProcs { path, source })?;
        Ok(text.lines().filter_map(|l| l.trim().parse().ok()).collect())
    }

    /// OOM kills inside the cgroup so far (0 when the kernel does not say).
    pub fn oom_kills(&self) -> u64 {
        let text = fs::read_to_string(&self.plan.oom_report).unwrap_or_default();
        text.lines()
            .find_map(|l| l.strip_prefix("oom_kill "))
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or(0)
    }

    /// Kills every process in the cgroup and waits until it is empty.
    pub fn kill_all(&self, timeout: Duration) -> Result<(), CgroupError> {
        let deadline = Instant::now() + timeout;
        // The common case at teardown: nothing left, nothing to write.
        if self.members()?.is_empty() {
            return Ok(());
        }
        // cgroup.kill (v2, Linux >= 5.14) kills the whole cgroup atomically;
        // without it (older v2 kernels, v1), freeze forks and signal members.
        let atomic = match &self.plan.kill {
            KillMethod::CgroupKill { file } => write_value(&Write {
                path: file.clone(),
                value: "1".into(),
                need: Need::Required,
            })
            .is_ok(),
            KillMethod::FreezeForksThenSignal { .. } => false,
        };
        if !atomic {
            self.freeze_forks()?;
        }
        let mut pause = KILL_ROUND_PAUSE_MIN;
        loop {
            let members = self.members()?;
            if members.is_empty() {
                return Ok(());
            }
            if Instant::now() >= deadline {
                let path = self.plan.procs.last().cloned().unwrap_or_default();
                return Err(CgroupError::KillTimedOut {
                    path,
                    remaining: members.len(),
                });
            }
            if !atomic {
                members.iter().for_each(|pid| self.kill_member(*pid));
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(KILL_ROUND_PAUSE_MAX);
        }
    }

    /// pids.max = 0: every fork in the cgroup fails from now on, so the
    /// signal rounds converge.
    fn freeze_forks(&self) -> Result<(), CgroupError> {
        let pids_max = self.plan.leaves.last().map(|leaf| leaf.join("pids.max"));
        write_value(&Write {
            path: pids_max.unwrap_or_default(),
            value: "0".into(),
            need: Need::Required,
        })
    }

    /// pidfd first, then re-check membership: a pid that exited and was
    /// reused by an unrelated process between the read and the kill is
    /// never signalled.
    fn kill_member(&self, pid: i32) {
        let Ok(pidfd) = crate::host::pidfd::open(pid) else {
            return;
        };
        if self.any_thread_in_leaf(pid) {
            let _ = crate::host::pidfd::send_signal(&pidfd, libc::SIGKILL);
        }
    }

    /// Whether any thread of `pid` is in this run's leaf: a process whose
    /// main thread has exited reads `/` in `/proc/<pid>/cgroup` while its
    /// other threads are still members (white-box round on the v1 join, F2).
    fn any_thread_in_leaf(&self, pid: i32) -> bool {
        let in_ours = |path: PathBuf| {
            fs::read_to_string(path).is_ok_and(|text| in_leaf(&text, &self.plan.leaf_name))
        };
        if in_ours(PathBuf::from(format!("/proc/{pid}/cgroup"))) {
            return true;
        }
        fs::read_dir(format!("/proc/{pid}/task"))
            .map(|tasks| {
                tasks
                    .flatten()
                    .any(|task| in_ours(task.path().join("cgroup")))
            })
            .unwrap_or(false)
    }

    /// Removes the leaves, then the `cordon` parents if nothing else uses
    /// them (EBUSY/ENOTEMPTY from a sibling's leaf is expected and ignored).
    /// Idempotent: a leaf already gone is not an error.
    pub fn remove(&self) -> Result<(), CgroupError> {
        for leaf in &self.plan.leaves {
            match fs::remove_dir(leaf) {
                Ok(()) => {}
                Err(e) if e.kind() == ErrorKind::NotFound => {}
                Err(source) => {
                    return Err(CgroupError::RemoveDir {
                        path: leaf.clone(),
                        source,
                    })
                }
            }
        }
        for parent in &self.plan.parents {
            let _ = fs::remove_dir(parent);
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests;
