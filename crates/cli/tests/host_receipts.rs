//! The receipts a host keeps (docs/remote.md § Receipts kept on the host):
//! indexed by tenant and invocation id, each tenant reading only its own,
//! the same after the host restarts, and a state directory of the flat
//! layout (hosts before the index) moved into the index at start-up. A
//! real host child process, real bwrap runs.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[macro_use]
mod support;
mod host_support;

use host_support::*;
use serde_json::{json, Value};

/// Three tenants; one's name looks like a path.
const TENANTS: [(&str, &str); 3] = [
    ("token-a", "tenant-a"),
    ("token-b", "tenant-b"),
    ("token-c", "../ops/tenant-c"),
];

/// Runs `exit <status>` as `token`'s tenant under `invocation_id`.
fn run(host: &HostProcess, token: &str, invocation_id: &str, status: u32) -> Value {
    let mut client = hello(host, token);
    let started = client.spawn(
        &["-c", &format!("exit {status}")],
        json!({"policy": read_only(), "invocationId": invocation_id}),
    );
    assert!(started["pid"].is_u64(), "{started}");
    let (_, _, exit) = client.run_to_exit();
    assert_eq!(exit["returncode"], status, "{exit}");
    exit["receipt"].clone()
}

/// Each tenant's answer for `shared`: its own one receipt, nobody else's.
fn each_reads_its_own(host: &HostProcess, receipts: &[Value]) {
    for (i, (token, tenant)) in TENANTS.iter().enumerate() {
        let found = query(host, token, "shared");
        assert_eq!(found.len(), 1, "{tenant}: {found:?}");
        assert_eq!(found[0], receipts[i], "{tenant}");
        assert_eq!(found[0]["remote"]["tenant"], *tenant);
        // An id that names a path: never one of the index's directories.
        for id in ["../shared", "i-shared/..", "./shared"] {
            assert!(query(host, token, id).is_empty(), "{tenant} {id}");
        }
    }
}

#[test]
fn each_tenant_reads_only_its_own_receipts_of_a_shared_id_before_and_after_a_restart() {
    require_sandbox!();
    let tokens: serde_json::Map<String, Value> = TENANTS
        .iter()
        .map(|(token, tenant)| (sha256_hex(token), json!(tenant)))
        .collect();
    let mut host = HostProcess::start("host-receipts", json!({"tokens": tokens}));
    let receipts: Vec<Value> = TENANTS
        .iter()
        .enumerate()
        .map(|(i, (token, _))| run(&host, token, "shared", i as u32 + 1))
        .collect();
    each_reads_its_own(&host, &receipts);
    // The tenant whose name looks like a path wrote nothing outside the
    // receipts directory.
    let state = host.dir.path().join("state");
    let mut top: Vec<String> = std::fs::read_dir(&state)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    top.sort();
    assert_eq!(top, ["lock", "receipts", "runs", "workspaces"]);

    // A receipt of the flat layout, as a host before the index kept it.
    let flat = json!({"invocationId": "old-1", "outcome": {"status": "exited"},
                      "remote": {"tenant": "tenant-b"}});
    std::fs::write(state.join("receipts/old-1.0123abcd.json"), flat.to_string()).unwrap();
    host.stop();
    host.restart();
    each_reads_its_own(&host, &receipts);
    assert_eq!(query(&host, "token-b", "old-1"), [flat]);
    assert!(query(&host, "token-a", "old-1").is_empty());
    assert!(!state.join("receipts/old-1.0123abcd.json").exists());
}

