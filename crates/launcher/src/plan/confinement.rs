//! Confinement in depth, decided per launch: the seccomp program, the
//! rlimits, the per-run cgroup and the size of the private `/tmp`, from the
//! policy's `resources` and what the host offers. Pure except for the two
//! cached host facts (`host_cgroups`, `default_seccomp_program`).
//!
//! Fail closed where asked: a policy with `resources.treeLimits: "required"`
//! wants its memory and process ceilings to hold for the whole tree, which
//! only a cgroup enforces; on a host without a usable cgroup hierarchy it
//! does not launch (`ERR_CORDON_CONFINEMENT_UNAVAILABLE`). Otherwise the
//! ceilings fall back to per-process rlimits, and the receipt says which
//! mechanisms were applied (`confinement.cgroup: null`).

use std::sync::OnceLock;

use serde_json::{json, Value};

use crate::plan::cgroup::{self, CgroupLimits, CgroupPlan, Hierarchy};
use crate::plan::rlimits;
use crate::plan::seccomp::{self, SeccompPolicy, DENIED_SYSCALLS, PROFILE_NAME};
use crate::plan::RlimitSetting;
use crate::request::policy::{Resources, TreeLimits};
use crate::request::presets::ResourceCeilings;

/// 256 MiB of tmpfs `/tmp` at most: a disk fill is bounded. tmpfs pages
/// count against the sandbox's memory cgroup (and cannot be swapped), so
/// every writable tmpfs of a sandbox together (`/tmp`, `/dev/shm`, a
/// writable default `/workspace`) is capped at half the memory ceiling: full,
/// they end in ENOSPC, not in an OOM kill; without a cgroup they hold at most
/// that much host memory.
pub const DEFAULT_TEMP_BYTES: u64 = 256 << 20;
/// `/dev/shm` (POSIX shared memory, semaphores): at most 64 MiB and 1/16 of
/// the memory ceiling.
pub const DEV_SHM_BYTES: u64 = 64 << 20;
const DEV_SHM_MEMORY_DIVISOR: u64 = 16;
/// A writable default workspace (a tmpfs: nothing reads it after the run):
/// at most 256 MiB and 1/8 of the memory ceiling.
pub const DEFAULT_WORKSPACE_BYTES: u64 = 256 << 20;
const WORKSPACE_MEMORY_DIVISOR: u64 = 8;
/// When the caller's workspace is a tmpfs charged to the sandbox (a
/// session's, `options.workspaceTmpfsBytes`), the share of the memory
/// ceiling no tmpfs may take: what the processes (a session's exec agent
/// and the command it runs next) keep when every tmpfs is full.
const CHARGED_RESERVE_DIVISOR: u64 = 4;

/// RLIMIT_NPROC when a cgroup bounds each sandbox: the processes of one
/// host uid (a run's own, or shared by runs on one reserved owner's
/// workspace or of a non-root provider), lingering zombies included, stay
/// far below pid_max.
pub const HOST_NPROC_BACKSTOP: u64 = 4096;

/// Without a cgroup, NPROC is the only process bound; this much headroom
/// over the policy's `processes` absorbs zombies of finished sandboxes that a
/// lazily reaping pid 1 has not collected yet (measured on a firecracker
/// guest: without it, rapid sequential launches failed after ~50 with EAGAIN).
pub const NPROC_ZOMBIE_ALLOWANCE: u64 = 512;

