//! `cordon run` arguments → the launcher's typed launch options (pure).
//!
//! `cordon run [--policy read-only|workspace-write|untrusted|FILE]
//! [--workspace DIR] [--receipt FILE] [--grace-ms N] [--force-ms N]
//! [--deadline-ms N] [--bwrap PATH] [--env NAME=VALUE]… [--allow HOST:PORT]… [--allow-private HOST:PORT]…
//! [--] /abs/program args…`

use std::path::PathBuf;

use cordon_launcher::LaunchOptions;
use serde_json::{json, Value};

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
            let hint = crate::suggest::did_you_mean(arg, OPTIONS);
            return Err(usage(format!("unknown option {arg}{hint}")));
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
            "--allow" | "--allow-private" => out.allow.push(allow_arg(arg, value)?),
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

/// `--allow HOST:PORT` / `--allow-private HOST:PORT`. A loopback, private,
/// link-local or unspecified address (or `localhost`) under plain `--allow`
/// would be accepted here and refused on every connection by the engine:
/// said now, with the flag that admits it.
fn allow_arg(flag: &str, value: &str) -> Result<AllowArg, UsageError> {
    let allow_private_addresses = flag == "--allow-private";
    let host = value.rsplit_once(':').map_or(value, |(host, _)| host);
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if !allow_private_addresses && is_private_host(host) {
        return Err(usage(format!(
            "--allow {value}: {host} is a loopback or private address, which --allow never \
             reaches; use --allow-private {value}"
        )));
    }
    Ok(AllowArg {
        destination: value.to_string(),
        allow_private_addresses,
    })
}

/// `localhost`, or an IP literal the egress engine refuses without
/// allowPrivateAddresses (loopback, RFC 1918 / unique-local, link-local, unspecified).
fn is_private_host(host: &str) -> bool {
    use std::net::IpAddr;
    if host.eq_ignore_ascii_case("localhost") {
        return true;
    }
    match host.parse::<IpAddr>() {
        Ok(IpAddr::V4(ip)) => {
            ip.is_loopback() || ip.is_private() || ip.is_link_local() || ip.is_unspecified()
        }
        Ok(IpAddr::V6(ip)) => {
            let first = ip.segments()[0];
            ip.is_loopback()
                || ip.is_unspecified()
                || (first & 0xfe00) == 0xfc00
                || (first & 0xffc0) == 0xfe80
                || ip
                    .to_ipv4_mapped()
                    .is_some_and(|v4| v4.is_loopback() || v4.is_private())
        }
        Err(_) => false,
    }
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

/// The relay a run starts with by default: the shipped one, when it is
/// there. It is every sandbox's starter (the launcher's plan/starter.rs:
/// the program waits until the sandbox dies with its provider); without it
/// only a mediated policy fails, and `cordon doctor` reports it missing.
pub fn default_relay() -> Option<PathBuf> {
    shipped_relay().filter(|path| path.is_file())
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

/// The typed options `cordon_launcher::LaunchRequest::new` validates (with
/// the policy, parsed separately). `workspace` is an absolute directory.
pub fn launch_options(
    args: &RunArgs,
    workspace: Option<PathBuf>,
    relay: Option<PathBuf>,
) -> LaunchOptions {
    let text = |path: PathBuf| path.to_string_lossy().into_owned();
    LaunchOptions {
        command: args.command.clone(),
        invocation_id: None,
        workspace: workspace.map(text),
        env: args.env.clone(),
        grace_ms: args.grace_ms,
        force_ms: args.force_ms,
        deadline_ms: args.deadline_ms,
        bwrap_path: args.bwrap.clone(),
        // Every run's starter, and a mediated policy's relay.
        network_relay_path: relay.map(text),
        namespace_holder: None,
        workspace_tmpfs_bytes: None,
    }
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
    fn allow_of_a_loopback_or_private_address_is_refused_at_parse_time_naming_allow_private() {
        for dest in [
            "127.0.0.1:8080",
            "localhost:80",
            "10.1.2.3:443",
            "[::1]:80",
            "192.168.0.9:22",
        ] {
            let e = parse(&strings(&["--allow", dest, "/bin/true"])).unwrap_err();
            assert!(e.0.contains(&format!("use --allow-private {dest}")), "{e}");
        }
        for dest in ["a.example:443", "8.8.8.8:53"] {
            assert!(
                parse(&strings(&["--allow", dest, "/bin/true"])).is_ok(),
                "{dest}"
            );
        }
        assert!(parse(&strings(&[
            "--allow-private",
            "127.0.0.1:8080",
            "/bin/true"
        ]))
        .is_ok());
    }

    #[test]
    fn an_unknown_option_suggests_the_nearest_one() {
        let e = parse(&strings(&["--polcy", "read-only", "/bin/true"])).unwrap_err();
        assert_eq!(e.0, "unknown option --polcy; did you mean --policy?");
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
    fn env_options_are_repeatable_and_reach_the_launch_options() {
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
        let expected = vec![
            ("A".to_string(), "1".to_string()),
            ("B".to_string(), "x=y".to_string()),
            ("C".to_string(), String::new()),
        ];
        assert_eq!(args.env, expected);
        assert_eq!(launch_options(&args, None, None).env, expected);
    }

    #[test]
    fn the_launch_options_carry_command_workspace_stop_and_paths() {
        let args = parse(&strings(&[
            "--force-ms",
            "7",
            "--bwrap",
            "/usr/bin/bwrap",
            "--",
            "/bin/true",
        ]))
        .unwrap();
        let options = launch_options(&args, Some(PathBuf::from("/w")), Some(PathBuf::from("/r")));
        assert_eq!(
            options,
            LaunchOptions {
                command: strings(&["/bin/true"]),
                workspace: Some("/w".into()),
                force_ms: Some(7),
                bwrap_path: Some("/usr/bin/bwrap".into()),
                network_relay_path: Some("/r".into()),
                ..LaunchOptions::default()
            }
        );
        let args = parse(&strings(&["--deadline-ms", "250", "/bin/true"])).unwrap();
        assert_eq!(launch_options(&args, None, None).deadline_ms, Some(250));
        assert!(parse(&strings(&["--deadline-ms", "soon", "/bin/true"])).is_err());
    }
}
