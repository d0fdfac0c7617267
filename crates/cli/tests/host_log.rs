//! `cordon host`'s structured log (docs/remote.md § Logging): one JSON line
//! per connection and per run, with who, what and how much — and never a
//! token, the program's text or an environment value. A real host child
//! process writing to its `logFile`, real bwrap.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[macro_use]
mod support;
mod host_support;

use std::time::{Duration, Instant};

use host_support::*;
use serde_json::{json, Value};

const TOKEN: &str = "tok-SECRET-5d1e0c";
const WRONG_TOKEN: &str = "tok-WRONG-a81f33";
const SCRIPT_MARKER: &str = "SCRIPT_TEXT_MARKER_3c9";
const FD3_TEXT: &str = "const secret = 'FD3_PROGRAM_TEXT_77'";
const ENV_VALUE: &str = "ENV_VALUE_SECRET_9b2";

/// The log's lines once `count` session lines are there (bounded wait).
fn lines_after_sessions(path: &std::path::Path, count: usize) -> (String, Vec<Value>) {
    let until = Instant::now() + Duration::from_secs(20);
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).expect("every log line is one JSON object"))
            .collect();
        if lines.iter().filter(|l| l["event"] == "session").count() >= count {
            return (text, lines);
        }
        assert!(Instant::now() < until, "log so far: {text}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn connect_with(host: &HostProcess, token: &str) -> Client {
    let mut client = host.connect();
    client.send_json(HELLO, &json!({"v": 1, "token": token}));
    client
}

#[test]
fn the_log_has_a_line_per_session_and_run_and_never_a_token_program_text_or_env_value() {
    require_sandbox!();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("host.log");
    let tokens = json!({ sha256_hex(TOKEN): "tenant-log" });
    let host = HostProcess::start("host-log", json!({"tokens": tokens, "logFile": log}));

    // A run: program text in its arguments and on fd 3, a secret in env.
    let mut client = connect_with(&host, TOKEN);
    assert_eq!(client.recv().expect("welcome").0, WELCOME);
    let script = format!("# {SCRIPT_MARKER}\ncat <&3 >&3; exit 4");
    let mut policy = read_only();
    policy["environment"] = json!({"allow": ["CANARY"]});
    let started = client.spawn(
        &["-c", &script],
        json!({"policy": policy, "invocationId": "logged-1", "env": {"CANARY": ENV_VALUE}}),
    );
    assert!(started["pid"].is_u64(), "{started}");
    client.send(DATA, FD3_TEXT.as_bytes());
    client.send(END, b"");
    let (fd3, _, exit) = client.run_to_exit();
    assert_eq!(fd3, FD3_TEXT.as_bytes());
    assert_eq!(exit["returncode"], 4);
    // The secrets did reach the host: the receipt records the argv.
    assert!(exit["receipt"].to_string().contains(SCRIPT_MARKER));
    drop(client);
    // A wrong token (closed silently) and a refused spawn.
    let mut wrong = connect_with(&host, WRONG_TOKEN);
    assert!(wrong.recv().is_none());
    let mut refused = connect_with(&host, TOKEN);
    assert_eq!(refused.recv().expect("welcome").0, WELCOME);
    refused.send_json(
        SPAWN,
        &json!({"program": "nope", "args": [], "options": {}}),
    );
    assert_eq!(refused.recv().expect("refused").0, REFUSED);
    drop(refused);

    let (text, lines) = lines_after_sessions(&log, 3);
    for secret in [
        TOKEN,
        WRONG_TOKEN,
        SCRIPT_MARKER,
        "FD3_PROGRAM_TEXT_77",
        ENV_VALUE,
    ] {
        assert!(!text.contains(secret), "{secret} is in the log:\n{text}");
    }
    let run = lines
        .iter()
        .find(|l| l["event"] == "run")
        .expect("a run line");
    assert_eq!(run["tenant"], "tenant-log", "{run}");
    assert_eq!(run["program"], "sh");
    assert_eq!(run["invocationId"], "logged-1");
    assert_eq!(run["exitCode"], 4);
    assert_eq!(run["bytes"]["protocolIn"], FD3_TEXT.len());
    assert!(run["durationMs"].is_u64(), "{run}");
    let session = |outcome: &str| {
        lines
            .iter()
            .find(|l| l["event"] == "session" && l["outcome"] == outcome)
            .unwrap_or_else(|| panic!("no {outcome} session line in {text}"))
    };
    let ran = session("ran");
    assert_eq!(ran["session"], run["session"]);
    assert_eq!(
        (ran["tenant"].as_str(), ran["runs"].as_u64()),
        (Some("tenant-log"), Some(1))
    );
    assert_eq!(ran["auth"], "peercred+token");
    assert!(ran["peer"]
        .as_str()
        .unwrap()
        .starts_with(&format!("uid:{} pid:", nix_uid())));
    // Frame headers included: more than the fd 3 bytes each way.
    assert!(
        ran["bytesIn"].as_u64().unwrap() > FD3_TEXT.len() as u64,
        "{ran}"
    );
    assert!(
        ran["bytesOut"].as_u64().unwrap() > FD3_TEXT.len() as u64,
        "{ran}"
    );
    assert!(ran["durationMs"].is_u64());
    assert_eq!(session("handshake-failed")["tenant"], Value::Null);
    let refusal = session("refused");
    assert_eq!(refusal["refused"], "ERR_CORDON_INVALID_OPTIONS");
    assert_eq!(refusal["runs"], 0);
}

/// Failed handshakes in a loop (docs/remote.md § Logging): the host writes
/// at most the bucket's burst of `handshake-failed` lines (plus what it
/// refilled meanwhile, one a minute here) and says how many it held back;
/// written plus held back is every failure, each counted once.
#[test]
fn handshake_failures_in_a_loop_write_at_most_the_bound_and_a_suppressed_count() {
    const BURST: u64 = 5;
    const FAILURES: u64 = 60;
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("host.log");
    let handshake = json!({"failureLogBurst": BURST, "failureLogPerMinute": 1});
    let mut host = HostProcess::start(
        "host-log-rate",
        json!({"logFile": log, "handshake": handshake}),
    );
    let began = Instant::now();
    for _ in 0..FAILURES {
        let mut bad = host.connect();
        bad.send_json(SPAWN, &json!({}));
        // Closed silently, once its line is counted or queued.
        assert!(bad.recv().is_none());
    }
    // A successful session still gets its line: the bound is on failures.
    drop(host.session());
    let until = Instant::now() + Duration::from_secs(20);
    while !std::fs::read_to_string(&log)
        .unwrap_or_default()
        .contains(r#""outcome":"closed""#)
    {
        assert!(
            Instant::now() < until,
            "no line for the session that closed"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let elapsed_minutes = began.elapsed().as_secs() / 60;
    // SIGTERM: the host says what it held back and writes its queue.
    host.stop();
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let written = lines
        .iter()
        .filter(|l| l["event"] == "session" && l["outcome"] == "handshake-failed")
        .count() as u64;
    let suppressed: u64 = lines
        .iter()
        .filter(|l| l["event"] == "handshake-failed-suppressed")
        .map(|l| l["lines"].as_u64().unwrap())
        .sum();
    // The refill is one line a minute: at most that many more than the burst.
    assert!(
        written <= BURST + elapsed_minutes + 1,
        "{written} lines:\n{text}"
    );
    assert!(written >= BURST, "{text}");
    assert_eq!(written + suppressed, FAILURES, "{text}");
}