/// Everything the spawn applies beyond namespaces.
#[derive(Debug, Clone)]
pub struct ConfinementPlan {
    pub seccomp_program: Vec<u8>,
    pub rlimits: Vec<RlimitSetting>,
    pub cgroup: Option<CgroupPlan>,
    pub temp_bytes: u64,
    pub dev_shm_bytes: u64,
    /// The size of `/workspace` when it is a tmpfs (a writable default
    /// workspace), else `None`.
    pub workspace_tmpfs_bytes: Option<u64>,
    /// Why no cgroup is used (for the receipt), when `cgroup` is `None`.
    pub cgroup_unavailable: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ConfinementError {
    #[error("build the seccomp filter: {0}")]
    Seccomp(String),
    #[error(
        "policy.resources.treeLimits is \"required\" but this host has no usable cgroup \
         ({detail}); run the provider as root on a host whose cgroup v2 (or v1) has the memory \
         and pids controllers, or use treeLimits \"if-available\" to accept per-process rlimits \
         (`npx cordon doctor` shows the exact fix)"
    )]
    CgroupRequired { detail: String },
    #[error("plan the cgroup: {0}")]
    CgroupPlan(#[from] cgroup::CgroupError),
    #[error(
        "options.workspaceTmpfsBytes {charged} is more than half the sandbox's memory ceiling \
         ({memory} bytes): full, the workspace would leave its processes no memory; give at \
         most {most} or raise policy.resources.memoryBytes",
        most = memory / 2
    )]
    ChargedTmpfsTooLarge { charged: u64, memory: u64 },
}

/// The host's cgroup hierarchy, detected once per process.
pub fn host_cgroups() -> &'static Result<Hierarchy, String> {
    static HOST: OnceLock<Result<Hierarchy, String>> = OnceLock::new();
    HOST.get_or_init(|| cgroup::detect().map_err(|e| e.to_string()))
}

/// The default profile's BPF bytes, compiled once per process.
pub fn default_seccomp_program() -> Result<&'static [u8], ConfinementError> {
    static PROGRAM: OnceLock<Result<Vec<u8>, String>> = OnceLock::new();
    let built = PROGRAM.get_or_init(|| {
        seccomp::build_filter(&SeccompPolicy::default()).map_err(|e| e.to_string())
    });
    built
        .as_deref()
        .map_err(|e| ConfinementError::Seccomp(e.clone()))
}

/// The mediated-network profile's BPF bytes (AF_INET/AF_INET6 sockets
/// allowed, for the in-sandbox relay on 127.0.0.1), compiled once per process.
pub fn mediated_seccomp_program() -> Result<&'static [u8], ConfinementError> {
    static PROGRAM: OnceLock<Result<Vec<u8>, String>> = OnceLock::new();
    let policy = SeccompPolicy {
        sockets: seccomp::SocketFamilies::UnixAndInet,
    };
    let built = PROGRAM.get_or_init(|| seccomp::build_filter(&policy).map_err(|e| e.to_string()));
    built
        .as_deref()
        .map_err(|e| ConfinementError::Seccomp(e.clone()))
}

/// Pure: the ceilings a policy's resources ask for (defaults filled in).
pub fn ceilings(resources: &Resources) -> ResourceCeilings {
    let defaults = ResourceCeilings::default();
    ResourceCeilings {
        address_space_bytes: resources
            .memory_bytes
            .unwrap_or(defaults.address_space_bytes),
        processes: resources.processes.unwrap_or(defaults.processes),
        open_files: resources.open_files.unwrap_or(defaults.open_files),
        file_size_bytes: resources
            .file_size_bytes
            .unwrap_or(defaults.file_size_bytes),
        cpu_seconds: resources.cpu_seconds.unwrap_or(defaults.cpu_seconds),
    }
}

/// Pure: the run's cgroup directory name — the invocation id made safe as
/// a path component, plus a random suffix so two runs that reuse an id
/// (allowed) never share or collide on a cgroup.
pub fn cgroup_name(invocation_id: &str, random_suffix: &str) -> String {
    let safe: String = invocation_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{safe}-{random_suffix}")
}

