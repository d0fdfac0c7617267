//! `cordon host --probe`: 0 against a live host, 1 with one line otherwise.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[macro_use]
mod support;
#[path = "host_support/mod.rs"]
mod host_support;
#[path = "support/pki.rs"]
mod pki;
#[path = "support/tls_host.rs"]
mod tls_host;

use std::process::{Command, Output};

use serde_json::json;
use support::CORDON;
use tls_host::*;

fn probe(host: &HostChild, pki: &pki::Pki, identity: Option<&pki::Pair>) -> Output {
    let mut command = Command::new(CORDON);
    command
        .args(["host", "--probe", "--config"])
        .arg(&host.config);
    command.arg("--ca").arg(&pki.ca);
    if let Some(pair) = identity {
        command
            .arg("--cert")
            .arg(&pair.cert)
            .arg("--key")
            .arg(&pair.key);
    }
    command.output().unwrap()
}

/// A port free a moment ago (the probe reads the port from the config).
/// The stdout of a probe that must have answered ready (exit 0).
fn ready(out: &Output) -> String {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

fn start_on_fixed_port(pki: &pki::Pki) -> HostChild {
    let address = format!("127.0.0.1:{}", free_port());
    start_host(pki, json!({"listen": {"tcp": address}}))
}

#[test]
fn the_probe_is_ready_against_a_live_host_and_not_ready_once_it_stopped() {
    require_sandbox!();
    let pki = pki::generate();
    let mut host = start_on_fixed_port(&pki);
    let out = probe(&host, &pki, Some(&pki.client));
    let stdout = ready(&out);
    assert!(
        stdout.starts_with("ready: ") && stdout.contains("over tls (mtls)"),
        "{stdout}"
    );

    host.child.kill().unwrap();
    host.child.wait().unwrap();
    let out = probe(&host, &pki, Some(&pki.client));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("cordon host --probe: not ready: connect "),
        "{stderr}"
    );
}

#[test]
fn the_probe_without_the_client_certificate_a_host_requires_is_not_ready() {
    let pki = pki::generate();
    let host = start_on_fixed_port(&pki);
    let out = probe(&host, &pki, None);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("not ready: no welcome"), "{stderr}");
}

#[test]
fn a_malformed_probe_command_line_is_a_usage_error() {
    let out = Command::new(CORDON)
        .args(["host", "--probe", "--cert", "x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_live_host_whose_bwrap_fails_the_doctor_checks_is_not_ready() {
    let pki = pki::generate();
    let address = format!("127.0.0.1:{}", free_port());
    let host = start_host(
        &pki,
        json!({"listen": {"tcp": address}, "bwrapPath": "/bin/false"}),
    );
    let out = probe(&host, &pki, Some(&pki.client));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("not ready: cannot launch sandboxes: "),
        "{stderr}"
    );
}

fn unix_probe(host: &host_support::HostProcess, token: Option<&str>) -> Output {
    let mut command = Command::new(CORDON);
    command
        .args(["host", "--probe", "--config"])
        .arg(host.dir.path().join("host.json"));
    if let Some(token) = token {
        let file = host.dir.path().join("probe-token");
        std::fs::write(&file, format!("{token}\n")).unwrap();
        command.arg("--token-file").arg(file);
    }
    command.output().unwrap()
}

#[test]
fn over_a_unix_socket_the_probe_is_ready_with_the_hosts_token_and_not_with_a_wrong_one() {
    require_sandbox!();
    let digest = ring::digest::digest(&ring::digest::SHA256, b"probe-secret");
    let hex: String = digest.as_ref().iter().map(|b| format!("{b:02x}")).collect();
    let host = host_support::HostProcess::start("probe", json!({"tokens": {hex: "ops"}}));
    let out = unix_probe(&host, Some("probe-secret"));
    let stdout = ready(&out);
    assert!(stdout.contains("over unix (peercred+token)"), "{stdout}");
    for token in [Some("wrong"), None] {
        let out = unix_probe(&host, token);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains("not ready: no welcome"), "{stderr}");
    }
}
