//! The execution plan: everything the spawn step will do, decided purely
//! from the validated request and a few resolved host facts. Serialised to
//! `plan.json` in the control root and turned into bwrap's argv by
//! [`crate::plan::bwrap_argv`].

pub mod bwrap_argv;
pub mod cgroup;
pub mod confinement;
pub mod network_plan;
pub mod rlimits;
pub mod run_identity;
pub mod seccomp;
pub mod starter;

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::host::process_identity::Identity;
use crate::host::runtime_layout::RuntimeLayout;
use crate::plan::network_plan::{
    NetworkInputs, NetworkPlan, SANDBOX_EGRESS_DIR, SANDBOX_PROXY_PORT, SANDBOX_RELAY,
};
use crate::plan::run_identity::UidAllocation;
use crate::plan::starter::StarterPlan;
use crate::request::launch_request::LaunchRequest;
use crate::request::policy::Access;

/// The runner's protocol channel (the socketpair end).
pub const PROTOCOL_FD: i32 = 3;
/// bwrap's `--info-fd`: it writes the sandbox's host pid there once the
/// namespaces exist; EOF without it means setup failed.
pub const INFO_FD: i32 = 4;
/// Mount point of the workspace inside the sandbox.
pub const SANDBOX_WORKSPACE: &str = "/workspace";
/// Mount point of the private temp inside the sandbox.
pub const SANDBOX_TEMP: &str = "/tmp";
/// The sandbox's `/dev`: bwrap's device tmpfs, made read-only once set up.
pub const SANDBOX_DEV: &str = "/dev";
/// POSIX shared memory (`shm_open`, `sem_open`): the one writable place
/// under `/dev`, a size-bounded tmpfs of its own.
pub const SANDBOX_DEV_SHM: &str = "/dev/shm";
/// Hostname inside the sandbox (the host's name is not leaked).
pub const SANDBOX_HOSTNAME: &str = "cordon";

/// What a descriptor bound into the sandbox is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum BindRole {
    Executable,
    Workspace,
    Temp,
    Extra,
    /// The sandbox's starter, `cordon-egress-relay` (plan/starter.rs):
    /// every run whose caller named it.
    Starter,
    /// The directory holding the run's egress engine socket (mediated network).
    EgressEngine,
}

/// A host path opened by the launcher and mounted by bwrap from its fd.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FdBind {
    pub slot: i32,
    pub role: BindRole,
    pub source: PathBuf,
    pub dest: PathBuf,
    pub writable: bool,
}

/// An rlimit applied to bwrap (and so to the sandbox) before exec.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RlimitSetting {
    pub name: &'static str,
    pub resource: i32,
    pub soft: u64,
    pub hard: u64,
}

/// A compiled seccomp BPF program handed to `bwrap --seccomp FD`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SeccompSlot {
    pub slot: i32,
    #[serde(skip)]
    pub program: Vec<u8>,
    pub instructions: usize,
}

/// What backs a writable filesystem of the sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WritableKind {
    /// A size-bounded tmpfs of the sandbox's own.
    Tmpfs,
    /// A host directory bound in (a caller's workspace, an `extra` path).
    HostDirectory,
}

/// One writable filesystem of the sandbox, for the receipt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WritableFilesystem {
    pub mount: PathBuf,
    pub kind: WritableKind,
    pub size_bytes: Option<u64>,
}

