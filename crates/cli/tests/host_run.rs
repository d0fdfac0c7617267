//! `cordon host` over a Unix socket, running sandboxes: relay, clamps,
//! admission, disconnects, liveness, flow control — a real host child
//! process, real bwrap and a raw frame client (docs/remote.md).

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[macro_use]
mod support;
mod host_support;

use std::time::{Duration, Instant};

use base64::Engine;
use host_support::*;
use serde_json::json;

#[test]
fn a_session_uploads_runs_relays_fd_3_and_stderr_as_bytes_and_exits_with_the_receipt() {
    require_sandbox!();
    let host = HostProcess::start("host-run", json!({}));
    let (mut client, welcome) = host.session();
    assert_eq!(welcome["v"], 1);
    assert_eq!(welcome["host"]["transport"], "unix");
    assert_eq!(welcome["host"]["auth"], "peercred");
    assert_eq!(welcome["programs"], json!(["sh"]));
    assert_eq!(welcome["tenant"], format!("uid:{}", nix_uid()));
    let data = base64::engine::general_purpose::STANDARD.encode(b"uploaded\n");
    client.send_json(UPLOAD, &json!({"path": "dir/in.txt", "data": data}));
    let script = "cat /workspace/dir/in.txt >&3; tr a-z A-Z <&3 >&3; echo oops >&2; exit 3";
    let started = client.spawn(
        &["-c", script],
        json!({"policy": read_only(), "invocationId": "run-1", "deadlineMs": 60_000}),
    );
    assert_eq!(started["invocationId"], "run-1");
    assert!(started["pid"].as_u64().is_some(), "{started}");
    assert_eq!(started["clamped"], json!({}));
    client.send(DATA, b"hello\n");
    client.send(END, b"");
    let (fd3, stderr, exit) = client.run_to_exit();
    assert_eq!(String::from_utf8_lossy(&fd3), "uploaded\nHELLO\n");
    assert_eq!(String::from_utf8_lossy(&stderr), "oops\n");
    assert_eq!(exit["returncode"], 3);
    assert_eq!(exit["signal"], json!(null));
    assert_eq!(exit["networkReceipts"], json!([]));
    let remote = &exit["receipt"]["remote"];
    assert_eq!(remote["transport"], "unix");
    assert_eq!(remote["auth"], "peercred");
    assert_eq!(remote["hostVersion"], env!("CARGO_PKG_VERSION"));
    assert_eq!(host.kept_receipt("run-1")["invocationId"], "run-1");
    let state = host.dir.path().join("state");
    assert_eq!(mode(&state.join("workspaces")), 0o711);
    assert_eq!(mode(&state.join("receipts")), 0o700);
    // receipts/<tenant dir>/i-run-1/<file>: 0700, 0700, 0600.
    let kept = host.kept_receipt_file("run-1");
    assert_eq!(mode(&kept), 0o600);
    assert_eq!(mode(kept.parent().unwrap()), 0o700);
    assert_eq!(mode(kept.parent().unwrap().parent().unwrap()), 0o700);
    assert!(client.recv().is_none(), "the host closes after exit");
}

#[test]
fn a_deadline_above_the_hosts_ceiling_is_clamped_and_the_receipt_says_so() {
    require_sandbox!();
    let host = HostProcess::start(
        "host-clamp",
        json!({"ceilings": {"deadlineMs": 300, "processes": 16}}),
    );
    let (mut client, _) = host.session();
    let started = client.spawn(
        &["-c", "sleep 30"],
        json!({"policy": read_only(), "deadlineMs": 60_000}),
    );
    let expected = json!({
        "deadlineMs": {"requested": 60_000, "applied": 300},
        "processes": {"requested": null, "applied": 16},
    });
    assert_eq!(started["clamped"], expected);
    let (_, _, exit) = client.run_to_exit();
    let receipt = &exit["receipt"];
    assert_eq!(receipt["stop"]["reason"], "deadline", "{receipt}");
    assert_eq!(receipt["remote"]["clamped"], expected);
    assert_eq!(receipt["policy"]["resources"]["processes"], 16);
}

