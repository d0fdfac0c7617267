//! `spawn` → a launch request: the wire names a program (never a path);
//! `options` holds only what names no host resource; the launcher's own
//! validation (`LaunchRequest::from_json_text`) decides the rest, then the
//! host's configuration adds what touches the host (extra binds, bwrap,
//! the relay) and clamps to its ceilings. Every clamp is reported.

use cordon_launcher::request::launch_request::{LaunchRequest, RequestError};
use cordon_launcher::request::network_policy::NetworkMode;
use cordon_launcher::request::policy::IdentityMode;
use cordon_launcher::request::strict_json::{FieldError, ObjectReader};
use cordon_launcher::ErrorCode;
use serde_json::{json, Map, Value};

use super::config::Config;

const SPAWN_KEYS: &[&str] = &["program", "args", "options"];
/// `spawn.options`: the subset of spawnIsolated's options naming nothing
/// of the host (docs/remote.md § spawn.options).
const OPTION_KEYS: &[&str] = &["policy", "invocationId", "env", "deadlineMs", "stop"];

/// Why a spawn was refused, with the code `refused` carries.
#[derive(Debug)]
pub struct SpawnRefusal {
    pub code: ErrorCode,
    pub message: String,
}

impl From<RequestError> for SpawnRefusal {
    fn from(e: RequestError) -> Self {
        SpawnRefusal {
            code: e.code(),
            message: e.to_string(),
        }
    }
}

impl From<FieldError> for SpawnRefusal {
    fn from(e: FieldError) -> Self {
        RequestError::from(e).into()
    }
}

/// A validated, clamped request and the clamps (`started.clamped`).
#[derive(Debug)]
pub struct Spawn {
    pub request: LaunchRequest,
    pub clamped: Map<String, Value>,
}

/// Builds the launch for `spawn` with `workspace` (the uploads' directory,
/// or none) from the host's `config`.
pub fn build(
    frame: &Value,
    workspace: Option<&str>,
    config: &Config,
) -> Result<Spawn, SpawnRefusal> {
    let top = ObjectReader::new("spawn", frame, SPAWN_KEYS)?;
    let program = top.required_str("program")?;
    let path = config.programs.get(program).ok_or_else(|| {
        FieldError::new(
            "spawn.program",
            format!("{program:?} is not one of this host's programs"),
        )
    })?;
    let args = match top.optional("args") {
        Some(Value::Array(args)) => args.clone(),
        Some(_) => return Err(FieldError::new("spawn.args", "must be an array of strings").into()),
        None => Vec::new(),
    };
    let empty = Value::Object(Map::new());
    let options = ObjectReader::new(
        "spawn.options",
        top.optional("options").unwrap_or(&empty),
        OPTION_KEYS,
    )?;
    if let Some(extra) = options
        .optional("policy")
        .and_then(|p| p.get("filesystem"))
        .and_then(|f| f.get("extra"))
    {
        if extra.as_array().is_none_or(|a| !a.is_empty()) {
            return Err(SpawnRefusal {
                code: ErrorCode::Unsupported,
                message: "spawn.options.policy.filesystem.extra is refused: extra binds come \
                          from the host's configuration only"
                    .into(),
            });
        }
    }
    let mut document = Map::new();
    let mut command = vec![Value::String(path.clone())];
    command.extend(args);
    document.insert("command".into(), Value::Array(command));
    for key in OPTION_KEYS {
        if let Some(value) = options.optional(key) {
            document.insert((*key).into(), value.clone());
        }
    }
    let host_paths = [
        ("workspace", workspace.map(str::to_string)),
        ("bwrapPath", config.bwrap_path.clone()),
        // Every run's starter (the shipped relay unless the config names one).
        (
            "networkRelayPath",
            config.network_relay_path.clone().or_else(|| {
                crate::run_args::default_relay().map(|p| p.to_string_lossy().into_owned())
            }),
        ),
    ];
    for (key, value) in host_paths {
        if let Some(value) = value {
            document.insert(key.into(), Value::String(value));
        }
    }
    let mut request = LaunchRequest::from_json_text(&Value::Object(document).to_string())?;
    // The uploads' directory is the host's, 0700: the launcher opens it to
    // the run's uid alone (R12-1: its path is in every sandbox process's
    // mountinfo, which any local user reads).
    request.workspace_grant = workspace.is_some();
    refuse_host_reach(&request)?;
    request.policy.extra.extend(config.extra.iter().cloned());
    let clamped = clamp(&mut request, config);
    Ok(Spawn { request, clamped })
}