/// Host facts the planner needs, resolved by the caller.
#[derive(Debug, Clone)]
pub struct PlanInputs<'a> {
    pub request: &'a LaunchRequest,
    pub bwrap: PathBuf,
    /// The file whose descriptor is bound at the executable's path (the
    /// executable itself, or its staged copy when bwrap runs unprivileged).
    pub executable_source: PathBuf,
    pub workspace: Option<PathBuf>,
    pub sandbox_temp: PathBuf,
    pub runtime: &'a RuntimeLayout,
    pub identity: Option<Identity>,
    pub seccomp_program: Option<Vec<u8>>,
    pub rlimits: Vec<RlimitSetting>,
    /// `Some(bytes)`: `/tmp` is a tmpfs of that size instead of the
    /// sandbox-temp bind (bounded disk use, no host path in the sandbox).
    pub temp_bytes: Option<u64>,
    /// Present exactly when the policy's network is mediated (then
    /// `starter_source` is too: the relay is the starter).
    pub network: Option<NetworkInputs>,
    /// The starter binary to bind (its staged copy when bwrap runs as the
    /// sandbox identity); `None`: bwrap starts `/usr/bin/env` instead, and
    /// nothing gates the program on its provider's life.
    pub starter_source: Option<PathBuf>,
    /// Size of the `/dev/shm` tmpfs (the rest of `/dev` is read-only).
    pub dev_shm_bytes: u64,
    /// `Some(bytes)`: `/workspace` is a tmpfs of that size (a writable
    /// default workspace, which nothing reads after the run) instead of a
    /// bind; `inputs.workspace` is then `None`.
    pub workspace_tmpfs_bytes: Option<u64>,
    /// How `identity` was chosen (crate::plan::run_identity).
    pub uid_allocation: UidAllocation,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Plan {
    pub bwrap: PathBuf,
    /// plan.json keeps the names only: the values may be secrets, and the
    /// plan sits on disk while the run lasts (or longer, if the host crashes).
    #[serde(serialize_with = "names_only")]
    pub runner_env: Vec<(String, String)>,
    pub argv: Vec<String>,
    pub binds: Vec<FdBind>,
    #[serde(skip)]
    pub runtime: RuntimeLayout,
    /// `(target, link)` symlinks created after the binds: `command[0]` →
    /// its canonical path, when `command[0]` is a symlink outside the
    /// mirrored runtime (inside it, the mirrored links already resolve).
    pub symlinks: Vec<(PathBuf, PathBuf)>,
    pub chdir: PathBuf,
    pub seccomp: Option<SeccompSlot>,
    /// bwrap's `--args FD`: its options, environment values included, are
    /// read from this descriptor rather than from argv (see bwrap_argv.rs).
    pub args_slot: i32,
    pub rlimits: Vec<RlimitSetting>,
    pub temp_tmpfs_bytes: Option<u64>,
    pub dev_shm_bytes: u64,
    pub workspace_tmpfs_bytes: Option<u64>,
    pub identity: Option<Identity>,
    pub network: Option<NetworkPlan>,
    pub starter: Option<StarterPlan>,
    pub uid_allocation: UidAllocation,
}

impl Plan {
    /// Builds the plan. Descriptor slots are allocated in a fixed order
    /// after fd 3 (protocol) and fd 4 (info): seccomp, executable,
    /// workspace, temp, extras, the starter, the engine's directory, the
    /// fd-4 channel, the starter's pipe, then the `--args` options — so the
    /// argv is a pure function of inputs.
    pub fn build(inputs: PlanInputs<'_>) -> Plan {
        let request = inputs.request;
        let first_slot = INFO_FD + 1;
        let mut binds = wanted_binds(&inputs);
        let seccomp = inputs.seccomp_program.map(|program| SeccompSlot {
            slot: first_slot,
            instructions: program.len() / 8,
            program,
        });
        let mut next_slot = first_slot + i32::from(seccomp.is_some());
        for bind in binds.iter_mut() {
            bind.slot = next_slot;
            next_slot += 1;
        }
        let network = inputs.network.as_ref().map(|n| {
            let fd4_slot = n.frontend.fd4().then(|| {
                next_slot += 1;
                next_slot - 1
            });
            NetworkPlan {
                frontend: n.frontend.as_str(),
                proxy_port: n.frontend.proxy().then_some(SANDBOX_PROXY_PORT),
                fd4_slot,
            }
        });
        let starter = inputs.starter_source.as_ref().map(|_| {
            next_slot += 2;
            StarterPlan {
                alive_slot: next_slot - 2,
                status_slot: next_slot - 1,
            }
        });
        Plan {
            args_slot: next_slot,
            bwrap: inputs.bwrap,
            symlinks: command_symlinks(request, inputs.runtime),
            runner_env: network_plan::runner_env(request.env.clone(), network.as_ref()),
            argv: request.argv.clone(),
            binds,
            runtime: inputs.runtime.clone(),
            chdir: if request.policy.workspace == Access::None {
                "/".into()
            } else {
                SANDBOX_WORKSPACE.into()
            },
            seccomp,
            rlimits: inputs.rlimits,
            temp_tmpfs_bytes: inputs.temp_bytes,
            dev_shm_bytes: inputs.dev_shm_bytes,
            workspace_tmpfs_bytes: inputs.workspace_tmpfs_bytes,
            identity: inputs.identity,
            network,
            starter,
            uid_allocation: inputs.uid_allocation,
        }
    }

