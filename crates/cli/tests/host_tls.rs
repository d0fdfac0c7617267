//! `cordon host` over TLS on 127.0.0.1: real host child processes, real
//! sandboxes, certificates generated at test time (support/pki.rs).

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[macro_use]
mod support;
#[path = "support/pki.rs"]
mod pki;
#[path = "support/tls_host.rs"]
mod tls_host;

use std::process::Command;

use serde_json::{json, Value};
use support::CORDON;
use tls_host::*;

#[test]
fn a_mutual_tls_run_ends_with_a_signed_exit_whose_receipt_names_tls_and_the_certificates_tenant() {
    require_sandbox!();
    let pki = pki::generate();
    let key = pki.dir.path().join("signing.pem");
    let generated = Command::new("openssl")
        .args(["genpkey", "-algorithm", "ed25519", "-out"])
        .arg(&key)
        .status()
        .unwrap();
    assert!(generated.success());
    let host = start_host(&pki, json!({"signingKey": key}));
    let mut tls = connect(host.port, &pki, Some(&pki.client));
    let welcome = hello(&mut tls, None).expect("welcome");
    assert_eq!(welcome["tenant"], "acme");
    assert_eq!(welcome["host"]["transport"], "tls");
    assert_eq!(welcome["host"]["auth"], "mtls");
    let public_key = welcome["host"]["publicKey"].as_str().unwrap().to_string();
    let (data, exit_text) = run_to_exit(&mut tls, "echo hi >&3; exit 3");
    assert_eq!(data, b"hi\n");
    let exit: Value = serde_json::from_str(&exit_text).unwrap();
    assert_eq!(exit["returncode"], 3);
    assert_eq!(exit["receipt"]["remote"]["transport"], "tls");
    assert_eq!(exit["receipt"]["remote"]["tenant"], "acme");
    assert!(node_verifies(&exit_text, &public_key, false));
    assert!(!node_verifies(&exit_text, &public_key, true));
}

#[test]
fn a_missing_foreign_or_expired_client_certificate_never_gets_a_welcome() {
    let pki = pki::generate();
    let host = start_host(&pki, json!({}));
    for (name, identity) in [
        ("missing", None),
        ("foreign CA", Some(&pki.foreign)),
        ("expired", Some(&pki.expired)),
    ] {
        let mut tls = connect(host.port, &pki, identity);
        assert!(hello(&mut tls, None).is_none(), "{name}");
    }
    let mut tls = connect(host.port, &pki, Some(&pki.client));
    assert!(hello(&mut tls, None).is_some(), "the host still serves");
}

#[test]
fn over_tls_without_client_certificates_a_token_names_its_tenant_and_a_wrong_one_is_closed() {
    let pki = pki::generate();
    let tokens =
        json!({token_digest("acme-secret"): "acme", token_digest("globex-secret"): "globex"});
    let tls_section = json!({"cert": pki.server.cert, "key": pki.server.key, "clientAuth": "none"});
    let host = start_host(&pki, json!({"tokens": tokens, "tls": tls_section}));
    let welcome = hello(&mut connect(host.port, &pki, None), Some("acme-secret")).unwrap();
    assert_eq!(
        (welcome["tenant"].as_str(), welcome["host"]["auth"].as_str()),
        (Some("acme"), Some("token"))
    );
    let welcome = hello(&mut connect(host.port, &pki, None), Some("globex-secret")).unwrap();
    assert_eq!(welcome["tenant"], "globex");
    assert!(hello(&mut connect(host.port, &pki, None), Some("wrong")).is_none());
    assert!(hello(&mut connect(host.port, &pki, None), None).is_none());
}

#[test]
fn with_mutual_tls_another_tenants_token_cannot_act_as_the_certificates_tenant() {
    let pki = pki::generate();
    let tokens =
        json!({token_digest("acme-secret"): "acme", token_digest("globex-secret"): "globex"});
    let host = start_host(&pki, json!({"tokens": tokens}));
    let mut tls = connect(host.port, &pki, Some(&pki.client));
    assert!(hello(&mut tls, Some("globex-secret")).is_none());
    let welcome = hello(
        &mut connect(host.port, &pki, Some(&pki.client)),
        Some("acme-secret"),
    )
    .unwrap();
    assert_eq!(
        (welcome["tenant"].as_str(), welcome["host"]["auth"].as_str()),
        (Some("acme"), Some("mtls+token"))
    );
}

