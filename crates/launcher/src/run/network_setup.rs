//! Sets up a mediated run's network before the fork (acting; the planning
//! is in network_plan.rs). Steps:
//! 1. the relay binary must exist (launch.rs stages it and binds it: it is
//!    every run's starter, plan/starter.rs);
//! 2. the control root's `egress/` directory (0700, sandbox identity);
//! 3. the run's engine (tasks on one of the egress shards): socket `egress/engine.sock` (0600, chowned to the
//!    sandbox identity so only the relay inside this run can connect), and
//!    the engine end of the fd-4 channel (a seqpacket pair: cordon_egress::fd4_channel).
//!
//! Any failure is `ERR_CORDON_NETWORK_UNAVAILABLE` naming the step: a
//! mediated policy never launches without its frontends.

use std::os::fd::OwnedFd;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cordon_egress::{
    Allowlist, RunEngine, RunEngineConfig, SystemResolver, DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_HANDSHAKE_TIMEOUT,
};

use crate::host::control_root::ControlRoot;
use crate::host::process_identity::Identity;
use crate::plan::network_plan::{NetworkInputs, ENGINE_SOCKET, SANDBOX_PROXY_PORT};
use crate::request::launch_request::StopTimings;
use crate::request::policy::{MediatedNetwork, Policy};

#[derive(Debug, thiserror::Error)]
pub enum NetworkSetupError {
    #[error(
        "policy.network is \"mediated\" but no egress relay was given: pass options.networkRelayPath \
         (index.js and the cordon CLI pass the cordon-egress-relay they ship; reinstall the platform package if it is missing)"
    )]
    NoRelay,
    #[error("the egress relay {path} cannot be used: {reason}")]
    Relay { path: PathBuf, reason: String },
    #[error("cannot create the egress engine directory: {0}")]
    Directory(String),
    #[error("cannot start the run's egress engine: {0}")]
    Engine(#[from] cordon_egress::EngineError),
    #[error("cannot hand the egress engine socket {path} to the sandbox identity: {source}")]
    Chown {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot start the runtime the egress engine runs on: {0}")]
    Runtime(std::io::Error),
    #[error("cannot create the fd-4 egress channel: {0}")]
    Channel(std::io::Error),
    #[error("policy.network.allow: {0}")]
    Allowlist(#[from] cordon_egress::admission::TooManyDestinations),
}

/// What the launch keeps for a mediated run.
pub struct PreparedNetwork {
    pub inputs: NetworkInputs,
    pub engine: RunEngine,
    /// The sandbox's end of the fd-4 pair (installed at the plan's fd4 slot).
    pub fd4_sandbox_end: Option<OwnedFd>,
    /// Where the fd-4 pair was made (`confinement.channels.fd4Namespace`).
    pub fd4_namespace: Option<cordon_passed_fds::ChannelNamespace>,
}

/// Before anything is created on disk: a mediated policy names a relay that
/// is an executable file (staging and binding it come later).
pub fn check_relay(relay: Option<&Path>) -> Result<(), NetworkSetupError> {
    let relay = relay.ok_or(NetworkSetupError::NoRelay)?;
    let meta = std::fs::metadata(relay).map_err(|e| NetworkSetupError::Relay {
        path: relay.to_owned(),
        reason: e.to_string(),
    })?;
    if !meta.is_file() || meta.permissions().mode() & 0o111 == 0 {
        let reason = "not an executable file".to_owned();
        return Err(NetworkSetupError::Relay {
            path: relay.to_owned(),
            reason,
        });
    }
    Ok(())
}

/// Identity of the run, for receipts, and its stop ladder.
pub struct RunLabels<'a> {
    pub invocation_id: &'a str,
    pub policy: &'a Policy,
    pub stop: StopTimings,
}

pub fn prepare(
    network: &MediatedNetwork,
    root: &ControlRoot,
    identity: Option<Identity>,
    labels: RunLabels<'_>,
) -> Result<PreparedNetwork, NetworkSetupError> {
    let engine_dir = root
        .create_egress_dir(identity)
        .map_err(|e| NetworkSetupError::Directory(e.to_string()))?;
    let (fd4_engine, fd4_sandbox, fd4_namespace) = if network.frontend.fd4() {
        // Seqpacket, its sandbox end named: it reaches the engine and nothing
        // else in the provider's network namespace (R15w-6).
        let (engine, sandbox, namespace) =
            cordon_egress::fd4_channel::pair_in().map_err(NetworkSetupError::Channel)?;
        (Some(engine), Some(sandbox), Some(namespace))
    } else {
        (None, None, None)
    };
    let socket_path = engine_dir.join(ENGINE_SOCKET);
    // The engine keeps the sandbox's end open until it finishes (R5N-1).
    let fd4_peer = fd4_sandbox.as_ref().map(OwnedFd::try_clone).transpose();
    let fd4_peer = fd4_peer.map_err(NetworkSetupError::Channel)?;
    let mut engine = RunEngine::start(RunEngineConfig {
        socket_path: socket_path.clone(),
        fd4_channel: fd4_engine,
        // The relay hands over its listener for this port before the program starts.
        proxy_port: network.frontend.proxy().then_some(SANDBOX_PROXY_PORT),
        allowlist: Allowlist::new(network.allow.clone())?,
        quotas: crate::request::network_policy::quotas(labels.policy.resources.network_quotas),
        policy_digest: labels.policy.digest(),
        invocation_id: labels.invocation_id.to_owned(),
        resolver: Arc::new(SystemResolver),
        connect_timeout: DEFAULT_CONNECT_TIMEOUT,
        handshake_timeout: DEFAULT_HANDSHAKE_TIMEOUT,
        teardown_bound: crate::run::stop_ladder::engine_teardown_bound(labels.stop),
        // The engine's listeners and streams are tasks on one of the egress
        // shards, placed by load (engine_runtime.rs): no thread per run or
        // per stream.
        runtime: cordon_egress::engine_runtime::get().map_err(NetworkSetupError::Runtime)?,
    })?;
    if let Some(peer) = fd4_peer {
        engine.hold_fd4_peer(peer);
    }
    if let Some(id) = identity {
        std::os::unix::fs::chown(&socket_path, Some(id.uid), Some(id.gid)).map_err(|source| {
            NetworkSetupError::Chown {
                path: socket_path,
                source,
            }
        })?;
    }
    Ok(PreparedNetwork {
        inputs: NetworkInputs {
            engine_dir,
            frontend: network.frontend,
        },
        engine,
        fd4_sandbox_end: fd4_sandbox,
        fd4_namespace,
    })
}
