//! `cordon doctor [--json] [--bwrap PATH] [--runner PATH]`: the launcher's
//! own host report (`host_probe::report`: every check and the verdict),
//! printed with the exact fix for each failure — the same report `doctor()`
//! returns, so the command and the library cannot disagree.

use std::path::PathBuf;

use cordon_launcher::host_probe;
use serde_json::{json, Value};

use crate::exit_status;
use crate::run_args::UsageError;

/// The runner shipped beside this binary (platform package or target/release).
fn default_runner() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    Some(exe.parent()?.join("cordon-runner"))
}

/// `--json`, and the probe options `{bwrapPath?, runnerPath?}`.
fn parse(args: &[String]) -> Result<(bool, Value), UsageError> {
    let mut json = false;
    let mut bwrap = None;
    let mut runner = None;
    let mut i = 0;
    while i < args.len() {
        match (args[i].as_str(), args.get(i + 1)) {
            ("--json", _) => json = true,
            ("--bwrap", Some(path)) => {
                bwrap = Some(path.clone());
                i += 1;
            }
            ("--runner", Some(path)) => {
                runner = Some(path.clone());
                i += 1;
            }
            (other, _) => return Err(UsageError(format!("unknown or incomplete option: {other}"))),
        }
        i += 1;
    }
    Ok((json, probe_options(bwrap, runner, None)))
}

/// The launcher's probe options: the given paths, else the runner and the
/// relay shipped beside this binary (also `cordon host --probe`'s).
pub fn probe_options(
    bwrap: Option<String>,
    runner: Option<String>,
    relay: Option<String>,
) -> Value {
    let runner = runner.or_else(|| default_runner().map(|p| p.to_string_lossy().into_owned()));
    let relay = relay
        .or_else(|| crate::run_args::shipped_relay().map(|p| p.to_string_lossy().into_owned()));
    json!({"bwrapPath": bwrap, "runnerPath": runner, "networkRelayPath": relay})
}

/// The first failed required check as one line, or `None` when this host
/// can launch sandboxes (`cordon host --probe`).
pub fn first_failure(options: &Value) -> Option<String> {
    let report = host_probe::report_json(options);
    if report["ok"] == true {
        return None;
    }
    let failed = report["checks"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["ok"] != true && c["importance"] == "required");
    Some(match failed {
        Some(c) => format!(
            "{}: {}",
            c["name"].as_str().unwrap_or("?"),
            c["detail"].as_str().unwrap_or("")
        ),
        None => "a required check failed".to_string(),
    })
}

/// One line per check, an indented fix line per failure.
pub fn format(report: &Value) -> String {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let mut lines = Vec::new();
    for check in report["checks"].as_array().into_iter().flatten() {
        let ok = check["ok"] == true;
        let mark = match (ok, check["importance"] == "required") {
            (true, _) => "ok  ",
            (false, true) => "FAIL",
            (false, false) => "warn",
        };
        lines.push(format!(
            "{mark}  {}: {}",
            text(&check["name"]),
            text(&check["detail"])
        ));
        if !ok {
            lines.push(format!("      fix: {}", text(&check["fix"])));
        }
    }
    lines.push(if report["ok"] == true {
        "cordon can launch sandboxes on this host.".to_string()
    } else {
        "cordon cannot launch sandboxes on this host until the FAIL lines are fixed.".to_string()
    });
    format!("{}\n", lines.join("\n"))
}

/// Runs the command; returns the exit status.
pub fn main(args: &[String]) -> Result<i32, UsageError> {
    let (json, options) = parse(args)?;
    let report = host_probe::report_json(&options);
    let text = if json {
        let pretty =
            serde_json::to_string_pretty(&report).map_err(|e| UsageError(e.to_string()))?;
        format!("{pretty}\n")
    } else {
        format(&report)
    };
    print!("{text}");
    Ok(if report["ok"] == true {
        0
    } else {
        exit_status::DOCTOR_FAILED
    })
}
