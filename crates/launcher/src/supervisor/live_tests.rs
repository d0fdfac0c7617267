//! Real sandboxes: the launcher's own deadline stops a run nobody stops.

use serde_json::{json, Value};

use crate::events::{Completion, LaunchFailure};
use crate::live_support::{bwrap_present, run_to_end};

fn run(options: Value) -> Result<Completion, LaunchFailure> {
    run_to_end(&options)
}

fn options(deadline_ms: Option<u64>) -> Value {
    let mut options = json!({
        "command": ["/bin/sleep", "30"],
        "policy": {"formatVersion": 1, "filesystem": {"workspace": "read", "temp": "write"},
            "network": {"mode": "none"}, "process": {"treeConfinement": "required"}},
        "stop": {"graceMs": 500, "forceMs": 1000},
    });
    if let Some(ms) = deadline_ms {
        options["deadlineMs"] = json!(ms);
    }
    options
}

#[test]
fn the_launchers_own_deadline_stops_a_run_nobody_stops() {
    if !bwrap_present("supervisor::live_tests") {
        return;
    }
    // Nothing here calls stop(): only the launcher's timer can end the
    // 30 s program (the receiver gives up after 60 s).
    let done = run(options(Some(300))).expect("a stopped run still completes");
    let receipt = &done.receipt;
    assert_eq!(receipt["stop"]["reason"], "deadline", "{receipt}");
    assert_eq!(receipt["stop"]["gracefulStopAttempted"], true, "{receipt}");
    assert_eq!(receipt["stop"]["containmentConfirmed"], true, "{receipt}");
    assert_ne!(
        done.returncode,
        Some(0),
        "sleep 30 did not finish: {done:?}"
    );
}

#[test]
fn without_a_deadline_a_run_ends_on_its_own_with_no_stop_recorded() {
    if !bwrap_present("supervisor::live_tests") {
        return;
    }
    let mut quick = options(None);
    quick["command"] = json!(["/bin/sleep", "0.2"]);
    let done = run(quick).expect("runs");
    assert_eq!(done.returncode, Some(0));
    let receipt = &done.receipt;
    assert_eq!(receipt["stop"]["reason"], Value::Null, "{receipt}");
}

#[test]
fn a_deadline_that_passes_during_set_up_is_a_stopped_run_not_a_failed_launch() {
    if !bwrap_present("supervisor::live_tests") {
        return;
    }
    // 1 ms: the timer fires while bwrap is still being set up (or just after).
    let done = run(options(Some(1))).expect("a stop during set-up is not a launch failure");
    let receipt = &done.receipt;
    assert_eq!(receipt["stop"]["reason"], "deadline", "{receipt}");
    assert_eq!(receipt["stop"]["containmentConfirmed"], true, "{receipt}");
    assert_ne!(receipt["outcome"]["status"], "spawn-failed", "{receipt}");
}
