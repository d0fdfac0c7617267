//! The launch options, validated strictly before anything is created on
//! disk: as received from JavaScript (one JSON document,
//! [`LaunchRequest::from_json_text`]) or from a Rust caller such as the CLI
//! ([`LaunchOptions`], [`LaunchRequest::new`]) — one set of checks for both.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use serde_json::Value;

use crate::error_code::ErrorCode;
use crate::request::paths::{is_env_name, normalized_absolute};
use crate::request::policy::{Policy, PolicyError};
use crate::request::strict_json::{as_str, FieldError, ObjectReader};

/// Default SIGTERM → SIGKILL window (ms): long enough for a runner to
/// write its terminal frame, short enough that a hung runner is not felt.
pub const STOP_GRACE_MS: u64 = 1000;
/// Default wait after SIGKILL before containment is judged (ms).
pub const STOP_FORCE_MS: u64 = 1000;
/// Upper bound on either stop window (ms): a stop must end.
pub const MAX_STOP_WINDOW_MS: u64 = 600_000;
/// Largest `deadlineMs` (2^31 - 1 ms, ~24.8 days): the bound JavaScript's
/// timers have, so the same value means the same thing on both sides.
pub const MAX_DEADLINE_MS: u64 = (1 << 31) - 1;
/// argv entries beyond this are refused (bounded argv).
pub const MAX_ARGS: usize = 4096;
/// Environment entries beyond this are refused (bounded argv).
pub const MAX_ENV_ENTRIES: usize = 256;
/// Longest accepted invocation id, in bytes.
pub const MAX_INVOCATION_ID_BYTES: usize = 128;

/// How long each rung of the stop ladder waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StopTimings {
    pub grace_ms: u64,
    pub force_ms: u64,
}

