//! `cordon run`: relay, exit statuses, receipts, signals — real sandboxes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[macro_use]
mod support;

use support::*;

#[test]
fn stdin_reaches_fd_3_fd_3_reaches_stdout_and_the_programs_output_goes_to_stderr() {
    require_sandbox!();
    let out = run(
        &[
            "--",
            SH,
            "-c",
            "/usr/bin/tr a-z A-Z <&3 >&3; echo to-stdout; echo to-stderr >&2; exit 3",
        ],
        b"hello\n",
    );
    assert_eq!(text(&out.stdout), "HELLO\n");
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("to-stdout") && stderr.contains("to-stderr"),
        "{stderr}"
    );
    assert_eq!(out.status.code(), Some(3));
}

#[test]
fn a_large_stream_is_relayed_whole_both_ways_after_the_half_close() {
    require_sandbox!();
    let input: Vec<u8> = (0..2 * 1024 * 1024u32).map(|i| (i % 251) as u8).collect();
    // cat sees EOF only through the half-close; its last bytes still arrive.
    let out = run(&["--", SH, "-c", "/bin/cat <&3 >&3"], &input);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(out.stdout.len(), input.len());
    assert!(out.stdout == input);
}

#[test]
fn a_program_killed_by_a_signal_exits_128_plus_the_signal() {
    require_sandbox!();
    let out = run(&["--", SH, "-c", "kill -SEGV $$"], b"");
    assert_eq!(out.status.code(), Some(128 + libc::SIGSEGV));
}