/// Pure: policy resources + host cgroups + program → the confinement plan.
/// `cgroup_name` comes from [`cgroup_name`].
pub fn plan(
    resources: &Resources,
    workspace: WorkspaceMount,
    cgroup_name: &str,
    host: &Result<Hierarchy, String>,
    seccomp_program: &[u8],
) -> Result<ConfinementPlan, ConfinementError> {
    let ceilings = ceilings(resources);
    // RLIMIT_NPROC counts every process of the host uid, zombies included
    // until something reaps them. bwrap's namespace init is orphaned when
    // bwrap exits (it reports the exit status and leaves without waiting),
    // so on hosts whose pid 1 reaps lazily zombies of finished sandboxes
    // linger and would make new launches fail. With a cgroup, `pids.max` is
    // the exact per-sandbox bound and NPROC only a host-wide backstop.
    let nproc = match host {
        Ok(_) => ceilings.processes.max(HOST_NPROC_BACKSTOP),
        Err(_) => ceilings.processes.saturating_add(NPROC_ZOMBIE_ALLOWANCE),
    };
    let rlimit_ceilings = ResourceCeilings {
        processes: nproc,
        ..ceilings
    };
    let rlimits = rlimits::plan(&rlimit_ceilings)
        .limits
        .iter()
        .map(|l| RlimitSetting {
            name: l.resource.name(),
            resource: l.resource.raw_i32(),
            soft: l.soft,
            hard: l.hard,
        })
        .collect();
    let limits = CgroupLimits {
        memory_bytes: ceilings.address_space_bytes,
        pids: ceilings.processes,
    };
    let (cgroup, cgroup_unavailable) = match host {
        Ok(hierarchy) => (Some(cgroup::plan(hierarchy, cgroup_name, &limits)?), None),
        Err(detail) => {
            if resources.tree_limits == TreeLimits::Required {
                let detail = detail.clone();
                return Err(ConfinementError::CgroupRequired { detail });
            }
            (None, Some(detail.clone()))
        }
    };
    let sizes = tmpfs_sizes(ceilings.address_space_bytes, workspace)?;
    Ok(ConfinementPlan {
        seccomp_program: seccomp_program.to_vec(),
        rlimits,
        cgroup,
        temp_bytes: sizes.temp,
        dev_shm_bytes: sizes.dev_shm,
        workspace_tmpfs_bytes: sizes.workspace,
        cgroup_unavailable,
    })
}

/// What `/workspace` is, as far as its size goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkspaceMount {
    /// A writable default workspace: a tmpfs with a share of the budget.
    Tmpfs,
    /// A bind (a caller's directory, or the empty read-only default), or none.
    NotTmpfs,
    /// A caller's directory that is a tmpfs of this many bytes whose pages
    /// count against the sandbox's memory (a session's workspace): `/tmp`
    /// and `/dev/shm` shrink so that the three together leave
    /// [`CHARGED_RESERVE_DIVISOR`]'s share of the ceiling to the processes.
    ChargedTmpfs(u64),
}

/// The sizes of a sandbox's writable tmpfs mounts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TmpfsSizes {
    pub temp: u64,
    pub dev_shm: u64,
    pub workspace: Option<u64>,
}

/// Pure: memory ceiling → tmpfs sizes that together stay within half of it
/// (the launcher's own mounts). With a charged caller tmpfs of at most half
/// the ceiling, `/tmp` and `/dev/shm` are never larger than without it, and
/// all three together stay within the ceiling less its reserve share; a
/// larger charge cannot fit and is refused.
pub fn tmpfs_sizes(
    memory_bytes: u64,
    workspace: WorkspaceMount,
) -> Result<TmpfsSizes, ConfinementError> {
    let dev_shm = DEV_SHM_BYTES.min(memory_bytes / DEV_SHM_MEMORY_DIVISOR);
    let own_workspace = (workspace == WorkspaceMount::Tmpfs)
        .then(|| DEFAULT_WORKSPACE_BYTES.min(memory_bytes / WORKSPACE_MEMORY_DIVISOR));
    let rest = (memory_bytes / 2).saturating_sub(dev_shm + own_workspace.unwrap_or(0));
    let mut temp = DEFAULT_TEMP_BYTES.min(rest);
    if let WorkspaceMount::ChargedTmpfs(charged) = workspace {
        if charged > memory_bytes / 2 {
            return Err(ConfinementError::ChargedTmpfsTooLarge {
                charged,
                memory: memory_bytes,
            });
        }
        // At least a quarter of the ceiling, so more than /dev/shm's 1/16.
        let budget = memory_bytes - memory_bytes / CHARGED_RESERVE_DIVISOR - charged;
        temp = temp.min(budget - dev_shm);
    }
    Ok(TmpfsSizes {
        temp,
        dev_shm,
        workspace: own_workspace,
    })
}