#[test]
fn a_stop_grace_above_the_hosts_ceiling_is_clamped_so_a_clamped_deadline_still_ends_the_run() {
    require_sandbox!();
    let host = HostProcess::start(
        "host-grace",
        json!({"ceilings": {"deadlineMs": 300, "stopMs": 200}}),
    );
    let (mut client, _) = host.session();
    // A program that ignores SIGTERM (sleep inherits the ignored signal)
    // and a grace of 10 minutes: unclamped, the 300 ms deadline ceiling
    // became 10 minutes and the sleep ran to its end (round 6, R6-2).
    let started = client.spawn(
        &["-c", "trap '' TERM; sleep 12; exit 7"],
        json!({"policy": read_only(), "stop": {"graceMs": 600_000, "forceMs": 600_000}}),
    );
    let (_, _, exit) = client.run_to_exit();
    assert_eq!(exit["receipt"]["stop"]["reason"], "deadline", "{exit}");
    assert_ne!(
        exit["returncode"], 7,
        "the run outlived its deadline: {exit}"
    );
    assert_eq!(
        started["clamped"]["stop.graceMs"],
        json!({"requested": 600_000, "applied": 200}),
        "{started}"
    );
    assert_eq!(
        started["clamped"]["stop.forceMs"],
        json!({"requested": 600_000, "applied": 200})
    );
    assert_eq!(
        exit["receipt"]["remote"]["clamped"]["stop.graceMs"]["applied"],
        200
    );
}

#[test]
fn the_session_cap_plus_one_is_refused_with_retry_after_never_queued() {
    require_sandbox!();
    let admission = json!({"maxSessions": 1, "retryAfterMs": 1234});
    let host = HostProcess::start("host-cap", json!({"admission": admission}));
    let (mut first, _) = host.session();
    let started = first.spawn(&["-c", "sleep 30"], json!({"policy": read_only()}));
    assert!(started["pid"].is_u64(), "{started}");
    let (mut second, _) = host.session();
    let refused = second.spawn(&["-c", "true"], json!({"policy": read_only()}));
    assert_eq!(refused["code"], "ERR_CORDON_HOST_BUSY", "{refused}");
    assert_eq!(refused["retryAfterMs"], 1234);
    first.send_json(STOP, &json!({}));
    let (_, _, exit) = first.run_to_exit();
    assert_eq!(exit["receipt"]["stop"]["reason"], "stop");
    // The slot is free again.
    let (mut third, _) = host.session();
    let started = third.spawn(&["-c", "exit 0"], json!({"policy": read_only()}));
    assert!(started["pid"].is_u64(), "{started}");
}

#[test]
fn a_client_that_disconnects_mid_run_has_its_sandbox_stopped_with_reason_disconnect() {
    require_sandbox!();
    let host = HostProcess::start("host-disconnect", json!({}));
    let (client, pid) = running_sleeper(&host, "gone-1");
    drop(client);
    // The ladder: graceMs 1000 + forceMs 1000 by default; slack for load.
    assert!(
        gone_within(pid, Duration::from_secs(10)),
        "sandbox {pid} still running"
    );
    let receipt = host.kept_receipt("gone-1");
    assert_eq!(receipt["stop"]["reason"], "disconnect", "{receipt}");
    assert_eq!(receipt["stop"]["containmentConfirmed"], true);
}

#[test]
fn a_client_that_stops_answering_pings_is_a_disconnect() {
    require_sandbox!();
    let liveness = json!({"pingIntervalMs": 100, "pongTimeoutMs": 400});
    let host = HostProcess::start("host-pong", json!({"liveness": liveness}));
    let (_client, pid) = running_sleeper(&host, "mute-1");
    // The client stays connected but never answers.
    assert!(
        gone_within(pid, Duration::from_secs(10)),
        "sandbox {pid} still running"
    );
    assert_eq!(host.kept_receipt("mute-1")["stop"]["reason"], "disconnect");
}