/// What a remote tenant may not choose, because it reaches the host itself
/// rather than the sandbox (white-box round 6, not demonstrated there, closed
/// here): `process.identity: "shared-with-provider"` would run the sandbox
/// as a non-root host's own uid, which owns `stateDir`, the receipts and the
/// keys; `allowPrivateAddresses` would let a sandbox reach the host's
/// loopback and private networks through the engine.
fn refuse_host_reach(request: &LaunchRequest) -> Result<(), SpawnRefusal> {
    let refuse = |what: &str| SpawnRefusal {
        code: ErrorCode::Unsupported,
        message: format!("spawn.options.policy: {what} is refused on a remote host"),
    };
    if request.policy.identity != IdentityMode::Own {
        return Err(refuse("process.identity \"shared-with-provider\""));
    }
    if let NetworkMode::Mediated(mediated) = &request.policy.network {
        if mediated.allow.iter().any(|d| d.allow_private_addresses) {
            return Err(refuse("network.allow[].allowPrivateAddresses"));
        }
    }
    Ok(())
}

/// Lowers each value above its ceiling (an absent value counts as what the
/// launcher would apply for it) and reports `{field: {requested, applied}}`.
fn clamp(request: &mut LaunchRequest, config: &Config) -> Map<String, Value> {
    let ceilings = &config.ceilings;
    let applied = cordon_launcher::plan::confinement::ceilings(&request.policy.resources);
    let mut clamped = Map::new();
    let mut apply = |field: &str, value: &mut Option<u64>, default: Option<u64>, ceiling: u64| {
        if value.or(default).is_none_or(|v| v > ceiling) {
            clamped.insert(
                field.into(),
                json!({"requested": *value, "applied": ceiling}),
            );
            *value = Some(ceiling);
        }
    };
    apply(
        "deadlineMs",
        &mut request.deadline_ms,
        None,
        ceilings.deadline_ms,
    );
    // The stop ladder's windows extend a deadline and a disconnect: a run
    // must not outlive the host's ceilings by the client's choice.
    let stop = &mut request.stop;
    for (field, value) in [
        ("stop.graceMs", &mut stop.grace_ms),
        ("stop.forceMs", &mut stop.force_ms),
    ] {
        let mut wrapped = Some(*value);
        apply(field, &mut wrapped, None, ceilings.stop_ms);
        *value = wrapped.unwrap_or(ceilings.stop_ms);
    }
    let resources = &mut request.policy.resources;
    apply(
        "memoryBytes",
        &mut resources.memory_bytes,
        Some(applied.address_space_bytes),
        ceilings.memory_bytes,
    );
    apply(
        "processes",
        &mut resources.processes,
        Some(applied.processes),
        ceilings.processes,
    );
    let limits = [
        (
            "openFiles",
            &mut resources.open_files,
            applied.open_files,
            ceilings.open_files,
        ),
        (
            "cpuSeconds",
            &mut resources.cpu_seconds,
            applied.cpu_seconds,
            ceilings.cpu_seconds,
        ),
        (
            "fileSizeBytes",
            &mut resources.file_size_bytes,
            applied.file_size_bytes,
            ceilings.file_size_bytes,
        ),
    ];
    for (field, value, default, ceiling) in limits {
        apply(field, value, Some(default), ceiling);
    }
    // Every run has the engine's quotas (a run without mediation never uses
    // them): an absent one counts as the engine's default.
    let defaults = super::config_sections::network_defaults();
    let keys = cordon_launcher::request::network_policy::QUOTA_KEYS;
    for (i, value) in resources.network_quotas.iter_mut().enumerate() {
        apply(keys[i], value, Some(defaults[i]), ceilings.network[i]);
    }
    clamped
}
