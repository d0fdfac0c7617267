//! The launch options as received from JavaScript (one JSON document),
//! validated strictly before anything is created on disk.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use serde_json::Value;

use crate::error_code::ErrorCode;
use crate::paths::{is_env_name, normalized_absolute};
use crate::policy::{Policy, PolicyError};
use crate::strict_json::{as_str, FieldError, ObjectReader};

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
    "launcherEnvironment",
    "stop",
    "deadlineMs",
    "bwrapPath",
    "networkRelayPath",
];
const STOP_KEYS: &[&str] = &["graceMs", "forceMs"];
/// Still a known key, so that a caller using it learns why it is refused
/// rather than that it is unknown.
const LAUNCHER_ENV_REFUSED: &str = "is not supported: bwrap's environment is the sandbox init's, \
     readable inside at /proc/1/environ, so nothing could be passed that way unseen; bwrap runs \
     with an empty environment (pass what the program needs in options.env)";

impl LaunchRequest {
    /// Validates `{command, policy, …}` in this order: command, options,
    /// policy, then the cross-checks (env names against `environment.allow`).
    pub fn from_json_text(text: &str) -> Result<LaunchRequest, RequestError> {
        let value: Value = serde_json::from_str(text)?;
        let top = ObjectReader::new("options", &value, KEYS)?;
        let (argv, invoked_as, executable) = parse_command(top.optional("command"))?;
        let invocation_id = top
            .optional_str("invocationId")?
            .map(check_id)
            .transpose()?;
        let workspace = top
            .optional_str("workspace")?
            .map(|w| absolute_dir("options.workspace", w))
            .transpose()?;
        let env = parse_env("options.env", top.optional("env"))?;
        if top.optional("launcherEnvironment").is_some() {
            return Err(
                FieldError::new("options.launcherEnvironment", LAUNCHER_ENV_REFUSED).into(),
            );
        }
        let stop = parse_stop(top.optional("stop"))?;
        let deadline_ms = top
            .optional_u64("deadlineMs")?
            .map(check_deadline)
            .transpose()?;
        let bwrap_path = top
            .optional_str("bwrapPath")?
            .map(|p| normalized_absolute(p).map_err(|r| FieldError::new("options.bwrapPath", r)))
            .transpose()?;
        let network_relay_path = top
            .optional_str("networkRelayPath")?
            .map(|p| {
                normalized_absolute(p).map_err(|r| FieldError::new("options.networkRelayPath", r))
            })
            .transpose()?;
        let policy_value = top
            .optional("policy")
            .ok_or_else(|| PolicyError::Invalid(FieldError::new("policy", "is required")))?;
        let policy = Policy::from_json(policy_value)?;
        if let Some((name, _)) = env
            .iter()
            .find(|(name, _)| !policy.environment_allow.contains(name))
        {
            return Err(FieldError::new(
                &format!("options.env.{name}"),
                "is not listed in policy.environment.allow",
            )
            .into());
        }
        if policy.workspace == crate::policy::Access::None && workspace.is_some() {
            return Err(FieldError::new(
                "options.workspace",
                "must be absent when policy.filesystem.workspace is \"none\"",
            )
            .into());
        }
        Ok(LaunchRequest {
            argv,
            executable,
            invoked_as,
            policy,
            invocation_id,
            workspace,
            env,
            stop,
            deadline_ms,
            bwrap_path,
            network_relay_path,
        })
    }
}

/// Returns (argv, command[0] as given, command[0] canonicalized).
fn parse_command(value: Option<&Value>) -> Result<(Vec<String>, PathBuf, PathBuf), RequestError> {
    let bad = |why: &str| RequestError::Command(why.to_string());
    let list = value
        .and_then(Value::as_array)
        .ok_or_else(|| bad("command must be a non-empty array of strings"))?;
    if list.is_empty() || list.len() > MAX_ARGS {
        return Err(bad(&format!("command must hold 1 to {MAX_ARGS} strings")));
    }
    let mut argv = Vec::with_capacity(list.len());
    for (i, item) in list.iter().enumerate() {
        let text = as_str(&format!("command[{i}]"), item).map_err(|e| bad(&e.to_string()))?;
        if text.contains('\0') {
            return Err(bad(&format!("command[{i}] must not contain NUL bytes")));
        }
        argv.push(text.to_string());
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
        Ok(m) if m.is_dir() => match crate::host_path::open_no_follow(&dir, true) {
            Ok(_) => Ok(dir),
            Err(e) => Err(FieldError::new(path, e.to_string())),
        },
        Ok(_) => Err(FieldError::new(path, "is not a directory")),
        Err(e) => Err(FieldError::new(path, format!("{}: {e}", dir.display()))),
    }
}

fn parse_env(path: &str, value: Option<&Value>) -> Result<Vec<(String, String)>, FieldError> {
    let Some(value) = value else {
        return Ok(Vec::new());
    };
    let map = value
        .as_object()
        .ok_or_else(|| FieldError::new(path, "must be a plain object of strings"))?;
    if map.len() > MAX_ENV_ENTRIES {
        return Err(FieldError::new(
            path,
            format!("at most {MAX_ENV_ENTRIES} entries"),
        ));
    }
    let mut out = Vec::with_capacity(map.len());
    for (name, v) in map {
        let item = format!("{path}.{name}");
        if !is_env_name(name) {
            return Err(FieldError::new(&item, "is not a valid variable name"));
        }
        let value = as_str(&item, v)?;
        if value.contains('\0') {
            // Would be cut at the NUL by exec, or split bwrap's `--args`.
            return Err(FieldError::new(&item, "must not contain NUL bytes"));
        }
        out.push((name.clone(), value.to_string()));
    }
    Ok(out)
}

fn parse_stop(value: Option<&Value>) -> Result<StopTimings, FieldError> {
    let mut timings = StopTimings {
        grace_ms: STOP_GRACE_MS,
        force_ms: STOP_FORCE_MS,
    };
    let Some(value) = value else {
        return Ok(timings);
    };
    let stop = ObjectReader::new("options.stop", value, STOP_KEYS)?;
    for (key, slot) in [
        ("graceMs", &mut timings.grace_ms),
        ("forceMs", &mut timings.force_ms),
    ] {
        if let Some(ms) = stop.optional_u64(key)? {
            if ms > MAX_STOP_WINDOW_MS {
                return Err(FieldError::new(
                    &stop.child_path(key),
                    format!("must be at most {MAX_STOP_WINDOW_MS}"),
                ));
            }
            *slot = ms;
        }
    }
    Ok(timings)
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
}