/// A validated launch.
#[derive(Debug, Clone)]
pub struct LaunchRequest {
    pub argv: Vec<String>,
    /// `command[0]` with every symlink resolved: what is hashed and bound.
    pub executable: PathBuf,
    /// `command[0]` as given (absolute, normalized): what is exec'd.
    pub invoked_as: PathBuf,
    pub policy: Policy,
    pub invocation_id: Option<String>,
    pub workspace: Option<PathBuf>,
    pub env: Vec<(String, String)>,
    pub stop: StopTimings,
    /// Milliseconds from bwrap's start after which the launcher itself runs
    /// the stop ladder with reason `deadline`; `None`: no deadline.
    pub deadline_ms: Option<u64>,
    pub bwrap_path: Option<PathBuf>,
    /// The in-sandbox egress relay (`cordon-egress-relay`), needed by a
    /// mediated network policy; index.js and the CLI pass their own.
    pub network_relay_path: Option<PathBuf>,
    /// Run inside this holder's user and mount namespaces (a non-root
    /// provider's session; host/namespace_holder.rs).
    pub namespace_holder: Option<HolderRef>,
    /// The caller's workspace is a tmpfs of this many bytes whose pages
    /// count against the sandbox's memory (a session's): the launcher's own
    /// tmpfs mounts make room for it (plan/confinement.rs).
    pub workspace_tmpfs_bytes: Option<u64>,
    /// The workspace is the provider's private directory, handed to this
    /// run's uid alone (host/workspace_grant.rs): the remote host's uploads.
    /// Never read from options JSON: only a Rust caller that made the
    /// directory sets it.
    pub workspace_grant: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    #[error("invalid command: {0}")]
    Command(String),
    #[error("invalid options: {0}")]
    Options(#[from] FieldError),
    #[error(transparent)]
    Policy(#[from] PolicyError),
    #[error("options.json: not valid JSON: {0}")]
    Json(#[from] serde_json::Error),
}

impl RequestError {
    pub fn code(&self) -> ErrorCode {
        match self {
            RequestError::Command(_) => ErrorCode::InvalidCommand,
            RequestError::Options(_) | RequestError::Json(_) => ErrorCode::InvalidOptions,
            RequestError::Policy(p) => p.code(),
        }
    }
}

const KEYS: &[&str] = &[
    "command",
    "policy",
    "invocationId",
    "workspace",
    "env",
    "stop",
    "deadlineMs",
    "bwrapPath",
    "networkRelayPath",
    "namespaceHolder",
    "workspaceTmpfsBytes",
];
const HOLDER_KEYS: &[&str] = &["pid", "startTime"];
const STOP_KEYS: &[&str] = &["graceMs", "forceMs"];
/// Checked before the unknown-key check, so that a caller using it learns
/// why it is refused rather than that it is unknown — but never listed
/// among the keys one may use.
const LAUNCHER_ENV_REFUSED: &str = "is not supported: bwrap's environment is the sandbox init's, \
     readable inside at /proc/1/environ, so nothing could be passed that way unseen; bwrap runs \
     with an empty environment (pass what the program needs in options.env)";

/// A launch as a Rust caller (the CLI) states it: the fields of the JSON
/// options document, typed, with the policy already parsed. Checked by
/// [`LaunchRequest::new`] exactly as the JSON document is, so a typed
/// caller never serialises to JSON text for the launcher to parse back.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LaunchOptions {
    pub command: Vec<String>,
    pub invocation_id: Option<String>,
    /// A host directory: absolute and normalized (checked).
    pub workspace: Option<String>,
    /// The runner's environment; each name must be in `environment.allow`.
    pub env: Vec<(String, String)>,
    pub grace_ms: Option<u64>,
    pub force_ms: Option<u64>,
    /// The launcher's own deadline (ms from bwrap's start), 1..=2^31-1.
    pub deadline_ms: Option<u64>,
    pub bwrap_path: Option<String>,
    pub network_relay_path: Option<String>,
    pub namespace_holder: Option<HolderRef>,
    /// Bytes of the caller's workspace tmpfs charged to the sandbox; needs
    /// `workspace`.
    pub workspace_tmpfs_bytes: Option<u64>,
}

/// A namespace holder as the caller names it (option `namespaceHolder`):
/// its pid and start time (`/proc/<pid>/stat` field 22);
/// host/namespace_holder.rs checks and opens it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HolderRef {
    pub pid: i32,
    pub start_time: u64,
}

/// `namespaceHolder: {pid, startTime}`, both required positive integers.
fn holder_field(value: Option<&Value>) -> Result<Option<HolderRef>, FieldError> {
    let Some(value) = value else { return Ok(None) };
    let path = "options.namespaceHolder";
    let holder = ObjectReader::new(path, value, HOLDER_KEYS)?;
    let pid = holder
        .optional_u64("pid")?
        .and_then(|p| i32::try_from(p).ok())
        .filter(|p| *p > 1);
    let start_time = holder.optional_u64("startTime")?;
    match (pid, start_time) {
        (Some(pid), Some(start_time)) => Ok(Some(HolderRef { pid, start_time })),
        _ => Err(FieldError::new(
            path,
            "must be {pid, startTime}: a process id above 1 and its start time",
        )),
    }
}

impl LaunchRequest {
    /// Validates `{command, policy, …}` in this order: the document's
    /// structure (keys and types), then the option values (command first),
    /// then the policy, then the cross-checks (env names against
    /// `environment.allow`) — the last three as [`LaunchRequest::new`].
    pub fn from_json_text(text: &str) -> Result<LaunchRequest, RequestError> {
        let value: Value = serde_json::from_str(text)?;
        if value.get("launcherEnvironment").is_some() {
            return Err(
                FieldError::new("options.launcherEnvironment", LAUNCHER_ENV_REFUSED).into(),
            );
        }
        let top = ObjectReader::new("options", &value, KEYS)?;
        let command = command_strings(top.optional("command"))?;
        let invocation_id = top.optional_str("invocationId")?.map(String::from);
        let workspace = top.optional_str("workspace")?.map(String::from);
        let env = env_strings("options.env", top.optional("env"))?;
        let (grace_ms, force_ms) = stop_fields(top.optional("stop"))?;
        let deadline_ms = top.optional_u64("deadlineMs")?;
        let bwrap_path = top.optional_str("bwrapPath")?.map(String::from);
        let network_relay_path = top.optional_str("networkRelayPath")?.map(String::from);
        let namespace_holder = holder_field(top.optional("namespaceHolder"))?;
        let workspace_tmpfs_bytes = top.optional_u64("workspaceTmpfsBytes")?;
        let checked = LaunchOptions {
            command,
            invocation_id,
            workspace,
            env,
            grace_ms,
            force_ms,
            deadline_ms,
            bwrap_path,
            network_relay_path,
            namespace_holder,
            workspace_tmpfs_bytes,
        }
        .check()?;
        let policy_value = top.optional("policy").ok_or_else(|| {
            let presets = crate::request::presets::NAMES.join(", ");
            let why = format!("is required: a preset ({presets}) or a policy object");
            PolicyError::Invalid(FieldError::new("policy", why))
        })?;
        checked.with_policy(Policy::from_json(policy_value)?)
    }

