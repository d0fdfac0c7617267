//! `cordon host` killed with SIGKILL mid-run (docs/remote.md § Crash
//! recovery): the sandbox dies with it, and the next host on the same
//! `stateDir` sweeps what was left and keeps a `host-lost` receipt that a
//! reconnecting client can fetch — a real host child process, real bwrap.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[macro_use]
mod support;
mod host_support;

use std::time::{Duration, Instant};

use base64::Engine;
use host_support::*;
use serde_json::{json, Value};

/// Every live (not zombie) descendant of `root`, from /proc.
fn descendants(root: u32) -> Vec<u32> {
    let parents: Vec<(u32, u32)> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // "pid (comm) state ppid …": comm may hold spaces and ')'.
            let rest = &stat[stat.rfind(')')? + 2..];
            let mut fields = rest.split(' ');
            let state = fields.next()?;
            let ppid = fields.next()?.parse().ok()?;
            (state != "Z").then_some((pid, ppid))
        })
        .collect();
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        found.extend(parents.iter().filter(|p| p.1 == parent).map(|p| p.0));
        i += 1;
    }
    found.remove(0);
    found
}

fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rfind(')').map(|i| s[i + 2..].starts_with('Z')))
        .is_some_and(|zombie| !zombie)
}

#[test]
fn a_run_whose_host_was_killed_gets_a_host_lost_receipt_from_the_next_host_and_its_leftovers_go() {
    require_sandbox!();
    let tokens = json!({sha256_hex("token-a"): "tenant-a", sha256_hex("token-b"): "tenant-b"});
    let mut host = HostProcess::start("host-recover", json!({"tokens": tokens}));
    let state = host.dir.path().join("state");
    let mut client = hello(&host, "token-a");
    let data = base64::engine::general_purpose::STANDARD.encode(b"hi");
    client.send_json(UPLOAD, &json!({"path": "in.txt", "data": data}));
    let started = client.spawn(
        &["-c", "echo ready >&3; exec sleep 300"],
        json!({"policy": read_only(), "invocationId": "lost-1"}),
    );
    assert!(started["pid"].is_u64(), "{started}");
    let (kind, payload) = client.recv().expect("ready");
    assert_eq!((kind, payload.as_slice()), (DATA, &b"ready\n"[..]));
    let sandbox = descendants(host.child.id());
    assert!(sandbox.len() >= 2, "bwrap and the program: {sandbox:?}");
    let workspaces = || std::fs::read_dir(state.join("workspaces")).unwrap().count();
    assert_eq!(workspaces(), 1, "the session's uploaded workspace");
    // A receipt the killed host was half-way through writing.
    std::fs::write(state.join("receipts/.x.0123abcd.json.AbC123.tmp"), "{\"rec").unwrap();

    host.kill_hard();
    // pdeathsig on bwrap (armed before exec) and its --die-with-parent:
    // the whole sandbox goes with the host, before any new host exists.
    let until = Instant::now() + Duration::from_secs(10);
    while sandbox.iter().any(|&pid| running(pid)) {
        assert!(
            Instant::now() < until,
            "sandbox outlived its host: {sandbox:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(client.recv().is_none(), "the connection died with the host");
    assert_eq!(workspaces(), 1, "nothing cleaned up the workspace yet");

    host.restart();
    assert_eq!(
        workspaces(),
        0,
        "the new host removed the lost session's workspace"
    );
    let receipts_dir: Vec<String> = std::fs::read_dir(state.join("receipts"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        receipts_dir.iter().all(|n| !n.ends_with(".tmp")),
        "{receipts_dir:?}"
    );
    assert_eq!(std::fs::read_dir(state.join("runs")).unwrap().count(), 0);

    let found = query(&host, "token-a", "lost-1");
    assert_eq!(found.len(), 1, "{found:?}");
    let receipt = &found[0];
    assert_eq!(receipt["invocationId"], "lost-1");
    assert_eq!(receipt["outcome"]["status"], "host-lost", "{receipt}");
    assert_eq!(receipt["stop"]["reason"], "host-lost");
    // Nothing observed the end: no exit data is made up.
    for field in ["exitCode", "signal"] {
        assert_eq!(receipt["outcome"][field], Value::Null, "{receipt}");
    }
    assert_eq!(receipt["endedAt"], Value::Null);
    assert!(receipt["startedAt"].is_string(), "{receipt}");
    assert_eq!(receipt["remote"]["tenant"], "tenant-a");
    // Another tenant cannot see it; an unknown id has none.
    assert!(query(&host, "token-b", "lost-1").is_empty());
    assert!(query(&host, "token-a", "lost-2").is_empty());
}

#[test]
fn a_finished_runs_receipt_is_fetched_by_its_tenant_and_leaves_no_run_marker() {
    require_sandbox!();
    let tokens = json!({sha256_hex("token-a"): "tenant-a"});
    let host = HostProcess::start("host-fetch", json!({"tokens": tokens}));
    let mut client = hello(&host, "token-a");
    client.spawn(
        &["-c", "exit 3"],
        json!({"policy": read_only(), "invocationId": "done.1"}),
    );
    let (_, _, exit) = client.run_to_exit();
    assert_eq!(exit["returncode"], 3, "{exit}");
    drop(client);
    let found = query(&host, "token-a", "done.1");
    assert_eq!(found.len(), 1);
    assert_eq!(found[0], exit["receipt"]);
    // The id "done" is a prefix of "done.1": it is not the same run.
    assert!(query(&host, "token-a", "done").is_empty());
    let runs = host.dir.path().join("state/runs");
    assert_eq!(std::fs::read_dir(runs).unwrap().count(), 0);
}

#[test]
fn a_second_host_on_the_same_state_dir_refuses_to_start() {
    let host = HostProcess::start("host-lock", json!({}));
    let config: Value =
        serde_json::from_slice(&std::fs::read(host.dir.path().join("host.json")).unwrap()).unwrap();
    let mut second = config.clone();
    second["listen"] = json!({"unix": host.dir.path().join("other.sock")});
    let path = host.dir.path().join("second.json");
    std::fs::write(&path, second.to_string()).unwrap();
    let (status, stderr) = start_refused(&path);
    assert_eq!(status, Some(125));
    assert!(
        stderr.contains("another host uses this stateDir"),
        "{stderr}"
    );
}
