//! `cargo bench -p cordon-runner`: the runner side by side with its floors,
//! medians of repeated runs.
//!
//! (a) spawn → `ready` → terminal frame for `return 1`, versus spawning and
//!     reaping `/bin/true` (the process floor);
//! (b) one tool-call round trip inside an execution of 1000 sequential calls,
//!     versus a raw 100-byte echo round trip over a socketpair to a trivial
//!     Rust child (this benchmark re-executed in `--echo-child` mode);
//! (c) the same round trip with the concurrent-calls extension confirmed
//!     (each call a real Promise, K = 8), paired with (b)'s v1 trip;
//! plus the idle RSS of a runner waiting for `execute` and the binary size.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const BUILT_RUNNER: &str = env!("CARGO_BIN_EXE_cordon-runner");

/// The runner under test: the one cargo built, or `CORDON_RUNNER_BENCH_BIN`
/// (to compare two builds with the same harness).
fn runner() -> String {
    std::env::var("CORDON_RUNNER_BENCH_BIN").unwrap_or_else(|_| BUILT_RUNNER.to_owned())
}
const SPAWN_RUNS: usize = 200;
const ROUND_TRIPS: usize = 1000;
const ROUND_TRIP_RUNS: usize = 15;
const ECHO_BYTES: usize = 100;

fn main() {
    if std::env::args().any(|arg| arg == "--echo-child") {
        echo_child();
        return;
    }
    // Samples alternate between each pair so that both see the same load.
    let (runner_spawn, true_spawn) = paired(SPAWN_RUNS, spawn_to_terminal, spawn_true);
    let (tool_trip, echo_trip) = paired(ROUND_TRIP_RUNS, tool_round_trip, echo_round_trip);
    let (promised_trip, v1_trip) = paired(ROUND_TRIP_RUNS, promised_round_trip, tool_round_trip);
    let rss = idle_rss_kib();
    let size = std::fs::metadata(runner()).map(|m| m.len()).unwrap_or(0);
    println!("cordon-runner benchmark (medians; {} binary)", runner());
    println!("{:<44} {:>12} {:>12} {:>8}", "", "runner", "floor", "ratio");
    row(
        "(a) spawn -> ready -> terminal (`return 1`)",
        runner_spawn,
        true_spawn,
        "vs /bin/true, goal <= 2.0",
    );
    row(
        "(b) tool-call round trip (1000 sequential)",
        tool_trip,
        echo_trip,
        "vs 100-byte echo, goal <= 1.5",
    );
    row(
        "(c) same, concurrent-calls extension (K=8)",
        promised_trip,
        v1_trip,
        "vs (b)'s v1 trip, same run",
    );
    println!("idle RSS waiting for execute: {rss} KiB (goal <= 4096)");
    println!(
        "binary size: {size} bytes ({:.2} MiB)",
        size as f64 / 1_048_576.0
    );
}

fn row(label: &str, runner: Duration, floor: Duration, note: &str) {
    let ratio = runner.as_secs_f64() / floor.as_secs_f64();
    println!(
        "{label:<44} {:>10.1}µs {:>10.1}µs {ratio:>8.2}  {note}",
        micros(runner),
        micros(floor)
    );
}

fn micros(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}

