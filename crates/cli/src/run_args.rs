//! `cordon run` arguments → the launcher's options document (pure).
//!
//! `cordon run [--policy read-only|workspace-write|untrusted|FILE]
//! [--workspace DIR] [--receipt FILE] [--grace-ms N] [--force-ms N]
//! [--deadline-ms N] [--bwrap PATH] [--env NAME=VALUE]… [--allow HOST:PORT]… [--allow-private HOST:PORT]…
//! [--] /abs/program args…`

use std::path::PathBuf;

use serde_json::{json, Map, Value};

use crate::policy_arg::PolicyArg;

/// What `cordon run` was asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunArgs {
    pub policy: PolicyArg,
    pub workspace: Option<PathBuf>,
    pub receipt: Option<PathBuf>,
    pub grace_ms: Option<u64>,
    pub force_ms: Option<u64>,
    /// `--deadline-ms N`: the launcher stops the run after N ms (reason
    /// `deadline`; the launcher checks 1..=2^31-1).
    pub deadline_ms: Option<u64>,
    /// An explicit, trusted bwrap; default: the launcher's fixed locations.
    pub bwrap: Option<String>,
    /// `--env NAME=VALUE`, repeatable, in order (the launcher refuses names
    /// the policy does not allow; a preset allows exactly these).
    pub env: Vec<(String, String)>,
    /// `--allow HOST:PORT` / `--allow-private HOST:PORT`, repeatable: with a
    /// preset, the mediated network's destinations (the second form admits
    /// loopback and private addresses for that destination).
    pub allow: Vec<AllowArg>,
    pub command: Vec<String>,
}

/// One `--allow` / `--allow-private` destination, as typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowArg {
    pub destination: String,
    pub allow_private_addresses: bool,
}

/// A command-line mistake: nothing was launched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Every option of `cordon run`; each takes one value.
const OPTIONS: &[&str] = &[
    "--policy",
    "--workspace",
    "--receipt",
    "--grace-ms",
    "--force-ms",
    "--deadline-ms",
    "--bwrap",
    "--env",
    "--allow",
    "--allow-private",
];

fn usage(message: impl Into<String>) -> UsageError {
    UsageError(message.into())
}

/// Parses everything after `run`. The first argument that is not an option
/// (or everything after `--`) is the command.
pub fn parse(args: &[String]) -> Result<RunArgs, UsageError> {
    let mut out = RunArgs {
        policy: PolicyArg::default(),
        workspace: None,
        receipt: None,
        grace_ms: None,
        force_ms: None,
        deadline_ms: None,
        bwrap: None,
        env: Vec::new(),
        allow: Vec::new(),
        command: Vec::new(),
    };
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        if arg == "--" {
            out.command = args[i + 1..].to_vec();
            break;
        }
        if !arg.starts_with("--") {
            out.command = args[i..].to_vec();
            break;
        }
        if !OPTIONS.contains(&arg) {
            return Err(usage(format!("unknown option {arg}")));
        }
        let value = args
            .get(i + 1)
            .ok_or_else(|| usage(format!("{arg} needs a value")))?;
        match arg {
            "--policy" => out.policy = PolicyArg::parse(value),
            "--workspace" => out.workspace = Some(PathBuf::from(value)),
            "--receipt" => out.receipt = Some(PathBuf::from(value)),
            "--grace-ms" => out.grace_ms = Some(parse_ms(arg, value)?),
            "--force-ms" => out.force_ms = Some(parse_ms(arg, value)?),
            "--deadline-ms" => out.deadline_ms = Some(parse_ms(arg, value)?),
            "--bwrap" => out.bwrap = Some(value.clone()),
            "--env" => out.env.push(parse_env(value)?),
            "--allow" | "--allow-private" => out.allow.push(AllowArg {
                destination: value.clone(),
                allow_private_addresses: arg == "--allow-private",
            }),
            _ => return Err(usage(format!("unknown option {arg}"))),
        }
        i += 2;
    }
    if out.command.is_empty() {
        return Err(usage(
            "missing the program to run: cordon run [options] -- /abs/program args…",
        ));
    }
    Ok(out)
}

/// A decimal integer of milliseconds (the launcher checks the upper bound).
fn parse_ms(flag: &str, value: &str) -> Result<u64, UsageError> {
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return Err(usage(format!(
            "{flag} takes a whole number of milliseconds, not {value:?}"
        )));
    }
    value
        .parse()
        .map_err(|_| usage(format!("{flag} {value} is out of range")))
}

/// `NAME=VALUE`: the name is everything before the first `=` (the launcher
/// checks it is a valid variable name); the value may be empty.
fn parse_env(value: &str) -> Result<(String, String), UsageError> {
    match value.split_once('=') {
        Some((name, val)) if !name.is_empty() => Ok((name.to_string(), val.to_string())),
        _ => Err(usage(format!("--env takes NAME=VALUE, not {value:?}"))),
    }
}

/// `cordon-egress-relay` next to this executable (the platform package and a
/// checkout's target/ ship them side by side).
pub fn shipped_relay() -> Option<PathBuf> {
    std::env::current_exe()
        .ok()
        .map(|exe| exe.with_file_name("cordon-egress-relay"))
}

/// `policy.network` for a preset run with `--allow` destinations: each as
/// the object form (so `--allow-private` can say allowPrivateAddresses);
/// the launcher validates host and port.
pub fn mediated_network(allow: &[AllowArg]) -> Result<Value, UsageError> {
    let destinations = allow
        .iter()
        .map(|a| {
            let (host, port) = a
                .destination
                .rsplit_once(':')
                .and_then(|(h, p)| Some((h, p.parse::<u16>().ok()?)))
                .ok_or_else(|| {
                    usage(format!("--allow takes HOST:PORT, not {:?}", a.destination))
                })?;
            Ok(json!({"protocol": "tcp", "host": host, "port": port,
                      "allowPrivateAddresses": a.allow_private_addresses}))
        })
        .collect::<Result<Vec<_>, UsageError>>()?;
    Ok(json!({"mode": "mediated", "allow": destinations}))
}