    /// Validates typed options and a parsed policy the same way as
    /// [`LaunchRequest::from_json_text`] validates the JSON document.
    pub fn new(options: LaunchOptions, policy: Policy) -> Result<LaunchRequest, RequestError> {
        options.check()?.with_policy(policy)
    }
}

/// The option values, checked; waiting for the policy and its cross-checks
/// ([`CheckedOptions::with_policy`]).
#[derive(Debug)]
pub struct CheckedOptions {
    argv: Vec<String>,
    executable: PathBuf,
    invoked_as: PathBuf,
    invocation_id: Option<String>,
    workspace: Option<PathBuf>,
    env: Vec<(String, String)>,
    stop: StopTimings,
    deadline_ms: Option<u64>,
    bwrap_path: Option<PathBuf>,
    network_relay_path: Option<PathBuf>,
    namespace_holder: Option<HolderRef>,
    workspace_tmpfs_bytes: Option<u64>,
}

impl LaunchOptions {
    /// The values, command first (the JSON document's order: check these
    /// before parsing the policy, so that both report the same first error).
    pub fn check(self) -> Result<CheckedOptions, RequestError> {
        let (argv, invoked_as, executable) = check_command(self.command)?;
        let invocation_id = self.invocation_id.as_deref().map(check_id).transpose()?;
        let workspace = self
            .workspace
            .as_deref()
            .map(|w| absolute_dir("options.workspace", w))
            .transpose()?;
        let env = check_env("options.env", self.env)?;
        let stop = check_stop(self.grace_ms, self.force_ms)?;
        let deadline_ms = self.deadline_ms.map(check_deadline).transpose()?;
        if self.workspace_tmpfs_bytes.is_some() && workspace.is_none() {
            return Err(FieldError::new(
                "options.workspaceTmpfsBytes",
                "needs options.workspace: it sizes the caller's workspace tmpfs",
            )
            .into());
        }
        let path = |field: &str, value: Option<String>| {
            value
                .map(|p| normalized_absolute(&p).map_err(|r| FieldError::new(field, r)))
                .transpose()
        };
        Ok(CheckedOptions {
            argv,
            executable,
            invoked_as,
            invocation_id,
            workspace,
            env,
            stop,
            deadline_ms,
            bwrap_path: path("options.bwrapPath", self.bwrap_path)?,
            network_relay_path: path("options.networkRelayPath", self.network_relay_path)?,
            namespace_holder: self.namespace_holder,
            workspace_tmpfs_bytes: self.workspace_tmpfs_bytes,
        })
    }
}

impl CheckedOptions {
    /// The cross-checks: env names against `environment.allow`, no
    /// workspace under `workspace: "none"`.
    pub fn with_policy(self, policy: Policy) -> Result<LaunchRequest, RequestError> {
        if let Some((name, _)) = self
            .env
            .iter()
            .find(|(name, _)| !policy.environment_allow.contains(name))
        {
            return Err(FieldError::new(
                &format!("options.env.{name}"),
                "is not listed in policy.environment.allow",
            )
            .into());
        }
        if policy.workspace == crate::request::policy::Access::None && self.workspace.is_some() {
            return Err(FieldError::new(
                "options.workspace",
                "must be absent when policy.filesystem.workspace is \"none\"",
            )
            .into());
        }
        Ok(LaunchRequest {
            argv: self.argv,
            executable: self.executable,
            invoked_as: self.invoked_as,
            policy,
            invocation_id: self.invocation_id,
            workspace: self.workspace,
            env: self.env,
            stop: self.stop,
            deadline_ms: self.deadline_ms,
            bwrap_path: self.bwrap_path,
            network_relay_path: self.network_relay_path,
            namespace_holder: self.namespace_holder,
            workspace_tmpfs_bytes: self.workspace_tmpfs_bytes,
            workspace_grant: false,
        })
    }
}

/// `command` as strings (its structure); [`check_command`] checks the values.
fn command_strings(value: Option<&Value>) -> Result<Vec<String>, RequestError> {
    let bad = |why: &str| RequestError::Command(why.to_string());
    let list = value
        .and_then(Value::as_array)
        .ok_or_else(|| bad("command must be a non-empty array of strings"))?;
    list.iter()
        .enumerate()
        .map(|(i, item)| {
            as_str(&format!("command[{i}]"), item)
                .map(String::from)
                .map_err(|e| bad(&e.to_string()))
        })
        .collect()
}

/// Returns (argv, command[0] as given, command[0] canonicalized).
fn check_command(argv: Vec<String>) -> Result<(Vec<String>, PathBuf, PathBuf), RequestError> {
    let bad = |why: &str| RequestError::Command(why.to_string());
    if argv.is_empty() || argv.len() > MAX_ARGS {
        return Err(bad(&format!("command must hold 1 to {MAX_ARGS} strings")));
    }
    if let Some(i) = argv.iter().position(|arg| arg.contains('\0')) {
        return Err(bad(&format!("command[{i}] must not contain NUL bytes")));
    }
    let invoked_as = normalized_absolute(&argv[0])
        .map_err(|r| bad(&format!("command[0] {r} (no $PATH lookup is done)")))?;
    if argv[0].contains('=') {
        // It follows `env -i NAME=VALUE…` in the sandbox argv.
        return Err(bad("command[0] must not contain '='"));
    }
    let executable = std::fs::canonicalize(&invoked_as)
        .map_err(|e| bad(&format!("command[0] {}: {e}", invoked_as.display())))?;
    let meta = std::fs::metadata(&executable)
        .map_err(|e| bad(&format!("command[0] {}: {e}", executable.display())))?;
    if !meta.is_file() || meta.permissions().mode() & 0o111 == 0 {
        return Err(bad(&format!(
            "command[0] {} is not an executable regular file",
            executable.display()
        )));
    }
    Ok((argv, invoked_as, executable))
}

fn check_id(id: &str) -> Result<String, FieldError> {
    let ok = !id.is_empty()
        && id.len() <= MAX_INVOCATION_ID_BYTES
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._:-".contains(c));
    if !ok {
        return Err(FieldError::new(
            "options.invocationId",
            format!("must be 1-{MAX_INVOCATION_ID_BYTES} characters of [A-Za-z0-9._:-]"),
        ));
    }
    Ok(id.to_string())
}

fn check_deadline(ms: u64) -> Result<u64, FieldError> {
    if !(1..=MAX_DEADLINE_MS).contains(&ms) {
        return Err(FieldError::new(
            "options.deadlineMs",
            format!("must be an integer from 1 to {MAX_DEADLINE_MS}"),
        ));
    }
    Ok(ms)
}

fn absolute_dir(path: &str, text: &str) -> Result<PathBuf, FieldError> {
    let dir = normalized_absolute(text).map_err(|r| FieldError::new(path, r))?;
    match std::fs::metadata(&dir) {
        // The bind opens the path again the same way (launch.rs); this is
        // the early, coded refusal before anything exists on disk.
        Ok(m) if m.is_dir() => match crate::request::host_path::open_no_follow(&dir, true) {
            Ok(_) => Ok(dir),
            Err(e) => Err(FieldError::new(path, e.to_string())),
        },
        Ok(_) => Err(FieldError::new(path, "is not a directory")),
        Err(e) => Err(FieldError::new(path, format!("{}: {e}", dir.display()))),
    }
}

/// `env` as name/value strings (its structure); [`check_env`] checks them.
fn env_strings(path: &str, value: Option<&Value>) -> Result<Vec<(String, String)>, FieldError> {
    let Some(value) = value else {
        return Ok(Vec::new());
    };
    let map = value
        .as_object()
        .ok_or_else(|| FieldError::new(path, "must be a plain object of strings"))?;
    map.iter()
        .map(|(name, v)| {
            Ok((
                name.clone(),
                as_str(&format!("{path}.{name}"), v)?.to_string(),
            ))
        })
        .collect()
}

/// Sorted by name, as a JSON object's keys come out (so both ways to state
/// a launch give the same argv); a name given twice is refused.
fn check_env(
    path: &str,
    mut env: Vec<(String, String)>,
) -> Result<Vec<(String, String)>, FieldError> {
    if env.len() > MAX_ENV_ENTRIES {
        return Err(FieldError::new(
            path,
            format!("at most {MAX_ENV_ENTRIES} entries"),
        ));
    }
    env.sort_by(|a, b| a.0.cmp(&b.0));
    for (i, (name, value)) in env.iter().enumerate() {
        let item = format!("{path}.{name}");
        if !is_env_name(name) {
            return Err(FieldError::new(&item, "is not a valid variable name"));
        }
        if i > 0 && env[i - 1].0 == *name {
            return Err(FieldError::new(&item, "is given twice"));
        }
        if value.contains('\0') {
            // Would be cut at the NUL by exec, or split bwrap's `--args`.
            return Err(FieldError::new(&item, "must not contain NUL bytes"));
        }
    }
    Ok(env)
}

/// `stop` as `(graceMs, forceMs)` (its structure); [`check_stop`] bounds them.
fn stop_fields(value: Option<&Value>) -> Result<(Option<u64>, Option<u64>), FieldError> {
    let Some(value) = value else {
        return Ok((None, None));
    };
    let stop = ObjectReader::new("options.stop", value, STOP_KEYS)?;
    Ok((stop.optional_u64("graceMs")?, stop.optional_u64("forceMs")?))
}

fn check_stop(grace_ms: Option<u64>, force_ms: Option<u64>) -> Result<StopTimings, FieldError> {
    for (key, ms) in [("graceMs", grace_ms), ("forceMs", force_ms)] {
        if ms.is_some_and(|ms| ms > MAX_STOP_WINDOW_MS) {
            return Err(FieldError::new(
                &format!("options.stop.{key}"),
                format!("must be at most {MAX_STOP_WINDOW_MS}"),
            ));
        }
    }
    Ok(StopTimings {
        grace_ms: grace_ms.unwrap_or(STOP_GRACE_MS),
        force_ms: force_ms.unwrap_or(STOP_FORCE_MS),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn options(env: Value, command: Value) -> String {
        serde_json::json!({
            "command": command,
            "policy": {"formatVersion": 1, "filesystem": {"workspace": "read", "temp": "write"},
                "network": {"mode": "none"}, "process": {"treeConfinement": "required"},
                "environment": {"allow": ["A"]}},
            "env": env,
        })
        .to_string()
    }

    #[test]
    fn an_unknown_key_lists_the_usable_keys_and_not_the_refused_launcher_environment() {
        let doc = |extra: serde_json::Value| {
            let mut doc = serde_json::json!({"command": ["/bin/sh"], "policy": "read-only"});
            doc.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            LaunchRequest::from_json_text(&doc.to_string())
                .unwrap_err()
                .to_string()
        };
        let unknown = doc(serde_json::json!({"polcy": 1}));
        assert!(
            unknown.contains("options.polcy: unknown key (allowed: command, policy,"),
            "{unknown}"
        );
        assert!(!unknown.contains("launcherEnvironment"), "{unknown}");
        let refused = doc(serde_json::json!({"launcherEnvironment": {}}));
        assert!(
            refused.contains("options.launcherEnvironment: is not supported"),
            "{refused}"
        );
    }

    #[test]
    fn nul_bytes_in_env_values_or_arguments_are_invalid_input() {
        let ok = LaunchRequest::from_json_text(&options(
            serde_json::json!({"A": "x"}),
            serde_json::json!(["/bin/sh"]),
        ));
        assert!(ok.is_ok(), "{ok:?}");
        let env = LaunchRequest::from_json_text(&options(
            serde_json::json!({"A": "x\u{0}--bind\u{0}/\u{0}/h"}),
            serde_json::json!(["/bin/sh"]),
        ))
        .unwrap_err();
        assert_eq!(env.code(), ErrorCode::InvalidOptions);
        assert!(env.to_string().contains("options.env.A"), "{env}");
        let arg = LaunchRequest::from_json_text(&options(
            serde_json::json!({}),
            serde_json::json!(["/bin/sh", "a\u{0}b"]),
        ))
        .unwrap_err();
        assert_eq!(arg.code(), ErrorCode::InvalidCommand);
    }

    #[test]
    fn typed_options_are_checked_exactly_as_the_json_document() {
        let policy_json = serde_json::json!({"formatVersion": 1,
            "filesystem": {"workspace": "read", "temp": "write"},
            "network": {"mode": "none"}, "process": {"treeConfinement": "required"},
            "environment": {"allow": ["A", "B"]}});
        let policy = Policy::from_json(&policy_json).unwrap();
        let typed = |env: Vec<(&str, &str)>, grace_ms| {
            LaunchRequest::new(
                LaunchOptions {
                    command: vec!["/bin/sh".into(), "-c".into(), "true".into()],
                    env: env
                        .into_iter()
                        .map(|(n, v)| (n.to_string(), v.to_string()))
                        .collect(),
                    grace_ms,
                    bwrap_path: Some("/usr/bin/bwrap".into()),
                    ..LaunchOptions::default()
                },
                policy.clone(),
            )
        };
        let json = |env: Value, grace_ms: u64| {
            LaunchRequest::from_json_text(
                &serde_json::json!({"command": ["/bin/sh", "-c", "true"], "policy": policy_json,
                    "env": env, "stop": {"graceMs": grace_ms}, "bwrapPath": "/usr/bin/bwrap"})
                .to_string(),
            )
        };
        let from_typed = typed(vec![("B", "2"), ("A", "1")], Some(5)).unwrap();
        let from_json = json(serde_json::json!({"B": "2", "A": "1"}), 5).unwrap();
        assert_eq!(format!("{from_typed:?}"), format!("{from_json:?}"));
        assert_eq!(from_typed.env[0].0, "A", "sorted by name, as JSON keys are");
        // The same refusals, with the same codes and paths.
        for (env, grace) in [
            (vec![("1BAD", "x")], 5),
            (vec![("C", "x")], 5),
            (vec![("A", "x\u{0}y")], 5),
            (vec![], 600_001),
        ] {
            let a = typed(env.clone(), Some(grace)).unwrap_err();
            let map: serde_json::Map<String, Value> = env
                .iter()
                .map(|(n, v)| (n.to_string(), Value::from(*v)))
                .collect();
            let b = json(Value::Object(map), grace).unwrap_err();
            assert_eq!((a.code(), a.to_string()), (b.code(), b.to_string()));
        }
        // Only a typed caller can name a variable twice: refused, not last-wins.
        let twice = typed(vec![("A", "1"), ("A", "2")], None).unwrap_err();
        assert_eq!(twice.code(), ErrorCode::InvalidOptions);
        assert!(
            twice.to_string().contains("options.env.A: is given twice"),
            "{twice}"
        );
    }

    fn with_deadline(deadline: Value) -> Result<LaunchRequest, RequestError> {
        let mut value: Value = serde_json::from_str(&options(
            serde_json::json!({}),
            serde_json::json!(["/bin/sh"]),
        ))
        .unwrap();
        value["deadlineMs"] = deadline;
        LaunchRequest::from_json_text(&value.to_string())
    }

    #[test]
    fn deadline_ms_is_an_integer_from_1_to_2_pow_31_minus_1() {
        assert_eq!(
            with_deadline(serde_json::json!(1)).unwrap().deadline_ms,
            Some(1)
        );
        let max = with_deadline(serde_json::json!(MAX_DEADLINE_MS)).unwrap();
        assert_eq!(max.deadline_ms, Some(2_147_483_647));
        let none = LaunchRequest::from_json_text(&options(
            serde_json::json!({}),
            serde_json::json!(["/bin/sh"]),
        ));
        assert_eq!(none.unwrap().deadline_ms, None);
        for bad in [
            serde_json::json!(0),
            serde_json::json!(-5),
            serde_json::json!(2_147_483_648_u64),
            serde_json::json!(1.5),
            serde_json::json!("100"),
        ] {
            let e = with_deadline(bad.clone()).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidOptions, "{bad}: {e}");
            assert!(e.to_string().contains("options.deadlineMs"), "{bad}: {e}");
        }
    }

    #[test]
    fn a_namespace_holder_is_a_pid_above_one_and_its_start_time() {
        let with = |holder: Value| {
            let mut doc: Value = serde_json::from_str(&options(
                serde_json::json!({}),
                serde_json::json!(["/bin/sh"]),
            ))
            .unwrap();
            doc["namespaceHolder"] = holder;
            LaunchRequest::from_json_text(&doc.to_string())
        };
        let ok = with(serde_json::json!({"pid": 4242, "startTime": 99})).unwrap();
        assert_eq!(
            ok.namespace_holder,
            Some(HolderRef {
                pid: 4242,
                start_time: 99
            })
        );
        for bad in [
            serde_json::json!({"pid": 1, "startTime": 99}),
            serde_json::json!({"pid": 4242}),
            serde_json::json!({"pid": 4242, "startTime": 9, "uid": 0}),
            serde_json::json!(4242),
        ] {
            let e = with(bad.clone()).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidOptions, "{bad}: {e}");
            assert!(
                e.to_string().contains("options.namespaceHolder"),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn workspace_tmpfs_bytes_sizes_a_given_workspace_only() {
        let with = |workspace: Option<&str>, bytes: Value| {
            let mut doc: Value = serde_json::from_str(&options(
                serde_json::json!({}),
                serde_json::json!(["/bin/sh"]),
            ))
            .unwrap();
            if let Some(w) = workspace {
                doc["workspace"] = w.into();
            }
            doc["workspaceTmpfsBytes"] = bytes;
            LaunchRequest::from_json_text(&doc.to_string())
        };
        let dir = std::env::temp_dir();
        let dir = dir.to_str().unwrap();
        let ok = with(Some(dir), serde_json::json!(1 << 20)).unwrap();
        assert_eq!(ok.workspace_tmpfs_bytes, Some(1 << 20));
        let alone = with(None, serde_json::json!(1 << 20)).unwrap_err();
        assert_eq!(alone.code(), ErrorCode::InvalidOptions);
        assert!(
            alone.to_string().contains("needs options.workspace"),
            "{alone}"
        );
        for bad in [
            serde_json::json!(-1),
            serde_json::json!("1"),
            serde_json::json!(1.5),
        ] {
            let e = with(Some(dir), bad.clone()).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidOptions, "{bad}: {e}");
        }
    }
}