fn paired(runs: usize, first: fn() -> Duration, second: fn() -> Duration) -> (Duration, Duration) {
    let (mut firsts, mut seconds) = (Vec::with_capacity(runs), Vec::with_capacity(runs));
    for _ in 0..runs {
        firsts.push(first());
        seconds.push(second());
    }
    (median(firsts), median(seconds))
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// Spawns `program` with one socketpair end as its fd 3.
fn spawn_with_bridge(program: &str, args: &[&str]) -> (Child, UnixStream) {
    let (ours, theirs) = UnixStream::pair().expect("socketpair");
    let theirs_fd = theirs.as_raw_fd();
    let mut command = Command::new(program);
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: only the async-signal-safe dup2 runs between fork and exec;
    // `theirs_fd` stays open in the parent until spawn returns (`theirs` is
    // dropped after it).
    unsafe {
        command.pre_exec(move || {
            if libc::dup2(theirs_fd, 3) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = command.spawn().expect("spawn");
    drop(theirs);
    (child, ours)
}

/// How the execute frame asks for tool calls.
#[derive(Clone, Copy)]
enum Calls {
    /// Plain code-bridge-v1: no `extensions` field.
    V1,
    /// The concurrent-calls extension with 8 outstanding calls.
    Promised,
}

fn execute_frame(code: &str, max_calls: usize) -> Vec<u8> {
    execute_frame_with(code, max_calls, Calls::V1)
}

fn execute_frame_with(code: &str, max_calls: usize, calls: Calls) -> Vec<u8> {
    let mut frame = serde_json::json!({"version": "code-bridge-v1", "type": "execute", "executionId": "bench",
        "code": code, "tools": [{"name": "echo"}],
        "limits": {"maxToolCalls": max_calls, "maxResultBytes": 1024, "timeoutMs": 60000}});
    if let Calls::Promised = calls {
        frame["extensions"] = serde_json::json!({"concurrentToolCalls": {"maxOutstanding": 8}});
    }
    let mut bytes = serde_json::to_vec(&frame).expect("json");
    bytes.push(b'\n');
    bytes
}

fn spawn_to_terminal() -> Duration {
    let frame = execute_frame("return 1", 0);
    let started = Instant::now();
    let (mut child, mut socket) = spawn_with_bridge(&runner(), &[]);
    socket.write_all(&frame).expect("execute");
    let mut lines = BufReader::new(socket.try_clone().expect("clone")).lines();
    assert!(lines
        .next()
        .expect("ready")
        .expect("read")
        .contains("\"ready\""));
    assert!(lines
        .next()
        .expect("terminal")
        .expect("read")
        .contains("\"ok\":true"));
    let elapsed = started.elapsed();
    child.wait().expect("wait");
    elapsed
}

fn spawn_true() -> Duration {
    let started = Instant::now();
    Command::new("/bin/true").status().expect("/bin/true");
    started.elapsed()
}

/// Per call: the time from the first `tool.call` to the terminal frame,
/// divided by the number of calls.
fn tool_round_trip() -> Duration {
    tool_round_trip_with(Calls::V1)
}

fn promised_round_trip() -> Duration {
    tool_round_trip_with(Calls::Promised)
}

fn tool_round_trip_with(calls: Calls) -> Duration {
    let code = format!("for (let i = 0; i < {ROUND_TRIPS}; i++) await tools.echo({{pad: 'x'.repeat(40)}}); return 1;");
    let (mut child, mut socket) =
        spawn_with_bridge(&runner(), &["--max-calls", &ROUND_TRIPS.to_string()]);
    socket
        .write_all(&execute_frame_with(&code, ROUND_TRIPS, calls))
        .expect("execute");
    let mut reader = BufReader::new(socket.try_clone().expect("clone"));
    let mut line = String::new();
    reader.read_line(&mut line).expect("ready");
    let mut started = None;
    loop {
        line.clear();
        reader.read_line(&mut line).expect("frame");
        let frame: serde_json::Value = serde_json::from_str(&line).expect("json");
        if frame["type"] != "tool.call" {
            assert_eq!(frame["ok"], true, "{frame}");
            break;
        }
        started.get_or_insert_with(Instant::now);
        let reply = format!(
            "{{\"version\":\"code-bridge-v1\",\"type\":\"tool.result\",\"id\":{},\"ok\":true,\"result\":{}}}\n",
            frame["id"], frame["arguments"]
        );
        socket.write_all(reply.as_bytes()).expect("reply");
    }
    let elapsed = started.expect("calls were made").elapsed();
    child.wait().expect("wait");
    elapsed / ROUND_TRIPS as u32
}

fn echo_round_trip() -> Duration {
    let program = std::env::current_exe().expect("own path");
    let (mut child, mut socket) =
        spawn_with_bridge(program.to_str().expect("utf-8 path"), &["--echo-child"]);
    let message = [b'x'; ECHO_BYTES];
    let mut answer = [0u8; ECHO_BYTES];
    // One warm-up trip so that process start-up is not counted.
    socket.write_all(&message).expect("echo");
    socket.read_exact(&mut answer).expect("echo");
    let started = Instant::now();
    for _ in 0..ROUND_TRIPS {
        socket.write_all(&message).expect("echo");
        socket.read_exact(&mut answer).expect("echo");
    }
    let elapsed = started.elapsed();
    drop(socket);
    child.wait().expect("wait");
    elapsed / ROUND_TRIPS as u32
}

/// The echo peer: returns every 100-byte message on fd 3 until EOF.
fn echo_child() {
    // SAFETY: the parent installed a socketpair end as fd 3 for this process
    // and nothing else here uses it.
    let mut socket = unsafe { UnixStream::from_raw_fd(3) };
    let mut message = [0u8; ECHO_BYTES];
    while socket.read_exact(&mut message).is_ok() {
        if socket.write_all(&message).is_err() {
            break;
        }
    }
}

fn idle_rss_kib() -> u64 {
    let (mut child, socket) = spawn_with_bridge(&runner(), &[]);
    std::thread::sleep(Duration::from_millis(200));
    let status =
        std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap_or_default();
    let rss = status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0);
    drop(socket);
    child.wait().expect("wait");
    rss
}
