//! `cordon host` over a Unix socket: a real host child process, real
//! sandboxes, a raw client speaking the frames of docs/remote.md.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[macro_use]
mod support;
mod host_support;

use std::time::{Duration, Instant};

use base64::Engine;
use host_support::*;
use serde_json::json;
use sha2::Digest;

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
    assert!(client.recv().is_none(), "the host closes after exit");
}

#[test]
fn a_peer_uid_not_in_allow_uids_is_closed_without_a_byte() {
    require_sandbox!();
    let other = nix_uid().wrapping_add(54_321);
    let host = HostProcess::start("host-uid", json!({"allowUids": [other]}));
    let mut client = host.connect();
    client.send_json(HELLO, &json!({"v": 1}));
    assert_eq!(client.read_to_close(), b"");
}

#[test]
fn a_wrong_or_missing_token_is_closed_silently_and_the_right_one_names_its_tenant() {
    require_sandbox!();
    let digest: String = sha2::Sha256::digest(b"right-token")
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let host = HostProcess::start("host-token", json!({"tokens": {digest: "acme"}}));
    for hello in [json!({"v": 1, "token": "wrong-token"}), json!({"v": 1})] {
        let mut client = host.connect();
        client.send_json(HELLO, &hello);
        assert_eq!(client.read_to_close(), b"", "{hello}");
    }
    let mut client = host.connect();
    client.send_json(HELLO, &json!({"v": 1, "token": "right-token"}));
    let welcome = client.expect_json(WELCOME);
    assert_eq!(welcome["tenant"], "acme");
    assert_eq!(welcome["host"]["auth"], "peercred+token");
}

#[test]
fn a_silent_client_is_closed_after_the_first_frame_bound() {
    require_sandbox!();
    let host = HostProcess::start("host-silent", json!({"handshake": {"firstFrameMs": 300}}));
    let mut client = host.connect();
    let began = Instant::now();
    assert_eq!(client.read_to_close(), b"");
    // Closed by the bound, not by the test's own read timeout (20 s).
    assert!(
        began.elapsed() < Duration::from_secs(10),
        "{:?}",
        began.elapsed()
    );
}

#[test]
fn an_oversize_frame_closes_the_connection_before_its_payload_is_read() {
    require_sandbox!();
    let host = HostProcess::start("host-oversize", json!({}));
    // Before hello: a 2 MiB hello header alone.
    let mut client = host.connect();
    let mut head = ((2 << 20) as u32).to_be_bytes().to_vec();
    head.push(HELLO);
    std::io::Write::write_all(&mut client.stream, &head).unwrap();
    assert_eq!(client.read_to_close(), b"");
    // After welcome: a data frame one byte over 64 KiB, header only.
    let (mut client, _) = host.session();
    let mut head = ((64 * 1024 + 2) as u32).to_be_bytes().to_vec();
    head.push(DATA);
    std::io::Write::write_all(&mut client.stream, &head).unwrap();
    assert_eq!(client.read_to_close(), b"");
}

#[test]
fn an_unknown_program_and_a_policy_with_extra_binds_are_refused_with_their_codes() {
    require_sandbox!();
    let host = HostProcess::start("host-refuse", json!({}));
    let (mut client, _) = host.session();
    client.send_json(
        SPAWN,
        &json!({"program": "/bin/sh", "args": [], "options": {"policy": read_only()}}),
    );
    let refused = client.expect_json(REFUSED);
    assert_eq!(refused["code"], "ERR_CORDON_INVALID_OPTIONS", "{refused}");
    assert!(client.recv().is_none(), "the host closes after refused");
    let (mut client, _) = host.session();
    let mut policy = read_only();
    policy["filesystem"]["extra"] = json!([{"path": "/etc", "access": "read"}]);
    let refused = client.spawn(&["-c", "true"], json!({"policy": policy}));
    assert_eq!(refused["code"], "ERR_CORDON_UNSUPPORTED", "{refused}");
    // The launcher's own validation answers the rest (same codes as local).
    let (mut client, _) = host.session();
    let mut policy = read_only();
    policy["surprise"] = json!(true);
    let refused = client.spawn(&["-c", "true"], json!({"policy": policy}));
    assert_eq!(refused["code"], "ERR_CORDON_POLICY_INVALID", "{refused}");
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

/// Starts `sleep 60` after `ready` on fd 3; returns (client, bwrap pid).
fn running_sleeper(host: &HostProcess, id: &str) -> (Client, u64) {
    let (mut client, _) = host.session();
    let started = client.spawn(
        &["-c", "echo ready >&3; exec sleep 60"],
        json!({"policy": read_only(), "invocationId": id}),
    );
    let pid = started["pid"].as_u64().expect("pid");
    loop {
        let (kind, payload) = client.recv().expect("ready");
        if kind == DATA {
            assert_eq!(payload, b"ready\n");
            return (client, pid);
        }
    }
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

#[test]
fn an_upload_outside_the_workspace_is_refused_and_nothing_is_written() {
    require_sandbox!();
    let host = HostProcess::start("host-upload", json!({}));
    for path in ["../escape.txt", "/tmp/escape.txt", "a/../../escape.txt"] {
        let (mut client, _) = host.session();
        client.send_json(UPLOAD, &json!({"path": path, "data": "eA=="}));
        let refused = client.expect_json(REFUSED);
        assert_eq!(
            refused["code"], "ERR_CORDON_INVALID_OPTIONS",
            "{path}: {refused}"
        );
    }
    assert!(!host.dir.path().join("state/escape.txt").exists());
    assert!(!host.dir.path().join("escape.txt").exists());
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
    for _ in 0..5 {
        client.send(DATA, &chunk); // the fifth is past the 256 KiB window
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
fn a_second_host_on_a_live_socket_is_refused_and_sigterm_stops_sandboxes_and_removes_the_socket() {
    require_sandbox!();
    let mut host = HostProcess::start("host-stop", json!({}));
    let config = host.dir.path().join("host.json");
    let second = std::process::Command::new(support::CORDON)
        .args(["host", "--config"])
        .arg(&config)
        .output()
        .expect("second host");
    assert_eq!(second.status.code(), Some(125));
    assert!(String::from_utf8_lossy(&second.stderr).contains("another host is listening"));
    let (_client, pid) = running_sleeper(&host, "stopped-1");
    // SAFETY: kill(2) on our own unreaped child.
    unsafe { libc::kill(host.child.id() as i32, libc::SIGTERM) };
    let status = host.child.wait().expect("wait host");
    assert_eq!(status.code(), Some(0));
    assert!(
        !alive(pid),
        "the host exited with its sandbox {pid} running"
    );
    assert!(!host.socket.exists(), "the socket is removed");
    assert_eq!(host.kept_receipt("stopped-1")["stop"]["reason"], "signal");
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