    /// Every filesystem the sandbox can write, with its size bound (`None`:
    /// a host directory the policy grants, bounded only by the host's disk).
    pub fn writable_filesystems(&self) -> Vec<WritableFilesystem> {
        let tmpfs = |mount: &str, bytes| WritableFilesystem {
            mount: mount.into(),
            kind: WritableKind::Tmpfs,
            size_bytes: Some(bytes),
        };
        let mut list = vec![tmpfs(SANDBOX_DEV_SHM, self.dev_shm_bytes)];
        list.extend(self.temp_tmpfs_bytes.map(|b| tmpfs(SANDBOX_TEMP, b)));
        list.extend(
            self.workspace_tmpfs_bytes
                .map(|b| tmpfs(SANDBOX_WORKSPACE, b)),
        );
        list.extend(
            self.binds
                .iter()
                .filter(|b| b.writable)
                .map(|b| WritableFilesystem {
                    mount: b.dest.clone(),
                    kind: WritableKind::HostDirectory,
                    size_bytes: None,
                }),
        );
        list
    }

    /// The highest descriptor the spawn step installs in the child.
    pub fn max_slot(&self) -> i32 {
        let binds = self.binds.iter().map(|b| b.slot);
        let seccomp = self.seccomp.iter().map(|s| s.slot);
        let fd4 = self.network.iter().filter_map(|n| n.fd4_slot);
        let starter = self
            .starter
            .iter()
            .flat_map(|s| [s.alive_slot, s.status_slot]);
        binds
            .chain(seccomp)
            .chain(fd4)
            .chain(starter)
            .chain([self.args_slot])
            .fold(INFO_FD, i32::max)
    }
}

fn names_only<S: serde::Serializer>(
    env: &[(String, String)],
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.collect_seq(env.iter().map(|(name, _)| name))
}

/// The descriptor binds in slot order (slots are assigned by the caller):
/// executable, workspace, temp (unless it is a tmpfs), extras.
fn wanted_binds(inputs: &PlanInputs<'_>) -> Vec<FdBind> {
    let request = inputs.request;
    let bind = |role, source: &Path, dest: &Path, writable| FdBind {
        slot: 0,
        role,
        source: source.to_path_buf(),
        dest: dest.to_path_buf(),
        writable,
    };
    let mut binds = vec![bind(
        BindRole::Executable,
        &inputs.executable_source,
        &request.executable,
        false,
    )];
    if let Some(ws) = &inputs.workspace {
        let writable = request.policy.workspace == Access::Write;
        binds.push(bind(
            BindRole::Workspace,
            ws,
            Path::new(SANDBOX_WORKSPACE),
            writable,
        ));
    }
    if inputs.temp_bytes.is_none() {
        binds.push(bind(
            BindRole::Temp,
            &inputs.sandbox_temp,
            Path::new(SANDBOX_TEMP),
            true,
        ));
    }
    for extra in &request.policy.extra {
        let writable = extra.access == Access::Write;
        binds.push(bind(BindRole::Extra, &extra.path, &extra.path, writable));
    }
    if let Some(starter) = &inputs.starter_source {
        binds.push(bind(
            BindRole::Starter,
            starter,
            Path::new(SANDBOX_RELAY),
            false,
        ));
    }
    if let Some(network) = &inputs.network {
        let engine = Path::new(SANDBOX_EGRESS_DIR);
        binds.push(bind(
            BindRole::EgressEngine,
            &network.engine_dir,
            engine,
            false,
        ));
    }
    binds
}

/// `command[0]` → canonical path, when `command[0]` is a symlink outside the
/// mirrored runtime (inside it, the mirrored links already resolve).
fn command_symlinks(request: &LaunchRequest, runtime: &RuntimeLayout) -> Vec<(PathBuf, PathBuf)> {
    if request.invoked_as != request.executable && !is_in_runtime(&request.invoked_as, runtime) {
        vec![(request.executable.clone(), request.invoked_as.clone())]
    } else {
        Vec::new()
    }
}

/// Whether `path` lies in the read-only runtime the sandbox mirrors.
fn is_in_runtime(path: &std::path::Path, runtime: &RuntimeLayout) -> bool {
    use crate::host::runtime_layout::RuntimeEntry;
    path.starts_with("/usr")
        || runtime.entries.iter().any(|e| match e {
            RuntimeEntry::Symlink { path: p, .. } | RuntimeEntry::Directory { path: p } => {
                path.starts_with(p)
            }
        })
}