/// What the run's cgroup reported at teardown (for the receipt).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CgroupOutcome {
    pub oom_kills: u64,
    pub killed_by_cgroup: bool,
}

/// The receipt's planned `seccomp`, `cgroup` and `temp` entries (the
/// `confinement.planned` object also carries namespaces, uid and rlimits),
/// and what the cgroup reported at teardown.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfinementReceipt {
    pub seccomp: Value,
    pub cgroup: Value,
    pub temp: Value,
    pub cgroup_outcome: Value,
}

/// Pure: what the receipt says was planned, and the cgroup's teardown report.
pub fn receipt_parts(plan: &ConfinementPlan, outcome: CgroupOutcome) -> ConfinementReceipt {
    let instructions = plan.seccomp_program.len() / seccomp::SOCK_FILTER_BYTES;
    let denied: Vec<&str> = DENIED_SYSCALLS.iter().map(|d| d.name).collect();
    let seccomp = json!({"profile": PROFILE_NAME, "instructions": instructions, "denied": denied});
    let cgroup = match &plan.cgroup {
        Some(c) => json!({
            "version": c.version,
            "memoryBytes": c.limits.iter().find(|w| is_memory_limit(w)).map(|w| &w.value),
            "pidsMax": c.limits.iter().find(|w| w.path.ends_with("pids.max")).map(|w| &w.value),
            "paths": c.leaves,
        }),
        None => Value::Null,
    };
    let cgroup_outcome = match &plan.cgroup {
        Some(_) => {
            json!({"oomKills": outcome.oom_kills, "killedByCgroup": outcome.killed_by_cgroup})
        }
        None => Value::Null,
    };
    let temp = json!({"mount": "/tmp", "kind": "tmpfs", "sizeBytes": plan.temp_bytes});
    ConfinementReceipt {
        seccomp,
        cgroup,
        temp,
        cgroup_outcome,
    }
}

