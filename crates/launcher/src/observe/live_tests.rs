//! Real sandboxes (bwrap, the kernel's /proc): the observation of a run
//! matches its plan, and an expectation a sandbox cannot meet stops the run
//! with `ERR_CORDON_CONFINEMENT_MISMATCH`.

use serde_json::json;

use super::run::TEST_EXTRA_FILTER_PREFIX;
use crate::events::{Completion, LaunchFailure};
use crate::live_support::{bwrap_present, run_to_end};
use crate::ErrorCode;

fn run(id: &str, command: &[&str]) -> Result<Completion, LaunchFailure> {
    let options = json!({
        "command": command,
        "invocationId": id,
        "policy": {"formatVersion": 1, "filesystem": {"workspace": "read", "temp": "write"},
            "network": {"mode": "none"}, "process": {"treeConfinement": "required"}},
        "stop": {"graceMs": 1000, "forceMs": 1000},
    });
    run_to_end(&options)
}

#[test]
fn a_running_program_is_observed_confined_as_planned() {
    if !bwrap_present("observe::live_tests") {
        return;
    }
    let done = run("observe-live-1", &["/bin/sleep", "0.5"]).expect("a matching run succeeds");
    assert_eq!(done.returncode, Some(0));
    let r = &done.receipt;
    let seen = &r["confinement"]["observed"];
    assert_eq!(seen["status"], "observed", "{seen}");
    assert_eq!(r["confinement"]["mismatches"], json!([]));
    assert_eq!(seen["seccomp"]["mode"], 2);
    assert!(seen["seccomp"]["filters"].as_u64().unwrap() >= 1);
    assert_eq!(seen["noNewPrivs"], true);
    assert_eq!(seen["capabilities"]["effective"], "0000000000000000");
    for (name, ns) in seen["namespaces"].as_object().unwrap() {
        assert_ne!(
            ns["inode"], ns["provider"],
            "namespace {name} is the provider's"
        );
    }
    assert_eq!(seen["namespaces"].as_object().unwrap().len(), 7);
    let tmp = seen["mounts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["path"] == "/tmp")
        .unwrap();
    assert_eq!(
        tmp["sizeBytes"],
        r["confinement"]["planned"]["temp"]["sizeBytes"]
    );
    let nofile = seen["rlimits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == "NOFILE")
        .unwrap();
    assert_eq!(nofile["hard"], 256);
}

#[test]
fn an_expectation_the_sandbox_cannot_meet_stops_the_run_as_a_mismatch() {
    if !bwrap_present("observe::live_tests") {
        return;
    }
    let id = format!("{TEST_EXTRA_FILTER_PREFIX}-1");
    let started = std::time::Instant::now();
    let failed = run(&id, &["/bin/sleep", "60"]).expect_err("a mismatch is never a success");
    // Stopped, not run to its end: the program sleeps 60 s, and the stop
    // (observation, then the forced rung with no grace) takes well under
    // a second here; 20 s leaves room for a loaded machine.
    let took = started.elapsed();
    assert!(
        took < std::time::Duration::from_secs(20),
        "the mismatched run was not stopped: it took {took:?}"
    );
    assert_eq!(failed.code, ErrorCode::ConfinementMismatch);
    assert!(
        failed.message.contains("seccomp.filters"),
        "{}",
        failed.message
    );
    let r = failed.receipt.as_ref().expect("a receipt");
    let mismatches = r["confinement"]["mismatches"].as_array().unwrap();
    assert_eq!(mismatches.len(), 1, "{mismatches:?}");
    assert_eq!(mismatches[0]["check"], "seccomp.filters");
    assert_eq!(
        mismatches[0]["planned"].as_u64().unwrap(),
        mismatches[0]["observed"].as_u64().unwrap() + 1
    );
    assert_eq!(r["stop"]["reason"], "confinement-mismatch");
    assert_eq!(
        r["stop"]["forcedStopAttempted"], true,
        "no grace for a mismatch"
    );
    // The 60 s program ended now: by the ladder's SIGTERM (bwrap reports
    // 128+15) or, racing it, the forced rung's SIGKILL of the sandbox or bwrap.
    let outcome = &r["outcome"];
    let ended_by_ladder = outcome["signal"] == "SIGKILL"
        || [128 + 15, 128 + 9].contains(&outcome["exitCode"].as_i64().unwrap_or(0));
    assert!(ended_by_ladder, "{outcome}");
    assert_eq!(r["stop"]["containmentConfirmed"], true);
    let duration_ms = r["durationMs"].as_u64().unwrap();
    assert!(
        duration_ms < 20_000,
        "the receipt's run lasted {duration_ms} ms"
    );
}
