//! Pure: the directories, writes and kill method of one execution's cgroup.

use std::path::{Path, PathBuf};

use super::{own_path, CgroupError, Hierarchy};

/// The parent directory name, under the launcher's own cgroup.
pub const PARENT_NAME: &str = "cordon";
/// The longest leaf name accepted: an id of up to 128 bytes plus a random
/// suffix, well under NAME_MAX (255).
pub const MAX_ID_BYTES: usize = 200;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CgroupLimits {
    pub memory_bytes: u64,
    pub pids: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Need {
    Required,
    /// Written when the file exists (swap accounting is a boot option).
    IfPresent,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Write {
    pub path: PathBuf,
    pub value: String,
    pub need: Need,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KillMethod {
    /// Write "1" to this `cgroup.kill`.
    CgroupKill { file: PathBuf },
    /// Write "0" to `pids_max`, then SIGKILL each pid listed in `procs`.
    FreezeForksThenSignal { pids_max: PathBuf, procs: PathBuf },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CgroupPlan {
    pub version: &'static str,
    /// Enabling controllers for the children of the `cordon` parent (v2).
    pub parent_setup: Vec<Write>,
    pub parents: Vec<PathBuf>,
    pub leaves: Vec<PathBuf>,
    pub limits: Vec<Write>,
    pub procs: Vec<PathBuf>,
    /// v1: each leaf's `tasks` file, to which bwrap's child writes "0"
    /// before its exec (ExecutionCgroup::open_spawn_joins). A write of "0"
    /// to `tasks` moves only the writing thread, and the kernel then takes
    /// no global threadgroup lock, so the move does not wait for an RCU
    /// grace period as a write of a pid to `cgroup.procs` does (~6–14 ms
    /// here: docs/performance.md). Empty on v2, where thread moves need a
    /// threaded subtree: there bwrap is moved by pid after its exec.
    pub spawn_joins: Vec<PathBuf>,
    pub kill: KillMethod,
    /// The leaf directory name (the invocation id).
    pub leaf_name: String,
    /// Where the leaf reports OOM kills (`memory.events` / `memory.oom_control`).
    pub oom_report: PathBuf,
}

/// Pure: the directories, writes and kill method of one execution's cgroup.
pub fn plan(
    hierarchy: &Hierarchy,
    invocation_id: &str,
    limits: &CgroupLimits,
) -> Result<CgroupPlan, CgroupError> {
    let safe = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    if invocation_id.is_empty()
        || invocation_id.len() > MAX_ID_BYTES
        || !invocation_id.chars().all(safe)
    {
        return Err(CgroupError::InvalidInvocationId {
            id: invocation_id.to_string(),
        });
    }
    Ok(match hierarchy {
        Hierarchy::V2 { own } => plan_v2(own, invocation_id, limits),
        Hierarchy::V1 {
            memory_own,
            pids_own,
        } => plan_v1(memory_own, pids_own, invocation_id, limits),
    })
}

fn write(path: PathBuf, value: String, need: Need) -> Write {
    Write { path, value, need }
}

/// One leaf under `<own>/cordon`, whose controllers are enabled first.
fn plan_v2(own: &Path, leaf_name: &str, limits: &CgroupLimits) -> CgroupPlan {
    let parent = own.join(PARENT_NAME);
    let leaf = parent.join(leaf_name);
    let enable = || "+memory +pids".to_string();
    CgroupPlan {
        version: "v2",
        leaf_name: leaf_name.to_string(),
        parent_setup: vec![
            write(own.join("cgroup.subtree_control"), enable(), Need::Required),
            write(
                parent.join("cgroup.subtree_control"),
                enable(),
                Need::Required,
            ),
        ],
        parents: vec![parent],
        limits: vec![
            write(
                leaf.join("memory.max"),
                limits.memory_bytes.to_string(),
                Need::Required,
            ),
            write(leaf.join("memory.swap.max"), "0".into(), Need::IfPresent),
            write(
                leaf.join("pids.max"),
                limits.pids.to_string(),
                Need::Required,
            ),
        ],
        procs: vec![leaf.join("cgroup.procs")],
        spawn_joins: Vec::new(),
        kill: KillMethod::CgroupKill {
            file: leaf.join("cgroup.kill"),
        },
        oom_report: leaf.join("memory.events"),
        leaves: vec![leaf],
    }
}

/// A leaf in each of the memory and pids hierarchies.
fn plan_v1(
    memory_own: &Path,
    pids_own: &Path,
    leaf_name: &str,
    limits: &CgroupLimits,
) -> CgroupPlan {
    let (memory_parent, pids_parent) = (memory_own.join(PARENT_NAME), pids_own.join(PARENT_NAME));
    let (memory_leaf, pids_leaf) = (memory_parent.join(leaf_name), pids_parent.join(leaf_name));
    let memory = limits.memory_bytes.to_string();
    CgroupPlan {
        version: "v1",
        leaf_name: leaf_name.to_string(),
        parent_setup: Vec::new(),
        parents: vec![memory_parent, pids_parent],
        // memsw must stay >= limit_in_bytes, so it is written second.
        limits: vec![
            write(
                memory_leaf.join("memory.limit_in_bytes"),
                memory.clone(),
                Need::Required,
            ),
            write(
                memory_leaf.join("memory.memsw.limit_in_bytes"),
                memory,
                Need::IfPresent,
            ),
            write(
                pids_leaf.join("pids.max"),
                limits.pids.to_string(),
                Need::Required,
            ),
        ],
        procs: vec![
            memory_leaf.join("cgroup.procs"),
            pids_leaf.join("cgroup.procs"),
        ],
        spawn_joins: vec![memory_leaf.join("tasks"), pids_leaf.join("tasks")],
        kill: KillMethod::FreezeForksThenSignal {
            pids_max: pids_leaf.join("pids.max"),
            procs: pids_leaf.join("cgroup.procs"),
        },
        oom_report: memory_leaf.join("memory.oom_control"),
        leaves: vec![memory_leaf, pids_leaf],
    }
}

/// Pure: does `/proc/<pid>/cgroup` text put the process in our leaf?
pub fn in_leaf(proc_cgroup: &str, leaf_name: &str) -> bool {
    let suffix = format!("/{PARENT_NAME}/{leaf_name}");
    // v1: the pids hierarchy's line; v2: the unified ("0::") line.
    ["pids", ""]
        .iter()
        .filter_map(|controller| own_path(proc_cgroup, controller))
        .any(|path| path.ends_with(&suffix))
}
