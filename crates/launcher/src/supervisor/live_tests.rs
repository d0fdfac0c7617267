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
fn bwrap_is_forked_on_the_fork_thread_never_on_a_runtime_worker() {
    if !bwrap_present("supervisor::live_tests") {
        return;
    }
    let mut options = options(None);
    options["command"] = json!(["/bin/true"]);
    run(options).expect("a run");
    let names = super::FORKING_THREADS.lock().unwrap().clone();
    assert!(!names.is_empty(), "no fork was recorded");
    assert!(
        names.iter().all(|name| name == "cordon-fork"),
        "forked on {names:?}"
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

#[test]
fn a_stop_requested_before_the_release_kills_bwrap_and_the_program_never_runs() {
    if !bwrap_present("supervisor::live_tests") {
        return;
    }
    // SIGTERM ignored, so a program that did start would run its whole
    // 0.3 s and exit 0 (the graceful rung cannot end it).
    let mut options = options(None);
    options["command"] = json!(["/bin/sh", "-c", "trap '' TERM; sleep 0.3"]);
    options["invocationId"] = json!(format!("{}-1", super::TEST_STOP_BEFORE_RELEASE));
    let done = run(options).expect("a stop before the start is not a launch failure");
    let receipt = &done.receipt;
    assert_eq!(receipt["stop"]["reason"], "stop", "{receipt}");
    assert_eq!(receipt["stop"]["gracefulStopAttempted"], false, "{receipt}");
    assert_eq!(receipt["stop"]["forcedStopAttempted"], true, "{receipt}");
    assert_eq!(receipt["stop"]["containmentConfirmed"], true, "{receipt}");
    assert_eq!(receipt["outcome"]["signal"], "SIGKILL", "{receipt}");
    assert_eq!(done.returncode, None, "{done:?}");
    // Nothing of the sandbox existed, so nothing was observed or killed
    // through the cgroup.
    assert_eq!(receipt["confinement"]["observed"], Value::Null, "{receipt}");
    let cgroup = &receipt["confinement"]["cgroupOutcome"];
    assert!(
        cgroup.is_null() || cgroup["killedByCgroup"] == false,
        "{receipt}"
    );
}

#[test]
fn a_run_whose_pumps_cannot_start_fails_with_that_error_and_says_why_it_was_stopped() {
    if !bwrap_present("supervisor::live_tests") {
        return;
    }
    // SIGTERM ignored and a 20 s grace: only a stop with no grace ends the
    // sandbox within the 10 s asserted below.
    let mut options = options(None);
    options["command"] = json!(["/bin/sh", "-c", "trap '' TERM; sleep 30"]);
    options["stop"] = json!({"graceMs": 20000, "forceMs": 1000});
    options["invocationId"] = json!(format!("{}-1", super::TEST_PUMPS_FAIL));
    let started = std::time::Instant::now();
    let failed = run(options).expect_err("a run that could not be supervised is not a success");
    assert_eq!(
        failed.code.as_str(),
        "ERR_CORDON_SPAWN_FAILED",
        "{failed:?}"
    );
    assert!(
        failed.message.contains("cannot start the stream pumps"),
        "{failed:?}"
    );
    let receipt = failed.receipt.expect("the receipt is written");
    assert_eq!(receipt["stop"]["reason"], "supervision-failed", "{receipt}");
    assert_eq!(receipt["stop"]["forcedStopAttempted"], true, "{receipt}");
    assert_eq!(receipt["stop"]["containmentConfirmed"], true, "{receipt}");
    assert_eq!(receipt["outcome"]["status"], "spawn-failed", "{receipt}");
    assert_eq!(
        receipt["confinement"]["observed"]["status"], "observed",
        "{receipt}"
    );
    let cgroup = &receipt["confinement"]["cgroupOutcome"];
    assert!(
        cgroup.is_null() || cgroup["killedByCgroup"] == true,
        "{receipt}"
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "not stopped at once"
    );
}

/// Pids of live (not zombie) processes whose argv is exactly `argv`.
fn live_pids_running(argv: &[&str]) -> Vec<u32> {
    let wanted: Vec<u8> = argv
        .iter()
        .flat_map(|a| [a.as_bytes(), b"\0"].concat())
        .collect();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| c == wanted))
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
                !s.rsplit(')')
                    .next()
                    .unwrap_or("")
                    .trim_start()
                    .starts_with('Z')
            })
        })
        .collect()
}

#[test]
fn a_panic_in_the_runs_supervision_kills_the_sandbox_and_still_settles() {
    if !bwrap_present("supervisor::live_tests") {
        return;
    }
    // An argv no other test runs, to find the program on the host.
    let argv = ["/bin/sleep", "31.25"];
    let mut options = options(None);
    options["command"] = json!(argv);
    options["invocationId"] = json!(format!("{}-1", super::TEST_PANIC_IN_SET_UP));
    let failed = run(options).expect_err("a lost supervision is never a success");
    assert_eq!(
        failed.code.as_str(),
        "ERR_CORDON_SPAWN_FAILED",
        "{failed:?}"
    );
    // Bounded generously: a loaded machine delays the kill's delivery and the reap.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !live_pids_running(&argv).is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(
        live_pids_running(&argv),
        Vec::<u32>::new(),
        "the sandboxed program outlived its supervision"
    );
    // bwrap, SIGKILLed with the sandbox, is reaped: not left a zombie child
    // of this process for its whole life. (Other tests' bwraps are zombies
    // only for the moment before their own supervision reaps them: the loop
    // ends at the first instant none is left, and 30 s leaves a loaded CI
    // machine room — a bwrap nobody reaps stays a zombie for the whole wait.)
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !zombie_bwrap_children().is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(
        zombie_bwrap_children(),
        Vec::<u32>::new(),
        "the lost run's bwrap was left a zombie"
    );
}

/// Zombie children of this process named `bwrap`.
fn zombie_bwrap_children() -> Vec<u32> {
    let me = std::process::id().to_string();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                let (comm, rest) = stat.rsplit_once(')').unwrap_or(("", ""));
                let fields: Vec<&str> = rest.split_whitespace().collect();
                comm.ends_with("(bwrap")
                    && fields.first() == Some(&"Z")
                    && fields.get(1) == Some(&me.as_str())
            })
        })
        .collect()
}