/// The options document `cordon_launcher::launch` validates. `policy` is the
/// already-loaded policy value and `workspace` an absolute directory.
pub fn options_json(
    args: &RunArgs,
    policy: Value,
    workspace: Option<PathBuf>,
    relay: Option<PathBuf>,
) -> String {
    let mut options = Map::new();
    options.insert("command".into(), json!(args.command));
    options.insert("policy".into(), policy);
    if let Some(dir) = workspace {
        options.insert("workspace".into(), json!(dir.to_string_lossy()));
    }
    if let Some(bwrap) = &args.bwrap {
        options.insert("bwrapPath".into(), json!(bwrap));
    }
    // Used only by a mediated policy.
    if let Some(relay) = relay {
        options.insert("networkRelayPath".into(), json!(relay.to_string_lossy()));
    }
    if !args.env.is_empty() {
        let env: Map<String, Value> = args
            .env
            .iter()
            .map(|(name, value)| (name.clone(), json!(value)))
            .collect();
        options.insert("env".into(), Value::Object(env));
    }
    let mut stop = Map::new();
    if let Some(ms) = args.grace_ms {
        stop.insert("graceMs".into(), json!(ms));
    }
    if let Some(ms) = args.force_ms {
        stop.insert("forceMs".into(), json!(ms));
    }
    if !stop.is_empty() {
        options.insert("stop".into(), Value::Object(stop));
    }
    if let Some(ms) = args.deadline_ms {
        options.insert("deadlineMs".into(), json!(ms));
    }
    Value::Object(options).to_string()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn allow_flags_become_a_mediated_network_with_their_private_address_choice() {
        let args = parse(&strings(&[
            "--allow",
            "a.example:443",
            "--allow-private",
            "localhost:8080",
            "/bin/true",
        ]))
        .unwrap();
        let network = mediated_network(&args.allow).unwrap();
        assert_eq!(network["mode"], "mediated");
        assert_eq!(network["allow"][0]["host"], "a.example");
        assert_eq!(network["allow"][0]["allowPrivateAddresses"], false);
        assert_eq!(network["allow"][1]["port"], 8080);
        assert_eq!(network["allow"][1]["allowPrivateAddresses"], true);
        let bad = parse(&strings(&["--allow", "no-port", "/bin/true"])).unwrap();
        assert!(mediated_network(&bad.allow).is_err());
    }

    #[test]
    fn options_stop_before_the_double_dash_and_the_rest_is_the_command() {
        let args = parse(&strings(&[
            "--policy",
            "untrusted",
            "--grace-ms",
            "50",
            "--",
            "/bin/sh",
            "-c",
            "--policy",
        ]))
        .unwrap();
        assert_eq!(args.policy, PolicyArg::Preset("untrusted"));
        assert_eq!(args.grace_ms, Some(50));
        assert_eq!(args.command, strings(&["/bin/sh", "-c", "--policy"]));
    }

    #[test]
    fn the_first_positional_argument_starts_the_command_without_a_double_dash() {
        let args = parse(&strings(&["/bin/true", "--x"])).unwrap();
        assert_eq!(args.command, strings(&["/bin/true", "--x"]));
        assert_eq!(args.policy, PolicyArg::Preset("read-only"));
    }

    #[test]
    fn unknown_options_missing_values_bad_numbers_and_no_command_are_usage_errors() {
        for bad in [
            vec!["--nope", "x", "/bin/true"],
            vec!["--grace-ms"],
            vec!["--grace-ms", "-1", "/bin/true"],
            vec!["--force-ms", "1e3", "/bin/true"],
            vec!["--grace-ms", "99999999999999999999999", "/bin/true"],
            vec!["--policy", "untrusted"],
            vec!["--"],
            vec!["--env", "NOEQUALS", "/bin/true"],
            vec!["--env", "=v", "/bin/true"],
        ] {
            assert!(parse(&strings(&bad)).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn env_options_are_repeatable_and_reach_the_options_document() {
        let args = parse(&strings(&[
            "--env",
            "A=1",
            "--env",
            "B=x=y",
            "--env",
            "C=",
            "/bin/true",
        ]))
        .unwrap();
        assert_eq!(
            args.env,
            vec![
                ("A".to_string(), "1".to_string()),
                ("B".to_string(), "x=y".to_string()),
                ("C".to_string(), String::new())
            ]
        );
        let doc: Value = serde_json::from_str(&options_json(&args, json!({}), None, None)).unwrap();
        assert_eq!(doc["env"], json!({"A": "1", "B": "x=y", "C": ""}));
    }

    #[test]
    fn the_options_document_carries_command_policy_workspace_and_stop() {
        let args = parse(&strings(&["--force-ms", "7", "--", "/bin/true"])).unwrap();
        let text = options_json(&args, json!({"p": 1}), Some(PathBuf::from("/w")), None);
        let doc: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            doc,
            json!({"command": ["/bin/true"], "policy": {"p": 1}, "workspace": "/w", "stop": {"forceMs": 7}})
        );
        let args = parse(&strings(&["--deadline-ms", "250", "/bin/true"])).unwrap();
        let doc: Value = serde_json::from_str(&options_json(&args, json!({}), None, None)).unwrap();
        assert_eq!(doc["deadlineMs"], 250);
        assert!(parse(&strings(&["--deadline-ms", "soon", "/bin/true"])).is_err());
    }
}