/// The first start of a host upgraded from the flat layout does not wait
/// for the move (docs/remote.md § Receipts kept on the host): the host
/// says it listens before it says it moved them, and a query made at any
/// time — before, during or after the move — answers the flat receipts to
/// their tenant only.
#[test]
fn an_upgraded_host_listens_before_it_moves_the_flat_layout_and_answers_it_meanwhile() {
    let mut host = HostProcess::start("host-flat-move", json!({}));
    host.stop();
    let receipts = host.dir.path().join("state/receipts");
    let tenant = format!("uid:{}", nix_uid());
    const COUNT: usize = 2000;
    for i in 0..COUNT {
        let owner = if i % 2 == 0 {
            tenant.as_str()
        } else {
            "someone-else"
        };
        let receipt = json!({"invocationId": format!("old-{}", i / 2), "n": i,
                             "remote": {"tenant": owner}});
        std::fs::write(
            receipts.join(format!("old-{}.{i:08x}.json", i / 2)),
            receipt.to_string(),
        )
        .unwrap();
    }
    host.restart_capturing_stderr();
    // Whenever this runs relative to the move, the answer is the same.
    let first = query(&host, "any", "old-7");
    assert_eq!(first.len(), 1, "{first:?}");
    assert_eq!(first[0]["n"], 14);
    let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let moved = format!("moved {} receipt(s) of the flat layout", COUNT);
    while !host.stderr_text().contains(&moved) {
        assert!(std::time::Instant::now() < until, "{}", host.stderr_text());
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let text = host.stderr_text();
    let listening = text.find("listening on").expect("listening line");
    assert!(listening < text.find(&moved).unwrap(), "{text}");
    assert!(
        !text.contains("recovered"),
        "no sweep line: nothing was lost\n{text}"
    );
    assert_eq!(query(&host, "any", "old-7"), first);
    assert!(std::fs::read_dir(&receipts)
        .unwrap()
        .flatten()
        .all(|e| !e.file_name().to_string_lossy().ends_with(".json")));
}

/// The receipt files under `state/receipts`, at any depth.
fn receipt_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if entry.file_type().unwrap().is_dir() {
            out.extend(receipt_files(&path));
        } else if path.extension().is_some_and(|e| e == "json") {
            out.push(path);
        }
    }
    out
}

#[test]
fn receipts_past_the_per_tenant_count_or_the_age_are_pruned_and_answer_as_unknown_ids() {
    require_sandbox!();
    let tokens = json!({sha256_hex("token-a"): "tenant-a", sha256_hex("token-b"): "tenant-b"});
    let retention = json!({"maxPerTenant": 2, "pruneIntervalSeconds": 1});
    let mut host = HostProcess::start_capturing_stderr(
        "host-retention",
        json!({"tokens": tokens, "receipts": retention}),
    );
    let a: Vec<Value> = (1..=3)
        .map(|i| run(&host, "token-a", &format!("r{i}"), i))
        .collect();
    let b = run(&host, "token-b", "r1", 7);
    let receipts = host.dir.path().join("state/receipts");
    // The periodic pass (every second, off the network threads): tenant a
    // keeps its newest two, tenant b its only one.
    let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !query(&host, "token-a", "r1").is_empty() {
        assert!(std::time::Instant::now() < until, "r1 was never pruned");
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    assert_eq!(query(&host, "token-a", "r2"), [a[1].clone()]);
    assert_eq!(query(&host, "token-a", "r3"), [a[2].clone()]);
    assert_eq!(query(&host, "token-b", "r1"), [b]);
    assert_eq!(receipt_files(&receipts).len(), 3);
    let tenant_a = receipts.join(format!("t-{}", sha256_hex("tenant-a")));
    assert!(
        !tenant_a.join("i-r1").exists(),
        "the emptied id's directory goes"
    );
    assert!(
        host.stderr_text()
            .contains("removed 1 receipt(s) past config.receipts"),
        "{}",
        host.stderr_text()
    );

    // At start-up, before anything listens: a receipt older than
    // maxAgeSeconds (30 days by default) as a host long ago kept it.
    host.stop();
    let old = tenant_a.join("i-old");
    std::fs::create_dir(&old).unwrap();
    let planted = old.join("01000000000000000000.0123abcd.json");
    let receipt = json!({"invocationId": "old", "remote": {"tenant": "tenant-a"}});
    std::fs::write(&planted, receipt.to_string()).unwrap();
    host.restart();
    assert!(!planted.exists(), "pruned at start-up");
    assert_eq!(
        query(&host, "token-a", "old"),
        query(&host, "token-a", "never-run")
    );
    assert!(query(&host, "token-a", "old").is_empty());
    assert_eq!(query(&host, "token-a", "r3"), [a[2].clone()]);
}