fn is_memory_limit(write: &cgroup::Write) -> bool {
    write.path.ends_with("memory.max") || write.path.ends_with("memory.limit_in_bytes")
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn v1() -> Result<Hierarchy, String> {
        Ok(Hierarchy::V1 {
            memory_own: "/m".into(),
            pids_own: "/p".into(),
        })
    }

    #[test]
    fn cgroup_names_are_safe_path_components_unique_per_run() {
        assert_eq!(cgroup_name("run.1:a", "ab12"), "run_1_a-ab12");
        assert_eq!(cgroup_name("..", "ab12"), "__-ab12");
    }

    #[test]
    fn defaults_give_the_preset_ceilings_a_cgroup_and_a_bounded_temp() {
        let plan = plan(
            &Resources::default(),
            WorkspaceMount::NotTmpfs,
            "r1-x",
            &v1(),
            b"12345678",
        )
        .unwrap();
        let names: Vec<&str> = plan.rlimits.iter().map(|r| r.name).collect();
        assert_eq!(
            names,
            [
                "AS",
                "NPROC",
                "NOFILE",
                "FSIZE",
                "CPU",
                "CORE",
                "RTPRIO",
                "NICE",
                "RTTIME",
                "SIGPENDING",
                "MSGQUEUE",
                "MEMLOCK"
            ]
        );
        let cgroup = plan.cgroup.as_ref().unwrap();
        assert_eq!(cgroup.limits[0].value, (256u64 << 20).to_string());
        assert_eq!(cgroup.limits[2].value, "64");
        // Half the 256 MiB memory ceiling, less /dev/shm's 1/16 (16 MiB).
        assert_eq!(plan.temp_bytes, 112 << 20);
    }

    #[test]
    fn policy_resources_override_both_rlimits_and_cgroup() {
        let resources = Resources {
            memory_bytes: Some(64 << 20),
            processes: Some(8),
            ..Resources::default()
        };
        let plan = plan(&resources, WorkspaceMount::Tmpfs, "r2", &v1(), b"").unwrap();
        assert_eq!(plan.rlimits[0].soft, 64 << 20);
        assert_eq!(
            (
                plan.dev_shm_bytes,
                plan.workspace_tmpfs_bytes,
                plan.temp_bytes
            ),
            (4 << 20, Some(8 << 20), 20 << 20),
            "every tmpfs together is capped at half the memory"
        );
        assert_eq!(
            plan.rlimits[1].hard, HOST_NPROC_BACKSTOP,
            "NPROC is the host backstop"
        );
        assert_eq!(
            plan.cgroup.unwrap().limits[2].value,
            "8",
            "pids.max is the sandbox's bound"
        );
    }

    #[test]
    fn writable_tmpfs_mounts_together_stay_within_half_the_memory_ceiling() {
        for workspace in [WorkspaceMount::Tmpfs, WorkspaceMount::NotTmpfs] {
            for memory in [1u64, 4096, 64 << 20, 300 << 20, 1 << 30, 64 << 30] {
                let s = tmpfs_sizes(memory, workspace).unwrap();
                let total = s.temp + s.dev_shm + s.workspace.unwrap_or(0);
                assert!(total <= memory / 2, "{memory}: {s:?}");
            }
        }
        let default = tmpfs_sizes(1 << 30, WorkspaceMount::Tmpfs).unwrap();
        assert_eq!(
            (default.temp, default.dev_shm, default.workspace),
            (256 << 20, 64 << 20, Some(128 << 20))
        );
        let small = tmpfs_sizes(256 << 20, WorkspaceMount::NotTmpfs).unwrap();
        assert_eq!(
            (small.temp, small.dev_shm, small.workspace),
            (112 << 20, 16 << 20, None),
            "no workspace share is reserved when /workspace is not a tmpfs"
        );
    }

    #[test]
    fn a_charged_caller_tmpfs_shrinks_temp_so_that_every_tmpfs_leaves_a_quarter_to_processes() {
        // A session's defaults: a 128 MiB workspace under the 256 MiB
        // preset ceiling; /tmp 112 MiB and /dev/shm 16 MiB filled the rest.
        let session = tmpfs_sizes(256 << 20, WorkspaceMount::ChargedTmpfs(128 << 20)).unwrap();
        assert_eq!(
            (session.temp, session.dev_shm, session.workspace),
            (48 << 20, 16 << 20, None)
        );
        for memory in [
            64u64,
            4096,
            64 << 20,
            256 << 20,
            300 << 20,
            1 << 30,
            64 << 30,
        ] {
            let plain = tmpfs_sizes(memory, WorkspaceMount::NotTmpfs).unwrap();
            for charged in [0, 1, memory / 8, memory / 4, memory / 2] {
                let s = tmpfs_sizes(memory, WorkspaceMount::ChargedTmpfs(charged)).unwrap();
                let total = s.temp + s.dev_shm + charged;
                assert!(total <= memory - memory / 4, "{memory}/{charged}: {s:?}");
                assert!(s.temp <= plain.temp && s.dev_shm == plain.dev_shm);
                assert_eq!(
                    s.workspace, None,
                    "the caller's tmpfs is not mounted by bwrap"
                );
            }
        }
        let small = tmpfs_sizes(1 << 30, WorkspaceMount::ChargedTmpfs(64 << 20)).unwrap();
        assert_eq!(
            small,
            tmpfs_sizes(1 << 30, WorkspaceMount::NotTmpfs).unwrap(),
            "a small charge within the reserve changes nothing"
        );
    }

    #[test]
    fn a_charged_caller_tmpfs_over_half_the_ceiling_is_refused_with_invalid_options() {
        let refused =
            tmpfs_sizes(256 << 20, WorkspaceMount::ChargedTmpfs((128 << 20) + 1)).unwrap_err();
        assert!(matches!(
            refused,
            ConfinementError::ChargedTmpfsTooLarge { charged, memory: 268435456 }
                if charged == (128 << 20) + 1
        ));
        assert!(refused.to_string().contains("give at most 134217728"));
        let resources = Resources::default();
        let planned = plan(
            &resources,
            WorkspaceMount::ChargedTmpfs(1 << 30),
            "r5",
            &v1(),
            b"",
        );
        assert!(matches!(
            planned,
            Err(ConfinementError::ChargedTmpfsTooLarge { .. })
        ));
    }

    #[test]
    fn without_cgroups_limits_fall_back_unless_tree_limits_are_required() {
        let none: Result<Hierarchy, String> = Err("no hierarchy".into());
        let fallback = plan(
            &Resources::default(),
            WorkspaceMount::NotTmpfs,
            "r3",
            &none,
            b"",
        )
        .unwrap();
        assert!(fallback.cgroup.is_none());
        assert_eq!(
            fallback.rlimits[1].hard,
            64 + NPROC_ZOMBIE_ALLOWANCE,
            "without a cgroup NPROC is the only bound, with room for zombies"
        );
        assert_eq!(fallback.cgroup_unavailable.as_deref(), Some("no hierarchy"));
        let explicit = Resources {
            processes: Some(4),
            ..Resources::default()
        };
        assert!(
            plan(&explicit, WorkspaceMount::NotTmpfs, "r3", &none, b"").is_ok(),
            "explicit ceilings alone fall back"
        );
        let required = Resources {
            tree_limits: TreeLimits::Required,
            ..explicit
        };
        let refused = plan(&required, WorkspaceMount::NotTmpfs, "r3", &none, b"").unwrap_err();
        assert!(matches!(refused, ConfinementError::CgroupRequired { .. }));
        assert!(refused.to_string().contains("cordon doctor"));
    }

    #[test]
    fn tree_limits_parse_strictly_and_only_change_the_digest_when_set() {
        use crate::request::policy::Policy;
        let with = |tree: serde_json::Value| {
            let mut policy = json!({"formatVersion": 1, "filesystem": {"workspace": "read", "temp": "write"},
                "network": {"mode": "none"}, "process": {"treeConfinement": "required"},
                "resources": {"processes": 4}});
            if !tree.is_null() {
                policy["resources"]["treeLimits"] = tree;
            }
            Policy::from_json(&policy)
        };
        let absent = with(Value::Null).unwrap();
        assert_eq!(absent.resources.tree_limits, TreeLimits::IfAvailable);
        let explicit = with(json!("if-available")).unwrap();
        assert_eq!(absent.digest(), explicit.digest());
        let required = with(json!("required")).unwrap();
        assert_eq!(required.resources.tree_limits, TreeLimits::Required);
        assert_ne!(required.digest(), absent.digest());
        assert!(with(json!("sometimes")).is_err());
    }

    #[test]
    fn the_receipt_names_the_profile_the_cgroup_and_the_temp_size() {
        let program = default_seccomp_program().unwrap();
        let plan = plan(
            &Resources::default(),
            WorkspaceMount::NotTmpfs,
            "r4",
            &v1(),
            program,
        )
        .unwrap();
        let outcome = CgroupOutcome {
            oom_kills: 2,
            killed_by_cgroup: true,
        };
        let ConfinementReceipt {
            seccomp,
            cgroup,
            temp,
            cgroup_outcome,
        } = receipt_parts(&plan, outcome);
        assert_eq!(seccomp["profile"], "cordon-default-v5");
        assert_eq!(seccomp["instructions"], program.len() / 8);
        assert!(seccomp["denied"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n == "ptrace"));
        assert_eq!(cgroup["version"], "v1");
        assert_eq!(cgroup["pidsMax"], "64");
        assert_eq!(cgroup_outcome["oomKills"], 2);
        assert_eq!(cgroup_outcome["killedByCgroup"], true);
        assert_eq!(temp["sizeBytes"], 112 << 20);
    }
}