#[test]
fn tls_without_client_certificates_or_tokens_and_plain_tcp_are_refused_at_start_up() {
    let pki = pki::generate();
    let dir = tempfile::tempdir().unwrap();
    let no_auth =
        json!({"tls": {"cert": pki.server.cert, "key": pki.server.key, "clientAuth": "none"}});
    let mut plain = config(&pki, &dir.path().join("state"), json!({}));
    plain.as_object_mut().unwrap().remove("tls");
    let cases = [
        (
            config(&pki, &dir.path().join("state"), no_auth),
            "needs config.tokens",
        ),
        (plain, "plain TCP is refused"),
    ];
    for (config, said) in cases {
        let path = dir.path().join("host.json");
        std::fs::write(&path, config.to_string()).unwrap();
        let out = Command::new(CORDON)
            .args(["host", "--config"])
            .arg(&path)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(125), "{stderr}");
        assert!(stderr.contains(said), "{stderr}");
    }
}

#[test]
fn plaintext_to_the_tls_port_is_closed_with_at_most_a_tls_alert() {
    use std::io::{Read, Write};
    let pki = pki::generate();
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("host.log");
    let host = start_host(&pki, json!({"logFile": log}));
    let mut tcp = std::net::TcpStream::connect(("127.0.0.1", host.port)).unwrap();
    tcp.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    // A cordon-remote-v1 hello, in the clear.
    tcp.write_all(b"\x00\x00\x00\x08\x01{\"v\":1}").unwrap();
    let mut out = Vec::new();
    tcp.read_to_end(&mut out).unwrap();
    // Nothing, or one TLS alert record (type 21, a 2-byte body): no text.
    assert!(
        out.is_empty() || (out.len() == 7 && out[0] == 21 && out[3..5] == [0, 2]),
        "{out:?}"
    );
    // And the log has its line, as docs/remote.md § Logging says of a peer
    // refused in the TLS handshake (bounded wait: the line is written as the
    // host closes).
    let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let line = loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let found = text
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|l| l["event"] == "session" && l["outcome"] == "handshake-failed");
        if let Some(line) = found {
            break line;
        }
        assert!(std::time::Instant::now() < until, "log so far: {text}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert_eq!(line["transport"], "tls", "{line}");
    assert_eq!(line["tenant"], Value::Null, "{line}");
}

#[test]
fn the_tls_handshake_counts_against_the_first_frame_bound() {
    let pki = pki::generate();
    // Margins in seconds, not milliseconds: a debug host's handshake on a
    // loaded machine must fit in what the prompt client leaves of the bound.
    // These clients send their ClientHello late on purpose: the first-byte
    // bound (1 s by default) is set to the whole bound.
    let handshake = json!({"firstFrameMs": 4000, "firstByteMs": 4000});
    let host = start_host(&pki, json!({ "handshake": handshake }));
    let pause = std::time::Duration::from_millis(2500);
    // Each pause is within the bound; together they are past it.
    let mut late = connect(host.port, &pki, Some(&pki.client));
    std::thread::sleep(pause);
    late.conn.complete_io(&mut late.sock).unwrap();
    std::thread::sleep(pause);
    assert!(hello(&mut late, None).is_none());
    let mut prompt = connect(host.port, &pki, Some(&pki.client));
    std::thread::sleep(pause);
    prompt.conn.complete_io(&mut prompt.sock).unwrap();
    assert!(hello(&mut prompt, None).is_some());
}

#[test]
fn a_handshake_still_in_progress_when_the_host_stops_gets_its_log_line() {
    use std::io::Write;
    let pki = pki::generate();
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("host.log");
    let mut host = start_host(&pki, json!({"logFile": log}));
    let mut tcp = std::net::TcpStream::connect(("127.0.0.1", host.port)).unwrap();
    // The first byte of a ClientHello (a handshake record), then nothing:
    // the handshake waits for the rest until the first-frame bound (5 s).
    tcp.write_all(&[0x16]).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(host.child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let status = host.child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    // The handshake's task was dropped at the stop: unfixed, untracked, it
    // wrote no line (and was never counted).
    let text = std::fs::read_to_string(&log).unwrap();
    let line = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|l| l["event"] == "session" && l["outcome"] == "handshake-failed");
    let line = line.unwrap_or_else(|| panic!("no line for the handshake: {text}"));
    assert_eq!(line["transport"], "tls", "{line}");
    drop(tcp);
}
