//! The launch pipeline, run on the caller's thread up to the fork:
//! 1. validate the request (command, options, policy) — nothing on disk yet;
//! 2. resolve and probe bwrap (cached);
//! 3. base directory, a dead provider's leftovers swept (orphaned namespace
//!    inits, stale control roots: on a thread of their own), executable
//!    hash (+ staged copy);
//! 4. control root, default workspace;
//! 5. plan → `plan.json`, argv, opened bind descriptors;
//! 6. hand over to the run's supervision (supervisor/, on the supervision
//!    runtime), which forks bwrap and reports the pid.

use std::fs::File;
use std::os::fd::{OwnedFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error_code::ErrorCode;
use crate::events::EventSink;
use crate::host::control_root::{self, ControlRoot, ControlRootError};
use crate::host::exec_hash::{self, ExecHashError};
use crate::host::namespace_holder::{HolderEntry, HolderError};
use crate::host::process_identity::{random_hex, sandbox_identity};
use crate::host::runtime_layout::RuntimeLayout;
use crate::plan::bwrap_argv::bwrap_argv;
use crate::plan::cgroup::{self, CgroupError};
use crate::plan::confinement::{self, ConfinementError, ConfinementPlan};
use crate::plan::run_identity::{self, RunIdentityError};
use crate::plan::{BindRole, FdBind, Plan, PlanInputs};
use crate::receipt::HostBind;
use crate::request::launch_request::{LaunchRequest, RequestError};
use crate::run::backend::{self, BackendError};
use crate::run::execution::ExecutionHandle;
use crate::run::owner_reader::OwnerReader;
use crate::supervisor::{self, Prepared};

#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error(transparent)]
    Request(#[from] RequestError),
    #[error(transparent)]
    Backend(#[from] BackendError),
    #[error(
        "bubblewrap {version} at {path} is too old: cordon needs >= 0.8.0 (for --size and \
         --disable-userns); upgrade bubblewrap (see `npx cordon doctor`)"
    )]
    BackendTooOld { path: PathBuf, version: String },
    #[error("control root: {0}")]
    ControlRoot(#[from] ControlRootError),
    #[error(transparent)]
    Executable(#[from] ExecHashError),
    #[error("open {path} for binding into the sandbox: {source}")]
    OpenBind {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A caller-named host path (workspace, `filesystem.extra`) goes
    /// through a symlink, or could not be opened without following one.
    #[error("policy.filesystem.extra / options.workspace: {0}")]
    HostPath(#[from] crate::request::host_path::HostPathError),
    /// The supervision runtime's threads could not be started.
    #[error("{0}")]
    Supervision(std::io::Error),
    #[error("plan.json: {0}")]
    PlanJson(#[from] serde_json::Error),
    #[error(transparent)]
    Confinement(#[from] ConfinementError),
    #[error("create the run's cgroup: {0}")]
    Cgroup(#[from] CgroupError),
    #[error(transparent)]
    Network(#[from] crate::run::network_setup::NetworkSetupError),
    #[error(transparent)]
    Identity(#[from] crate::plan::run_identity::RunIdentityError),
    /// The sandbox's uid cannot reach (or write) the caller's workspace.
    #[error(transparent)]
    WorkspaceAccess(#[from] crate::host::workspace_access::WorkspaceAccessError),
    #[error(transparent)]
    WorkspaceGrant(#[from] crate::host::workspace_grant::WorkspaceGrantError),
    /// The namespace holder of a non-root session is unusable.
    #[error(transparent)]
    Holder(#[from] crate::host::namespace_holder::HolderError),
    /// The name service knows an account or group with the run's id.
    #[error(transparent)]
    ReservedIdTaken(#[from] crate::host::reserved_id_nss::ReservedIdError),
    /// The starter a caller named (`options.networkRelayPath`) is unusable
    /// for a run without mediated network (with one, it is `Network`).
    #[error("options.networkRelayPath: the sandbox starter {path} cannot be used: {reason}")]
    Starter { path: PathBuf, reason: String },
    /// The starter's liveness pair could not be made.
    #[error("cannot create the starter's liveness socket pair: {0}")]
    StarterPipe(std::io::Error),
}

impl LaunchError {
    pub fn code(&self) -> ErrorCode {
        match self {
            LaunchError::Request(e) => e.code(),
            LaunchError::Backend(_) | LaunchError::BackendTooOld { .. } => {
                ErrorCode::BackendUnavailable
            }
            // The caller named a path that cannot be bound as named: a
            // symlink in it, or gone/not a directory since validation.
            LaunchError::HostPath(_) => ErrorCode::InvalidOptions,
            LaunchError::Confinement(ConfinementError::CgroupRequired { .. }) => {
                ErrorCode::ConfinementUnavailable
            }
            LaunchError::Confinement(ConfinementError::ChargedTmpfsTooLarge { .. }) => {
                ErrorCode::InvalidOptions
            }
            LaunchError::Confinement(
                ConfinementError::Seccomp(_) | ConfinementError::CgroupPlan(_),
            ) => ErrorCode::SpawnFailed,
            LaunchError::Network(_) => ErrorCode::NetworkUnavailable,
            LaunchError::Identity(
                RunIdentityError::Unavailable { .. } | RunIdentityError::Userns(_),
            ) => ErrorCode::IdentityUnavailable,
            LaunchError::WorkspaceAccess(_)
            | LaunchError::WorkspaceGrant(_)
            | LaunchError::Identity(RunIdentityError::HeldBySession { .. }) => {
                ErrorCode::WorkspaceUnusable
            }
            LaunchError::Holder(HolderError::ProviderIsRoot | HolderError::NoWorkspace) => {
                ErrorCode::InvalidOptions
            }
            LaunchError::Holder(_) => ErrorCode::IdentityUnavailable,
            // A sandbox uid that is someone's account is no isolation.
            LaunchError::ReservedIdTaken(_) => ErrorCode::ConfinementUnavailable,
            LaunchError::Starter { .. } => ErrorCode::InvalidOptions,
            // The host, not the request, failed a preparation step.
            LaunchError::ControlRoot(_)
            | LaunchError::Executable(_)
            | LaunchError::OpenBind { .. }
            | LaunchError::Supervision(_)
            | LaunchError::PlanJson(_)
            | LaunchError::Cgroup(_)
            | LaunchError::StarterPipe(_)
            | LaunchError::Identity(RunIdentityError::Lease(_)) => ErrorCode::SpawnFailed,
        }
    }
}

/// Runs the whole pipeline for the JSON options document; events go to
/// `sink` from the launcher's threads.
pub fn launch(
    options_json: &str,
    sink: Arc<dyn EventSink>,
) -> Result<ExecutionHandle, LaunchError> {
    start(LaunchRequest::from_json_text(options_json)?, sink)
}

/// [`launch`] with fd 3 read on the owner's own event loop (the addon's
/// entry; run/owner_reader.rs): the owner's `Data`/`End` events of fd 3
/// come from its own thread, the others from the launcher's.
pub fn launch_reading(
    options_json: &str,
    sink: Arc<dyn EventSink>,
    owner: Arc<dyn OwnerReader>,
) -> Result<ExecutionHandle, LaunchError> {
    start_with(
        LaunchRequest::from_json_text(options_json)?,
        sink,
        Some(owner),
    )
}

/// Runs the pipeline from step 2 for a request already validated
/// ([`LaunchRequest::new`] for typed callers such as the CLI).
pub fn start(
    request: LaunchRequest,
    sink: Arc<dyn EventSink>,
) -> Result<ExecutionHandle, LaunchError> {
    start_with(request, sink, None)
}

fn start_with(
    request: LaunchRequest,
    sink: Arc<dyn EventSink>,
    reader: Option<Arc<dyn OwnerReader>>,
) -> Result<ExecutionHandle, LaunchError> {
    // Early, before anything exists on disk: an extra that goes through a
    // symlink is refused with a coded error. open_binds opens it again the
    // same way and binds that descriptor, so a later swap is refused too.
    for extra in &request.policy.extra {
        crate::request::host_path::open_no_follow(&extra.path, false)?;
    }
    let provider_is_root = sandbox_identity().is_some();
    let backend = backend::resolve(request.bwrap_path.as_deref(), sandbox_identity())?;
    if !crate::host_probe::version_supported(&backend.version) {
        let (path, version) = (backend.path.clone(), backend.version.clone());
        return Err(LaunchError::BackendTooOld { path, version });
    }
    let invocation_id = match &request.invocation_id {
        Some(id) => id.clone(),
        None => random_hex(16).map_err(ControlRootError::Random)?,
    };
    let step = |name: &str| crate::host::step_trace::stamp(&invocation_id, name);
    step("launch.start");
    // Before anything exists on disk: a policy whose ceilings this host
    // cannot enforce fails here, naming the missing mechanism.
    let confinement = plan_confinement(&request, &invocation_id)?;
    step("launch.confinement");
    check_starter(&request)?;
    let base = control_root::base_dir()?;
    if control_root::sweep_due() {
        sweep_in_background(base.clone(), backend.path.clone());
        exec_hash::prune_staged(&base);
    }
    let mounted_workspace = request
        .workspace
        .as_deref()
        .filter(|_| request.policy.workspace != crate::request::policy::Access::None);
    let holder = holder_entry(&request, provider_is_root, mounted_workspace)?;
    let mut run_identity = match &holder {
        Some(entry) => holder_identity(entry),
        None => {
            run_identity::resolve(provider_is_root, request.policy.identity, mounted_workspace)?
        }
    };
    let identity = run_identity.identity;
    step("launch.identity");
    if let Some(id) = identity {
        crate::host::reserved_id_nss::check(id.uid, id.gid)?;
    }
    // A private workspace (the remote host's uploads) is opened to this
    // run's uid alone, now that it is known (workspace_grant.rs, R12-1).
    let granted = request.workspace_grant && mounted_workspace.is_some();
    if let (true, Some(ws)) = (granted, mounted_workspace) {
        crate::host::workspace_grant::grant(ws, identity)?;
    }
    // Before anything exists on disk: bwrap would otherwise fail (or the
    // program get EACCES) on a workspace the run's uid cannot use.
    if let (Some(ws), Some(who)) = (mounted_workspace, identity) {
        let write = request.policy.workspace == crate::request::policy::Access::Write;
        match holder {
            // The workspace itself was checked through the holder
            // (namespace_holder.rs), or reached through its ACL entry.
            Some(_) => crate::host::workspace_access::check_ancestors(ws, who)?,
            None if granted => crate::host::workspace_access::check_ancestors(ws, who)?,
            None => crate::host::workspace_access::check(ws, who, write)?,
        }
    }
    // Whoever bwrap runs as (other than the provider) must reach what is
    // staged for it (the network relay: a world-readable copy). Only a root
    // provider can also hand the control root's directories over (chown).
    let staging = identity.map(|_| base.as_path());
    let owner = run_identity.chown_target();
    // Staged for every provider, root or not: the sandbox runs the copy
    // made from the bytes that were hashed (exec_hash.rs).
    let executable = exec_hash::prepare(&request.executable, Some(&base))?;
    let starter_source = stage_starter(&request, staging)?;
    step("launch.executable");
    let root = ControlRoot::create(&base, owner)?;
    step("launch.control_root");
    let workspace = workspace_for(&request, &root, owner)?;
    let network = prepare_network(&request, &root, owner, &invocation_id)?;
    if run_identity.allocation.is_subordinate() {
        open_to_subordinate(&root, network.as_ref())?;
    }
    let plan = Plan::build(PlanInputs {
        request: &request,
        bwrap: backend.path.clone(),
        executable_source: executable.bind_source.clone(),
        workspace,
        sandbox_temp: root.temp_dir(),
        runtime: RuntimeLayout::host(),
        identity,
        seccomp_program: Some(confinement.seccomp_program.clone()),
        rlimits: confinement.rlimits.clone(),
        temp_bytes: Some(confinement.temp_bytes),
        network: network.as_ref().map(|n| n.inputs.clone()),
        starter_source,
        dev_shm_bytes: confinement.dev_shm_bytes,
        workspace_tmpfs_bytes: confinement.workspace_tmpfs_bytes,
        uid_allocation: run_identity.allocation,
    });
    root.write_atomic("plan.json", serde_json::to_string_pretty(&plan)?.as_bytes())?;
    let argv = bwrap_argv(&plan);
    let mut sources = open_binds(&plan, root.path())?;
    let mntns = holder
        .map(|entry| bind_held_workspace(entry, &plan, &mut sources))
        .transpose()?;
    // Before the engine's descriptor joins: one entry per plan bind.
    let host_binds = host_binds(&plan, &sources);
    let (egress, fd4, fd4_namespace) = match network {
        Some(n) => (Some(n.engine), n.fd4_sandbox_end, n.fd4_namespace),
        None => (None, None, None),
    };
    if let (Some(slot), Some(fd)) = (plan.network.as_ref().and_then(|n| n.fd4_slot), fd4) {
        sources.push((slot, fd));
    }
    let starter_reader = plan
        .starter
        .map(|starter| starter_pair(starter, &mut sources))
        .transpose()
        .map_err(LaunchError::StarterPipe)?;
    step("launch.plan");
    // Last, so an earlier failure leaves no cgroup behind.
    let cgroup = confinement
        .cgroup
        .as_ref()
        .map(cgroup::create)
        .transpose()?;
    step("launch.cgroup_created");
    let prepared = Prepared {
        request,
        plan,
        argv,
        sources,
        root,
        backend,
        executable_sha256: executable.sha256,
        invocation_id,
        confinement,
        cgroup: cgroup.map(std::sync::Arc::new),
        egress,
        fd4_namespace,
        uid_lease: run_identity.lease.take(),
        userns: run_identity.userns.take(),
        claim_recheck: run_identity.claim_recheck.take(),
        mntns,
        host_binds,
        starter_reader,
    };
    supervisor::start(prepared, sink, reader).map_err(LaunchError::Supervision)
}

/// Before anything exists on disk: the starter a caller named is an
/// executable file. A mediated policy needs one (it is the network relay).
fn check_starter(request: &LaunchRequest) -> Result<(), LaunchError> {
    let relay = request.network_relay_path.as_deref();
    let mediated = matches!(
        request.policy.network,
        crate::request::policy::NetworkMode::Mediated(_)
    );
    if mediated || relay.is_some() {
        crate::run::network_setup::check_relay(relay).map_err(|e| match e {
            crate::run::network_setup::NetworkSetupError::Relay { path, reason } => {
                unusable_starter(request, path, reason)
            }
            other => other.into(),
        })?;
    }
    Ok(())
}

/// The starter's bind source (plan/starter.rs): the caller's relay, staged
/// (a world-readable copy named by its hash) when bwrap runs as another
/// identity than the provider's.
fn stage_starter(
    request: &LaunchRequest,
    staging: Option<&Path>,
) -> Result<Option<PathBuf>, LaunchError> {
    let Some(relay) = request.network_relay_path.as_deref() else {
        return Ok(None);
    };
    let staged = exec_hash::prepare(relay, staging)
        .map_err(|e| unusable_starter(request, relay.to_owned(), e.to_string()))?;
    Ok(Some(staged.bind_source))
}

/// A starter that cannot be used: the network's error for a mediated policy
/// (the relay is its way out), the caller's option otherwise.
fn unusable_starter(request: &LaunchRequest, path: PathBuf, reason: String) -> LaunchError {
    match request.policy.network {
        crate::request::policy::NetworkMode::Mediated(_) => {
            crate::run::network_setup::NetworkSetupError::Relay { path, reason }.into()
        }
        crate::request::policy::NetworkMode::None => LaunchError::Starter { path, reason },
    }
}

/// The starter's liveness pair (plan/starter.rs): one end for the starter,
/// the other for the outer bwrap's `--json-status-fd`, both installed by the
/// spawn; returns the launcher's copy of the starter's end, held until
/// bwrap is reaped (bwrap's status writes never raise SIGPIPE). A
/// socketpair, not a pipe: a pipe's write end could be reopened through
/// `/proc/<bwrap>/fd/N` by a process of bwrap's uid, and keep the starter
/// believing bwrap alive; a socket cannot be opened that way (ENXIO).
fn starter_pair(
    starter: crate::plan::starter::StarterPlan,
    sources: &mut Vec<(RawFd, OwnedFd)>,
) -> std::io::Result<OwnedFd> {
    use nix::sys::socket::{socketpair, AddressFamily, SockFlag, SockType};
    let (alive, status) = socketpair(
        AddressFamily::Unix,
        SockType::Stream,
        None,
        SockFlag::SOCK_CLOEXEC,
    )?;
    let kept = alive.try_clone()?;
    sources.push((starter.alive_slot, alive));
    sources.push((starter.status_slot, status));
    Ok(kept)
}

/// What dead providers left, removed off the caller's thread: their
/// orphaned namespace inits first (orphan_init.rs: each holds a run's
/// namespaces and cgroup, or runs its program unsupervised), then the uid
/// lock files they left (each uid cleared of their processes first:
/// uid_lease.rs), then their stale control roots (a stale root holds
/// whatever a sandbox left, and removing it must not hold up the launch
/// that noticed it).
fn sweep_in_background(base: PathBuf, bwrap: PathBuf) {
    let _ = std::thread::Builder::new()
        .name("cordon-sweep".into())
        .spawn(move || {
            crate::host::orphan_init::sweep(&bwrap);
            if let Ok(dir) = crate::host::uid_lease::lock_dir() {
                let clear = crate::host::uid_lease::clear_per_run_uid;
                crate::host::uid_lease::sweep_stale(&dir, &clear);
            }
            control_root::sweep(&base);
        });
}

/// The holder a non-root session's run enters, checked (namespace_holder.rs).
fn holder_entry(
    request: &LaunchRequest,
    provider_is_root: bool,
    workspace: Option<&Path>,
) -> Result<Option<HolderEntry>, LaunchError> {
    let Some(holder) = request.namespace_holder else {
        return Ok(None);
    };
    if provider_is_root {
        return Err(HolderError::ProviderIsRoot.into());
    }
    let workspace = workspace.ok_or(HolderError::NoWorkspace)?;
    Ok(Some(crate::host::namespace_holder::open(
        holder, workspace,
    )?))
}

/// A holder run's identity: the workspace owner, entered through the
/// holder's user namespace (spawn.rs joins it).
fn holder_identity(entry: &HolderEntry) -> run_identity::RunIdentity {
    run_identity::RunIdentity {
        identity: Some(entry.identity),
        allocation: run_identity::UidAllocation::SubordinateOwner,
        lease: None,
        userns: entry.userns.try_clone().ok(),
        claim_recheck: None,
    }
}

/// Puts the holder's view of the workspace in place of the host path's
/// descriptor (bwrap binds the held tmpfs, not the empty directory under
/// it); returns the mount namespace the child joins. A plan without a
/// workspace bind is refused: the run would not be the session's.
fn bind_held_workspace(
    entry: HolderEntry,
    plan: &Plan,
    sources: &mut [(RawFd, OwnedFd)],
) -> Result<OwnedFd, HolderError> {
    let slot = plan
        .binds
        .iter()
        .find(|b| b.role == BindRole::Workspace)
        .map(|b| b.slot);
    let source = sources
        .iter_mut()
        .find(|(s, _)| Some(*s) == slot)
        .ok_or(HolderError::NoWorkspace)?;
    source.1 = entry.workspace;
    Ok(entry.mntns)
}

fn plan_confinement(
    request: &LaunchRequest,
    invocation_id: &str,
) -> Result<ConfinementPlan, LaunchError> {
    let suffix = random_hex(8).map_err(ControlRootError::Random)?;
    let seccomp = match request.policy.network {
        crate::request::policy::NetworkMode::None => confinement::default_seccomp_program()?,
        crate::request::policy::NetworkMode::Mediated(_) => {
            confinement::mediated_seccomp_program()?
        }
    };
    // A writable default workspace is a bounded tmpfs: nothing reads it
    // after the run, and as a host directory it was unbounded memory.
    let default_writable = request.workspace.is_none()
        && request.policy.workspace == crate::request::policy::Access::Write;
    let workspace = match request.workspace_tmpfs_bytes {
        // A caller's tmpfs charged to the sandbox: /tmp and /dev/shm make room.
        Some(charged) => confinement::WorkspaceMount::ChargedTmpfs(charged),
        None if default_writable => confinement::WorkspaceMount::Tmpfs,
        None => confinement::WorkspaceMount::NotTmpfs,
    };
    Ok(confinement::plan(
        &request.policy.resources,
        workspace,
        &confinement::cgroup_name(invocation_id, &suffix),
        confinement::host_cgroups(),
        seccomp,
    )?)
}

/// A mediated policy's engine, relay and fd-4 channel (network_setup.rs);
/// `None` for `network: {mode: "none"}`.
fn prepare_network(
    request: &LaunchRequest,
    root: &ControlRoot,
    identity: Option<crate::host::process_identity::Identity>,
    invocation_id: &str,
) -> Result<Option<crate::run::network_setup::PreparedNetwork>, LaunchError> {
    let crate::request::policy::NetworkMode::Mediated(network) = &request.policy.network else {
        return Ok(None);
    };
    let labels = crate::run::network_setup::RunLabels {
        invocation_id,
        policy: &request.policy,
        stop: request.stop,
    };
    Ok(Some(crate::run::network_setup::prepare(
        network, root, identity, labels,
    )?))
}

/// A subordinate id cannot be handed the control root (the provider cannot
/// chown to it): bwrap, as that id, must still traverse the root and the
/// egress directory to resolve their binds, and the relay must connect to
/// the engine socket (write permission on the socket file).
fn open_to_subordinate(
    root: &ControlRoot,
    network: Option<&crate::run::network_setup::PreparedNetwork>,
) -> Result<(), LaunchError> {
    use std::os::unix::fs::PermissionsExt;
    let egress = network.map(|n| n.inputs.engine_dir.as_path());
    root.let_sandbox_traverse(egress.as_slice())?;
    if let Some(dir) = egress {
        let socket = dir.join(crate::plan::network_plan::ENGINE_SOCKET);
        std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o666)).map_err(
            |source| ControlRootError::Chmod {
                path: socket,
                source,
            },
        )?;
    }
    Ok(())
}

/// The caller's workspace, none (`workspace: "none"`, or a writable default
/// one, which is a tmpfs), or a fresh empty read-only one in the control root.
fn workspace_for(
    request: &LaunchRequest,
    root: &ControlRoot,
    identity: Option<crate::host::process_identity::Identity>,
) -> Result<Option<PathBuf>, LaunchError> {
    Ok(match (&request.workspace, request.policy.workspace) {
        (Some(ws), _) => Some(ws.clone()),
        (None, crate::request::policy::Access::None | crate::request::policy::Access::Write) => {
            None
        }
        (None, _) => Some(root.create_workspace(identity)?),
    })
}

/// Opens every bind source as root (O_PATH: no read access needed, nothing
/// is followed after this point), in slot order.
fn open_binds(plan: &Plan, control_root: &Path) -> Result<Vec<(RawFd, OwnedFd)>, LaunchError> {
    plan.binds
        .iter()
        .map(|bind| Ok((bind.slot, open_bind(bind, control_root)?)))
        .collect()
}

/// The device and inode of each caller-named host path as opened, for the
/// receipt: what was bound, not only the name it was asked for by.
fn host_binds(plan: &Plan, sources: &[(RawFd, OwnedFd)]) -> Vec<HostBind> {
    plan.binds
        .iter()
        .zip(sources)
        .filter(|(bind, _)| matches!(bind.role, BindRole::Workspace | BindRole::Extra))
        .filter_map(|(bind, (_, fd))| {
            let id = crate::request::host_path::identity(fd).ok()?;
            Some(HostBind {
                source: bind.source.clone(),
                dest: bind.dest.clone(),
                writable: bind.writable,
                device: id.device,
                inode: id.inode,
            })
        })
        .collect()
}

/// One bind source. A caller-named path (the workspace, an extra) is
/// opened component by component without following any symlink
/// (host_path.rs): that descriptor is what bwrap binds. Inside the control
/// root the last component is not followed: when bwrap runs as the sandbox
/// identity, that identity owns the root, and any host process of that uid
/// could swap `workspace/` for a symlink to a directory it cannot reach
/// itself, to have it mounted.
fn open_bind(bind: &FdBind, control_root: &Path) -> Result<OwnedFd, LaunchError> {
    let caller_named = match bind.role {
        BindRole::Extra => true,
        BindRole::Workspace => !bind.source.starts_with(control_root),
        BindRole::Executable | BindRole::Temp | BindRole::EgressEngine | BindRole::Starter => false,
    };
    if caller_named {
        let directory = bind.role == BindRole::Workspace;
        return Ok(crate::request::host_path::open_no_follow(
            &bind.source,
            directory,
        )?);
    }
    let mut flags = libc::O_PATH;
    if matches!(
        bind.role,
        BindRole::Workspace | BindRole::Temp | BindRole::EgressEngine
    ) {
        flags |= libc::O_DIRECTORY;
    }
    if bind.source.starts_with(control_root) {
        flags |= libc::O_NOFOLLOW;
    }
    let file: File = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags)
        .open(&bind.source)
        .map_err(|source| LaunchError::OpenBind {
            path: bind.source.clone(),
            source,
        })?;
    Ok(OwnedFd::from(file))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn workspace_bind(source: PathBuf) -> FdBind {
        FdBind {
            slot: 6,
            role: BindRole::Workspace,
            source,
            dest: "/workspace".into(),
            writable: false,
        }
    }

    #[test]
    fn a_symlink_swapped_in_for_a_control_root_directory_is_not_mounted() {
        let scratch = std::env::temp_dir().join(format!("cordon-bind-{}", random_hex(8).unwrap()));
        let root = scratch.join("root");
        std::fs::create_dir_all(root.join("real")).unwrap();
        std::fs::create_dir_all(scratch.join("elsewhere")).unwrap();
        std::os::unix::fs::symlink(scratch.join("elsewhere"), root.join("workspace")).unwrap();
        assert!(open_bind(&workspace_bind(root.join("real")), &root).is_ok());
        let swapped = open_bind(&workspace_bind(root.join("workspace")), &root);
        assert!(matches!(swapped, Err(LaunchError::OpenBind { .. })));
        let caller_link = open_bind(&workspace_bind(root.join("workspace")), &scratch.join("x"));
        assert!(
            matches!(
                caller_link,
                Err(LaunchError::HostPath(
                    crate::request::host_path::HostPathError::Symlink { .. }
                ))
            ),
            "a caller-named workspace that is a link is refused: {caller_link:?}"
        );
        assert_eq!(
            caller_link.map(drop).unwrap_err().code(),
            ErrorCode::InvalidOptions
        );
        std::fs::remove_dir_all(scratch).unwrap();
    }
}
