//! The configuration's validation: what is refused before anything binds.

#![allow(clippy::unwrap_used)]

use serde_json::{json, Value};

use super::config::{Config, Listen};

fn base() -> Value {
    json!({
        "listen": {"unix": "/run/cordon/host.sock"},
        "stateDir": "/var/lib/cordon-host",
        "programs": {"sh": "/bin/sh"},
    })
}

fn with(key: &str, value: Value) -> Value {
    let mut config = base();
    config[key] = value;
    config
}

fn refusal(config: Value) -> String {
    Config::from_json(&config).unwrap_err().to_string()
}

#[test]
fn a_minimal_configuration_gets_the_documented_defaults() {
    let config = Config::from_json(&base()).unwrap();
    assert_eq!(config.listen, Listen::Unix("/run/cordon/host.sock".into()));
    assert_eq!(config.handshake.first_frame_ms, 5000);
    assert_eq!(config.liveness.ping_interval_ms, 10_000);
    assert_eq!(config.liveness.pong_timeout_ms, 30_000);
    assert_eq!(config.ceilings.deadline_ms, 300_000);
    assert_eq!(config.ceilings.open_files, 1024);
    assert_eq!(config.ceilings.cpu_seconds, 300);
    assert_eq!(config.ceilings.file_size_bytes, 1 << 30);
    assert_eq!(config.ceilings.network, [256, 32, 64 << 20, 1 << 30]);
    assert_eq!(config.admission.max_sessions, 64);
    assert_eq!(config.handshake.per_source, 4);
    assert_eq!(config.handshake.first_byte_ms, 1000);
    assert_eq!(config.receipts.max_age_seconds, 30 * 24 * 3600);
    assert_eq!(config.receipts.max_per_tenant, 10_000);
    assert_eq!(config.receipts.prune_interval_seconds, 600);
    // A first-frame bound under 1 s bounds the first byte too.
    let short = Config::from_json(&with("handshake", json!({"firstFrameMs": 500}))).unwrap();
    assert_eq!(short.handshake.first_byte_ms, 500);
    assert!(config.allow_uids.is_empty() && config.tokens.is_empty());
}

#[test]
fn plain_tcp_is_refused_and_tcp_under_tls_is_accepted() {
    let tcp = with("listen", json!({"tcp": "127.0.0.1:7443"}));
    assert!(refusal(tcp.clone()).contains("plain TCP is refused"));
    let mut tls = tcp;
    tls["tls"] = json!({"cert": "/etc/c.pem", "key": "/etc/k.pem", "clientCa": "/etc/ca.pem"});
    assert!(matches!(
        Config::from_json(&tls).unwrap().listen,
        Listen::Tcp(_)
    ));
    let mut no_ca = tls.clone();
    no_ca["tls"] = json!({"cert": "/etc/c.pem", "key": "/etc/k.pem"});
    assert!(refusal(no_ca).contains("config.tls.clientCa"));
}

#[test]
fn unknown_keys_relative_paths_and_bounds_past_the_protocol_are_refused() {
    assert!(refusal(with("surprise", json!(1))).contains("surprise"));
    assert!(refusal(with("stateDir", json!("state"))).contains("config.stateDir"));
    let first = with("handshake", json!({"firstFrameMs": 6000}));
    assert!(refusal(first).contains("config.handshake.firstFrameMs"));
    let programs = with("programs", json!({"sh": "bin/sh"}));
    assert!(refusal(programs).contains("config.programs.sh"));
    let token = with("tokens", json!({"not-a-digest": "t"}));
    assert!(refusal(token).contains("sha256"));
    let byte = with(
        "handshake",
        json!({"firstFrameMs": 2000, "firstByteMs": 3000}),
    );
    assert!(refusal(byte).contains("config.handshake.firstByteMs"));
    let keep = with("receipts", json!({"maxPerTenant": 0}));
    assert!(refusal(keep).contains("config.receipts.maxPerTenant"));
    assert!(refusal(with("receipts", json!({"forever": true}))).contains("forever"));
    let zero = with("admission", json!({"maxSessions": 0}));
    assert!(refusal(zero).contains("config.admission.maxSessions"));
}

#[test]
fn extra_binds_are_checked_by_the_launchers_policy_rules() {
    let ok = with("extra", json!([{"path": "/opt/data", "access": "read"}]));
    assert_eq!(Config::from_json(&ok).unwrap().extra.len(), 1);
    let relative = with("extra", json!([{"path": "opt", "access": "read"}]));
    assert!(refusal(relative).contains("config.extra"));
}
