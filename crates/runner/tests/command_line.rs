//! §2 and §3: the command line, its diagnostics and exit code 2.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

const RUNNER: &str = env!("CARGO_BIN_EXE_cordon-runner");

fn runner(args: &[&str]) -> (Option<i32>, String, String) {
    let output = Command::new(RUNNER).args(args).output().expect("spawn");
    let text = |bytes: Vec<u8>| String::from_utf8(bytes).expect("utf-8");
    (
        output.status.code(),
        text(output.stdout),
        text(output.stderr),
    )
}

#[test]
fn version_prints_the_bare_version_and_exits_0() {
    assert_eq!(
        runner(&["--version"]),
        (Some(0), "0.1.0\n".to_owned(), String::new())
    );
}

#[test]
fn help_lists_every_flag_on_stdout_and_exits_0() {
    let (code, stdout, _) = runner(&["--help"]);
    assert_eq!(code, Some(0));
    for flag in [
        "--fd",
        "--memory-bytes",
        "--stack-bytes",
        "--timeout-ms",
        "--max-calls",
        "--max-frame-bytes",
        "--max-result-bytes",
        "--max-log-bytes",
        "--version",
        "--help",
    ] {
        assert!(stdout.contains(flag), "--help does not list {flag}");
    }
}

#[test]
fn range_errors_exit_2_with_an_out_of_range_diagnostic_line() {
    for args in [
        ["--max-frame-bytes", "18446744073709551615"],
        ["--fd", "2147483648"],
        ["--timeout-ms", "0"],
        ["--max-calls", "123456789012345678901234567890"],
        ["--stack-bytes", "16777217"],
    ] {
        let (code, stdout, stderr) = runner(&args);
        assert_eq!(code, Some(2), "{args:?}");
        assert!(stdout.is_empty());
        assert!(stderr.contains("out-of-range"), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    }
}

#[test]
fn missing_bad_and_unknown_options_exit_2_naming_the_option() {
    for (args, named) in [
        (&["--memory-bytes"][..], "--memory-bytes"),
        (&["--stack-bytes", "-5"][..], "--stack-bytes"),
        (&["--max-result-bytes", "12kb"][..], "--max-result-bytes"),
        (&["--frobnicate", "1"][..], "--frobnicate"),
    ] {
        let (code, _, stderr) = runner(args);
        assert_eq!(code, Some(2), "{args:?}");
        assert!(stderr.contains(named), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    }
}

#[test]
fn a_descriptor_that_is_not_open_exits_2_as_an_unreadable_first_frame() {
    let (code, _, stderr) = runner(&["--fd", "987"]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("987"), "{stderr}");
}
