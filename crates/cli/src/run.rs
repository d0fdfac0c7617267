//! `cordon run`: one program in the launcher's sandbox, relayed over our
//! stdin/stdout (its fd 3) and stderr (its stdout+stderr). Steps:
//! 1. parse the command line (nothing happens on a usage error);
//! 2. block SIGTERM/SIGINT and start their thread — before the launcher
//!    starts any thread, so every thread inherits the mask;
//! 3. open the `--receipt` directory (no links), load the policy, make the
//!    workspace absolute (no links resolved), build the typed launch
//!    request (`LaunchRequest::new`: the launcher's strict validation);
//! 4. `cordon_launcher::start` (spawns bwrap);
//! 5. relay until the run finished (signals → stop ladder);
//! 6. copy the receipt (with its `networkReceipts`) to `--receipt`, exit
//!    with the program's status.

use cordon_launcher::events::{Completion, LaunchFailure};
use cordon_launcher::request::launch_request::RequestError;
use cordon_launcher::request::policy::Policy;
use cordon_launcher::{start, LaunchError, LaunchRequest};

use crate::exit_status::{self, RUN_ERROR};
use crate::receipt_file::ReceiptTarget;
use crate::relay::{Channels, Message};
use crate::run_args::{self, RunArgs};
use crate::{lexical_path, signals};

/// Follows "usage: " (or 7 spaces) in every usage text.
pub const SYNOPSIS: &str = "cordon run [--policy read-only|workspace-write|untrusted|FILE]
                  [--workspace DIR] [--receipt FILE] [--grace-ms N] [--force-ms N]
                  [--deadline-ms N] [--bwrap PATH] [--env NAME=VALUE]… [--allow HOST:PORT]…
                  [--allow-private HOST:PORT]… [--] /abs/program args…
";

fn fail(status: i32, message: &str) -> i32 {
    eprintln!("cordon run: {message}");
    status
}

/// Runs the command; returns the exit status.
pub fn main(args: &[String]) -> i32 {
    let parsed = match run_args::parse(args) {
        Ok(parsed) => parsed,
        Err(e) => return fail(RUN_ERROR, &format!("{e}\nusage: {SYNOPSIS}")),
    };
    let channels = Channels::new();
    let to_main = channels.main_tx.clone();
    let forwarded =
        signals::forward_stop_signals(move |_signal| to_main.send(Message::Signal).is_ok());
    if let Err(e) = forwarded {
        return fail(RUN_ERROR, &e.to_string());
    }
    // Opened before the sandbox runs, without following links: a run can
    // replace any directory it can write on the receipt's path (R4-3).
    let receipt = match parsed
        .receipt
        .as_deref()
        .map(ReceiptTarget::open)
        .transpose()
    {
        Ok(receipt) => receipt,
        Err(e) => return fail(RUN_ERROR, &e.to_string()),
    };
    let request = match launch_request(&parsed) {
        Ok(request) => request,
        Err(Refused::Usage(message)) => return fail(RUN_ERROR, &message),
        Err(Refused::Launcher(e)) => return launch_failed(&e),
    };
    let handle = match start(request, channels.sink()) {
        Ok(handle) => handle,
        Err(e) => return launch_failed(&e),
    };
    let outcome = channels.relay(handle);
    if let Err(failure) = &outcome {
        let message = crate::flag_names::in_flags(&failure.message);
        eprintln!("cordon run: {}: {message}", failure.code.as_str());
    }
    let status = exit_status::for_outcome(&outcome);
    match (&receipt, receipt_of(&outcome)) {
        (None, _) => status,
        (Some(target), Some(json)) => match target.write(&json) {
            Ok(()) => status,
            Err(e) => fail(
                RUN_ERROR,
                &format!("{e} (the program's status was {status})"),
            ),
        },
        // Only a launch failure lacks a receipt (a completion always has
        // one); it keeps its own status.
        (Some(_), None) => status,
    }
}

fn launch_failed(e: &LaunchError) -> i32 {
    let code = e.code();
    let message = crate::flag_names::in_flags(&e.to_string());
    fail(
        exit_status::for_error_code(code),
        &format!("{}: {message}", code.as_str()),
    )
}

/// Why step 3 produced no request.
enum Refused {
    /// A policy file or `--allow` problem of the command line.
    Usage(String),
    /// The launcher's validation, with its error code.
    Launcher(LaunchError),
}

/// Step 3: the typed request `cordon_launcher::start` takes.
fn launch_request(parsed: &RunArgs) -> Result<LaunchRequest, Refused> {
    let mut policy = parsed
        .policy
        .load()
        .map_err(|e| Refused::Usage(e.to_string()))?;
    if parsed.policy.is_preset() {
        // A preset allows no variable; naming one with --env is the allowance.
        // A policy file must list its names itself (the launcher refuses others).
        let names = parsed.env.iter().map(|(name, _)| name.as_str());
        policy["environment"]["allow"] = serde_json::json!(names.collect::<Vec<_>>());
        if !parsed.allow.is_empty() {
            policy["network"] = run_args::mediated_network(&parsed.allow)
                .map_err(|e| Refused::Usage(e.to_string()))?;
        }
    } else if !parsed.allow.is_empty() {
        return Err(Refused::Usage(
            "--allow is for presets: a policy file lists its own network.allow".into(),
        ));
    }
    let workspace = match &parsed.workspace {
        Some(dir) => {
            let absolute = lexical_path::absolute("--workspace", dir).map_err(Refused::Usage)?;
            // A missing directory stays a usage error of the command line;
            // what is bound is decided by the launcher's no-follow walk.
            std::fs::symlink_metadata(&absolute)
                .map_err(|e| Refused::Usage(format!("--workspace {}: {e}", dir.display())))?;
            Some(absolute)
        }
        None => None,
    };
    let relay = run_args::default_relay();
    let refused = |e: RequestError| Refused::Launcher(LaunchError::from(e));
    // The launcher's order: the option values (command first), then the
    // policy — a JSON value (a preset or a file) parsed once, here, and
    // never turned back into text — then the cross-checks.
    let checked = run_args::launch_options(parsed, workspace, relay)
        .check()
        .map_err(refused)?;
    let policy = Policy::from_json(&policy).map_err(|e| refused(e.into()))?;
    checked.with_policy(policy).map_err(refused)
}

/// The receipt as JSON text for `--receipt` (serialised once, here).
fn receipt_of(outcome: &Result<Completion, LaunchFailure>) -> Option<String> {
    match outcome {
        Ok(done) => Some(done.receipt.to_string()),
        Err(failure) => failure.receipt.as_ref().map(|r| r.to_string()),
    }
}