#[test]
fn a_client_that_stops_reading_while_the_sandbox_floods_fd_3_costs_the_host_flat_memory() {
    require_sandbox!();
    let host = HostProcess::start("host-flood", json!({}));
    let (mut client, _) = host.session();
    let started = client.spawn(
        &["-c", "exec /usr/bin/yes flood >&3"],
        json!({"policy": read_only()}),
    );
    assert!(started["pid"].is_u64(), "{started}");
    // Let the windows and socket buffers fill, then measure twice.
    std::thread::sleep(Duration::from_millis(1500));
    let before = host.rss_kb();
    std::thread::sleep(Duration::from_secs(3));
    let after = host.rss_kb();
    eprintln!("host RSS, client not reading: {before} kB -> {after} kB");
    // Unbounded buffering grows by hundreds of MiB/s here; 16 MiB is noise.
    assert!(
        after < before + 16 * 1024,
        "host RSS grew from {before} kB to {after} kB while the client did not read"
    );
    client.send_json(STOP, &json!({}));
    let (fd3, _, exit) = client.run_to_exit();
    assert!(
        fd3.len() >= 256 * 1024,
        "the window's worth arrives: {}",
        fd3.len()
    );
    assert_eq!(exit["receipt"]["stop"]["reason"], "stop");
}

/// A sandbox running `yes` on `fd` (3: fd 3, 2: stderr), and a client that
/// grants that stream credit far past the socket's buffers and reads
/// nothing from here on. Returns the client and the sandbox's pid.
fn flooding_unread(host: &HostProcess, fd: u8, id: &str) -> (Client, u64) {
    let (mut client, _) = host.session();
    let started = client.spawn(
        &["-c", &format!("exec /usr/bin/yes flood >&{fd}")],
        json!({"policy": read_only(), "invocationId": id}),
    );
    let pid = started["pid"].as_u64().expect("pid");
    client.credit(if fd == 3 { 0 } else { 1 }, 1 << 30);
    (client, pid)
}

#[test]
fn a_client_that_grants_credit_but_stops_reading_is_a_disconnect_at_the_write_stall_bound() {
    require_sandbox!();
    // Pings and the whole-write bound far away (10 minutes): only the
    // stall bound can end this run while the test waits.
    let liveness =
        json!({"pingIntervalMs": 600_000, "pongTimeoutMs": 600_000, "writeStallMs": 500});
    let host = HostProcess::start("host-stall", json!({"liveness": liveness}));
    let before = host.rss_kb();
    // The host's writes block on the full socket and make no progress.
    let (mut client, pid) = flooding_unread(&host, 3, "stall-1");
    assert!(
        gone_within(pid, Duration::from_secs(30)),
        "sandbox {pid} still running: a client that reads nothing was not cut at writeStallMs"
    );
    let receipt = host.kept_receipt("stall-1");
    assert_eq!(receipt["stop"]["reason"], "disconnect", "{receipt}");
    assert_eq!(receipt["stop"]["containmentConfirmed"], true);
    let after = host.rss_kb();
    eprintln!("host RSS, client stopped reading: {before} kB -> {after} kB");
    // Unbounded buffering of `yes` grows by hundreds of MiB/s; 16 MiB is noise.
    assert!(
        after < before + 16 * 1024,
        "host RSS grew from {before} kB to {after} kB"
    );
    // The host closed the connection: what it had written, then the end.
    let _ = client.read_to_close();
}

#[test]
fn a_client_that_sends_past_its_window_is_closed_and_its_sandbox_stopped() {
    require_sandbox!();
    let host = HostProcess::start("host-window", json!({}));
    let (mut client, _) = host.session();
    // The program never reads fd 3: nothing is acknowledged.
    let started = client.spawn(
        &["-c", "exec sleep 60"],
        json!({"policy": read_only(), "invocationId": "greedy-1"}),
    );
    let pid = started["pid"].as_u64().expect("pid");
    let chunk = vec![b'x'; 64 * 1024];
    // The socketpair's buffer absorbs some and its credit comes back; 8 MiB
    // sent without waiting for credit is past the window whatever it holds.
    for _ in 0..128 {
        client.send(DATA, &chunk);
    }
    assert!(
        gone_within(pid, Duration::from_secs(10)),
        "sandbox {pid} still running"
    );
    assert_eq!(
        host.kept_receipt("greedy-1")["stop"]["reason"],
        "disconnect"
    );
}