#[test]
fn cordons_own_failures_have_their_documented_statuses() {
    require_sandbox!();
    let dir = TempDir::new("statuses");
    let cases: Vec<(Vec<String>, i32, &str)> = vec![
        (
            vec!["--".into(), "bin/true".into()],
            127,
            "ERR_CORDON_INVALID_COMMAND",
        ),
        (
            vec!["/nonexistent/program".into()],
            127,
            "ERR_CORDON_INVALID_COMMAND",
        ),
        (
            vec!["--frobnicate".into(), "x".into(), "/bin/true".into()],
            125,
            "unknown option",
        ),
        (
            vec![
                "--policy".into(),
                dir.path("missing.json"),
                "/bin/true".into(),
            ],
            125,
            "missing.json",
        ),
        (
            vec!["--workspace".into(), dir.path("nope"), "/bin/true".into()],
            125,
            "--workspace",
        ),
        (
            vec![
                "--bwrap".into(),
                "/nonexistent/bwrap".into(),
                "/bin/true".into(),
            ],
            126,
            "ERR_CORDON_BACKEND_UNAVAILABLE",
        ),
    ];
    for (args, status, message) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = run(&args, b"");
        assert_eq!(
            out.status.code(),
            Some(status),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(
            text(&out.stderr).contains(message),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
}

#[test]
fn a_policy_file_is_validated_strictly_and_an_unknown_key_is_refused() {
    require_sandbox!();
    let dir = TempDir::new("policy");
    let file = dir.path("policy.json");
    std::fs::write(&file, r#"{"formatVersion":1,"surprise":true}"#).unwrap();
    let out = run(&["--policy", &file, "/bin/true"], b"");
    assert_eq!(out.status.code(), Some(125));
    assert!(
        text(&out.stderr).contains("ERR_CORDON_POLICY_INVALID"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn the_receipt_is_written_with_the_outcome_the_command_and_the_policy() {
    require_sandbox!();
    let dir = TempDir::new("receipt");
    let receipt_path = dir.path("receipt.json");
    let out = run(
        &[
            "--policy",
            "untrusted",
            "--receipt",
            &receipt_path,
            "--",
            SH,
            "-c",
            "exit 4",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(4));
    let receipt = receipt(&receipt_path);
    assert_eq!(receipt["outcome"]["status"], "exited");
    assert_eq!(receipt["outcome"]["exitCode"], 4);
    assert_eq!(receipt["command"]["argv"][0], SH);
    assert_eq!(receipt["policy"]["filesystem"]["workspace"], "none");
    assert_eq!(receipt["policy"]["network"]["mode"], "none");
    assert_eq!(receipt["stop"]["requested"], false);
    assert_eq!(
        std::fs::read_dir(&dir.0).unwrap().count(),
        1,
        "no temp file left"
    );
}

#[test]
fn workspace_write_lets_the_program_write_the_workspace_and_read_only_does_not() {
    require_sandbox!();
    let dir = TempDir::new("workspace");
    let ws = dir.path("ws");
    std::fs::create_dir(&ws).unwrap();
    // As root the sandbox runs as a per-run uid of the reserved range (this
    // workspace is root's, not a reserved owner's; docs/policy.md, root
    // mode), which owns nothing here: the workspace must be writable by all.
    let writable_by_all = std::os::unix::fs::PermissionsExt::from_mode(0o777);
    std::fs::set_permissions(&ws, writable_by_all).unwrap();
    let write = "echo data > /workspace/out.txt";
    let denied = run(&["--workspace", &ws, "--", SH, "-c", write], b"");
    assert_ne!(denied.status.code(), Some(0));
    assert!(!dir.0.join("ws/out.txt").exists());
    let allowed = run(
        &[
            "--policy",
            "workspace-write",
            "--workspace",
            &ws,
            "--",
            SH,
            "-c",
            write,
        ],
        b"",
    );
    assert_eq!(allowed.status.code(), Some(0), "{}", text(&allowed.stderr));
    assert_eq!(
        std::fs::read_to_string(dir.0.join("ws/out.txt")).unwrap(),
        "data\n"
    );
}

const READY_THEN_LOOP_TERM_EXITS_7: &str =
    "trap 'exit 7' TERM; echo ready >&3; while :; do /usr/bin/sleep 0.05; done";
const READY_THEN_LOOP_IGNORING_TERM: &str =
    "trap '' TERM; echo ready >&3; while :; do /usr/bin/sleep 0.05; done";

#[test]
fn sigterm_runs_the_stop_ladder_and_a_graceful_program_keeps_its_own_status() {
    require_sandbox!();
    let dir = TempDir::new("sigterm");
    let receipt_path = dir.path("r.json");
    let (child, stdout) = start_until_ready(&[
        "--receipt",
        &receipt_path,
        "--grace-ms",
        "5000",
        "--",
        SH,
        "-c",
        READY_THEN_LOOP_TERM_EXITS_7,
    ]);
    signal(&child, libc::SIGTERM);
    let (status, _) = finish(child, stdout);
    assert_eq!(status, 7);
    let stop = &receipt(&receipt_path)["stop"];
    assert_eq!(stop["requested"], true);
    assert_eq!(stop["reason"], "signal");
    assert_eq!(stop["gracefulStopAttempted"], true);
    assert_eq!(stop["forcedStopAttempted"], false);
}

#[test]
fn sigint_to_a_program_ignoring_sigterm_ends_in_sigkill_after_the_grace_window() {
    require_sandbox!();
    let dir = TempDir::new("sigint");
    let receipt_path = dir.path("r.json");
    let (child, stdout) = start_until_ready(&[
        "--receipt",
        &receipt_path,
        "--grace-ms",
        "200",
        "--force-ms",
        "2000",
        "--",
        SH,
        "-c",
        READY_THEN_LOOP_IGNORING_TERM,
    ]);
    let started = std::time::Instant::now();
    signal(&child, libc::SIGINT);
    let (status, _) = finish(child, stdout);
    assert_eq!(status, 128 + libc::SIGKILL);
    assert!(started.elapsed() >= std::time::Duration::from_millis(200));
    let receipt = receipt(&receipt_path);
    assert_eq!(receipt["outcome"]["signal"], "SIGKILL");
    assert_eq!(receipt["stop"]["forcedStopAttempted"], true);
    assert_eq!(receipt["stop"]["containmentConfirmed"], true);
}

#[test]
fn doctor_reports_json_and_exits_1_when_a_required_check_fails() {
    let out = std::process::Command::new(CORDON)
        .args(["doctor", "--json", "--bwrap", "/nonexistent/bwrap"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["ok"], false);
    assert_eq!(report["checks"][0]["name"], "bubblewrap");
    let unknown = std::process::Command::new(CORDON)
        .arg("frobnicate")
        .output()
        .unwrap();
    assert_eq!(unknown.status.code(), Some(2));
    assert!(text(&unknown.stderr).contains("cordon run [--policy"));
    assert!(
        text(&unknown.stderr).starts_with("cordon: unknown command \"frobnicate\""),
        "{}",
        text(&unknown.stderr)
    );
    let typo = std::process::Command::new(CORDON)
        .arg("doctr")
        .output()
        .unwrap();
    assert!(
        text(&typo.stderr).contains("did you mean doctor?"),
        "{}",
        text(&typo.stderr)
    );
}

#[test]
fn launcher_messages_name_the_flags_typed_not_the_js_options() {
    let out = run(&["--bwrap", "relative/bwrap", "--", "/bin/true"], b"");
    assert_eq!(out.status.code(), Some(125), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("--bwrap"), "{stderr}");
    assert!(!stderr.contains("options."), "{stderr}");
}

#[test]
fn a_stdout_reader_that_goes_away_does_not_stop_the_program_from_draining() {
    require_sandbox!();
    let (mut child, stdout) = start_until_ready(&[
        "--",
        SH,
        "-c",
        "echo ready >&3; i=0; while [ $i -lt 20000 ]; do echo line$i >&3; i=$((i+1)); done; exit 4",
    ]);
    drop(stdout);
    drop(child.stdin.take());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(4));
}

#[test]
fn env_options_reach_the_program_and_nothing_else_of_ours_does() {
    require_sandbox!();
    let out = run(
        &[
            "--env",
            "GREETING=hello world",
            "--env",
            "EMPTY=",
            "--",
            "/usr/bin/env",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    let mut lines: Vec<&str> = stderr.lines().collect();
    lines.sort_unstable();
    assert_eq!(lines, vec!["EMPTY=", "GREETING=hello world"]);
}

/// `cordon run --deadline-ms 300 --receipt … -- sleep 30`, stdin empty, from
/// a provider that ignores SIGTERM when `provider_ignores_sigterm`. No
/// signal, no stdin EOF trick: only the launcher's own timer ends it.
/// Checks the reason `deadline` and that the ladder's SIGTERM ended sleep
/// (bwrap reports 128 + SIGTERM); returns the receipt.
fn sleep_past_a_deadline(provider_ignores_sigterm: bool) -> serde_json::Value {
    use std::os::unix::process::CommandExt;
    let dir = TempDir::new("deadline");
    let receipt_path = dir.path("r.json");
    let mut cmd = std::process::Command::new(CORDON);
    cmd.args(["run", "--receipt", &receipt_path, "--deadline-ms", "300"])
        .args(["--", "/usr/bin/sleep", "30"])
        .stdin(std::process::Stdio::null());
    if provider_ignores_sigterm {
        // SAFETY: the closure only calls signal(2) with SIG_IGN in the
        // forked child (async-signal-safe, no handler code).
        unsafe {
            cmd.pre_exec(|| {
                nix::sys::signal::signal(
                    nix::sys::signal::Signal::SIGTERM,
                    nix::sys::signal::SigHandler::SigIgn,
                )
                .map(|_| ())
                .map_err(std::io::Error::from)
            });
        }
    }
    let out = cmd.output().expect("run cordon");
    let receipt = receipt(&receipt_path);
    assert_eq!(
        out.status.code(),
        Some(128 + libc::SIGTERM),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(receipt["stop"]["reason"], "deadline", "{receipt}");
    receipt
}

#[test]
fn deadline_ms_stops_the_run_with_reason_deadline() {
    require_sandbox!();
    let receipt = sleep_past_a_deadline(false);
    assert_eq!(receipt["stop"]["gracefulStopAttempted"], true);
    assert_eq!(receipt["stop"]["containmentConfirmed"], true);
}

#[test]
fn a_deadline_out_of_range_is_refused_before_anything_runs() {
    require_sandbox!();
    for bad in ["0", "2147483648"] {
        let out = run(&["--deadline-ms", bad, "--", "/usr/bin/true"], b"");
        let stderr = text(&out.stderr);
        assert!(
            stderr.contains("ERR_CORDON_INVALID_OPTIONS")
                && stderr.contains("--deadline-ms: must be"),
            "{bad}: {stderr}"
        );
        assert_ne!(out.status.code(), Some(0));
    }
}

#[test]
fn a_provider_that_ignores_sigterm_does_not_hand_that_to_the_program() {
    require_sandbox!();
    // With SIG_IGN inherited, sleep would shrug off the graceful rung and
    // die of the forced one (137): sleep_past_a_deadline checks 128 + SIGTERM.
    let receipt = sleep_past_a_deadline(true);
    assert_eq!(receipt["stop"]["forcedStopAttempted"], false, "{receipt}");
}

#[test]
fn cordon_run_exits_after_its_control_root_is_removed() {
    require_sandbox!();
    // The root is removed after `Finished` (so the run settles first);
    // cordon run used to exit before that, leaving `<id>.removing` for the
    // next sweep (3 runs: 2 left one before the fix).
    let dir = TempDir::new("root-removed");
    for _ in 0..6 {
        let out = std::process::Command::new(CORDON)
            .args(["run", "--", "/bin/true"])
            .env("TMPDIR", &dir.0)
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run cordon");
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        // The base is `$TMPDIR/cordon-<uid>`, the only entry of `dir`.
        let base = std::fs::read_dir(&dir.0)
            .expect("TMPDIR")
            .map(|e| e.expect("entry").path())
            .find(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("cordon-"))
            })
            .expect("the control-root base");
        let left: Vec<String> = std::fs::read_dir(&base)
            .expect("the control-root base")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .filter(|name| name != "exec")
            .collect();
        assert!(left.is_empty(), "left behind: {left:?}");
    }
}
