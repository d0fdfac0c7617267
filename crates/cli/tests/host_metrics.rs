//! `cordon host` metrics: off by default (no listening socket but the
//! host's own), on → 127.0.0.1, and the counters move after a real run.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[macro_use]
mod support;
#[path = "support/pki.rs"]
mod pki;
#[path = "support/tls_host.rs"]
mod tls_host;

use std::io::{Read, Write};
use std::net::TcpStream;

use serde_json::json;
use tls_host::*;

/// Socket inodes of `pid`'s descriptors.
fn socket_inodes(pid: u32) -> Vec<String> {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter_map(|t| {
            let t = t.to_string_lossy().into_owned();
            Some(t.strip_prefix("socket:[")?.strip_suffix(']')?.to_string())
        })
        .collect()
}

/// The local `ip:port` (hex, as /proc/net/tcp spells it) of every
/// listening TCP socket `pid` holds.
fn listening(pid: u32) -> Vec<String> {
    let inodes = socket_inodes(pid);
    let mut found = Vec::new();
    for table in ["tcp", "tcp6"] {
        let text = std::fs::read_to_string(format!("/proc/{pid}/net/{table}")).unwrap();
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            // f[1] local address, f[3] state (0A = LISTEN), f[9] inode.
            if f[3] == "0A" && inodes.iter().any(|i| i == f[9]) {
                found.push(f[1].to_string());
            }
        }
    }
    found
}

fn scrape(address: &str) -> String {
    let mut stream = TcpStream::connect(address).unwrap();
    stream
        .write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let mut out = String::new();
    stream.read_to_string(&mut out).unwrap();
    out
}

fn value(text: &str, series: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or_else(|| panic!("{series} in {text}"))
}

#[test]
fn without_a_metrics_section_the_host_listens_on_its_tls_port_only() {
    let pki = pki::generate();
    let host = start_host(&pki, json!({}));
    assert!(
        host.before.iter().all(|l| !l.contains("metrics")),
        "{:?}",
        host.before
    );
    let ports = listening(host.child.id());
    assert_eq!(ports, vec![format!("0100007F:{:04X}", host.port)]);
}

#[test]
fn metrics_bind_loopback_and_count_a_run_its_stop_reason_and_a_failed_handshake() {
    require_sandbox!();
    let pki = pki::generate();
    let host = start_host(&pki, json!({"metrics": {"port": 0}}));
    let line = host
        .before
        .iter()
        .find(|l| l.contains("metrics on"))
        .unwrap();
    let address = line
        .split("http://")
        .nth(1)
        .and_then(|a| a.strip_suffix("/metrics"))
        .unwrap()
        .to_string();
    assert!(address.starts_with("127.0.0.1:"), "{address}");
    assert_eq!(listening(host.child.id()).len(), 2);
    let before = scrape(&address);
    assert_eq!(value(&before, "cordon_host_launches_total"), 0);

    let mut tls = connect(host.port, &pki, Some(&pki.client));
    hello(&mut tls, None).unwrap();
    let (_, exit) = run_to_exit(&mut tls, "exit 0");
    let exit: serde_json::Value = serde_json::from_str(&exit).unwrap();
    let reason = exit["receipt"]["stop"]["reason"]
        .as_str()
        .unwrap_or("none")
        .to_string();
    drop(tls);
    assert!(hello(&mut connect(host.port, &pki, Some(&pki.foreign)), None).is_none());

    // The host counts the failure just after it closed the socket.
    let mut after = scrape(&address);
    for _ in 0..100 {
        if value(&after, "cordon_host_handshake_failures_total") >= 1 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
        after = scrape(&address);
    }
    assert!(after.starts_with("HTTP/1.1 200 OK"), "{after}");
    assert_eq!(value(&after, "cordon_host_launches_total"), 1);
    assert_eq!(value(&after, "cordon_host_active_sessions"), 0);
    assert_eq!(value(&after, "cordon_host_launch_seconds_count"), 1);
    assert_eq!(
        value(
            &after,
            &format!("cordon_host_stops_total{{reason=\"{reason}\"}}")
        ),
        1
    );
    assert!(value(&after, "cordon_host_handshake_failures_total") >= 1);
}