#[test]
fn a_client_that_returns_no_credit_receives_at_most_its_window_and_the_host_holds_no_more() {
    require_sandbox!();
    let host = HostProcess::start("host-credit", json!({}));
    let (mut client, _) = host.session();
    let started = client.spawn(
        &["-c", "exec /usr/bin/yes flood >&3"],
        json!({"policy": read_only()}),
    );
    assert!(started["pid"].is_u64(), "{started}");
    // Read every frame off the socket for a while, but grant nothing.
    client
        .stream
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let mut received = 0usize;
    let mut rss = Vec::new();
    let began = Instant::now();
    while began.elapsed() < Duration::from_secs(4) {
        match client.recv_or_idle() {
            Some((DATA, payload)) => received += payload.len(),
            Some((PING, payload)) => client.send(PONG, &payload),
            Some(_) => {}
            None => rss.push(host.rss_kb()),
        }
    }
    assert_eq!(received, 256 * 1024, "exactly the initial window, no more");
    let (first, last) = (rss[0], *rss.last().unwrap());
    eprintln!("host RSS, no credit returned: {first} kB -> {last} kB");
    assert!(
        last < first + 16 * 1024,
        "host RSS grew from {first} kB to {last} kB with no credit returned"
    );
    client
        .stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    // A client catching up returns the credit of what it read.
    client.credit(0, received);
    client.send_json(STOP, &json!({}));
    let (_, _, exit) = client.run_to_exit();
    assert_eq!(exit["receipt"]["stop"]["reason"], "stop");
}

#[test]
fn a_frame_out_of_order_or_data_after_end_is_a_disconnect() {
    require_sandbox!();
    let host = HostProcess::start("host-order", json!({}));
    let (mut client, pid) = running_sleeper(&host, "order-1");
    client.send_json(UPLOAD, &json!({"path": "late.txt", "data": ""}));
    assert!(
        gone_within(pid, Duration::from_secs(10)),
        "sandbox {pid} still running"
    );
    assert_eq!(host.kept_receipt("order-1")["stop"]["reason"], "disconnect");
    let (mut client, pid) = running_sleeper(&host, "order-2");
    client.send(END, b"");
    client.send(DATA, b"after the end");
    assert!(
        gone_within(pid, Duration::from_secs(10)),
        "sandbox {pid} still running"
    );
    assert_eq!(host.kept_receipt("order-2")["stop"]["reason"], "disconnect");
}

#[test]
fn a_client_slow_to_take_one_stream_still_has_its_stop_obeyed_at_once_not_at_the_write_bound() {
    require_sandbox!();
    // The write bound is long: a relay that waits on its write to the client
    // before reading the client's next frame obeys `stop` only after it.
    let liveness =
        json!({"pingIntervalMs": 60_000, "pongTimeoutMs": 60_000, "writeStallMs": 60_000});
    let host = HostProcess::start("host-slow", json!({"liveness": liveness}));
    // The host's writes of stderr block on the full socket.
    let (mut client, pid) = flooding_unread(&host, 2, "slow-1");
    std::thread::sleep(Duration::from_millis(1500));
    client.send_json(STOP, &json!({}));
    assert!(
        gone_within(pid, Duration::from_secs(15)),
        "sandbox {pid} still running: the stop waited behind a blocked write"
    );
    let (_, stderr, exit) = client.run_to_exit();
    assert!(stderr.len() >= 64 * 1024, "{}", stderr.len());
    assert_eq!(exit["receipt"]["stop"]["reason"], "stop", "{exit}");
}
