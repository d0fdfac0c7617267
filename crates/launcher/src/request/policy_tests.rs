use serde_json::json;

use super::*;
use crate::error_code::ErrorCode;

fn read_only() -> Value {
    json!({
        "formatVersion": 1,
        "filesystem": {"workspace": "read", "temp": "write", "extra": []},
        "network": {"mode": "none"},
        "process": {"treeConfinement": "required"},
        "resources": {"memoryBytes": 268435456, "processes": 64, "fileSizeBytes": 67108864, "cpuSeconds": 30},
        "environment": {"allow": []}
    })
}

fn with(mut base: Value, pointer: &str, value: Value) -> Value {
    if let Some(slot) = base.pointer_mut(pointer) {
        *slot = value;
    }
    base
}

fn error_of(value: Value) -> PolicyError {
    match Policy::from_json(&value) {
        Ok(p) => panic!("accepted an invalid policy: {p:?}"),
        Err(e) => e,
    }
}

#[test]
fn the_read_only_preset_is_valid_and_keeps_its_resources() {
    let policy = Policy::from_json(&read_only()).unwrap();
    assert_eq!(policy.workspace, Access::Read);
    assert_eq!(policy.network, NetworkMode::None);
    assert_eq!(policy.resources.memory_bytes, Some(268_435_456));
    assert_eq!(policy.resources.processes, Some(64));
    assert_eq!(policy.resources.cpu_seconds, Some(30));
}

#[test]
fn optional_sections_default_and_digest_like_their_explicit_form() {
    let minimal = json!({
        "formatVersion": 1,
        "filesystem": {"workspace": "read", "temp": "write"},
        "network": {"mode": "none"},
        "process": {"treeConfinement": "required"}
    });
    let explicit = with(
        with(read_only(), "/resources", json!({})),
        "/environment",
        json!({"allow": []}),
    );
    let a = Policy::from_json(&minimal).unwrap();
    let b = Policy::from_json(&explicit).unwrap();
    assert_eq!(a.digest(), b.digest());
}

#[test]
fn the_digest_ignores_key_order_and_changes_with_any_setting() {
    let reordered: Value = serde_json::from_str(
        r#"{"network":{"mode":"none"},"environment":{"allow":[]},"process":{"treeConfinement":"required"},
            "resources":{"cpuSeconds":30,"fileSizeBytes":67108864,"processes":64,"memoryBytes":268435456},
            "filesystem":{"extra":[],"temp":"write","workspace":"read"},"formatVersion":1}"#,
    )
    .unwrap();
    let base = Policy::from_json(&read_only()).unwrap().digest();
    assert_eq!(Policy::from_json(&reordered).unwrap().digest(), base);
    let write = with(read_only(), "/filesystem/workspace", json!("write"));
    assert_ne!(Policy::from_json(&write).unwrap().digest(), base);
    assert!(base.starts_with("sha256:") && base.len() == 7 + 64);
}

#[test]
fn unknown_keys_are_rejected_at_every_level_with_their_path() {
    for (pointer, key) in [
        ("", "extraKey"),
        ("/filesystem", "home"),
        ("/network", "dns"),
        ("/resources", "gpus"),
    ] {
        let mut value = read_only();
        value
            .pointer_mut(pointer)
            .unwrap()
            .as_object_mut()
            .unwrap()
            .insert(key.into(), json!(1));
        let err = error_of(value);
        assert_eq!(err.code(), ErrorCode::PolicyInvalid);
        assert!(err.to_string().contains(key), "{err}");
    }
}

#[test]
fn wrong_types_and_values_are_policy_invalid() {
    let cases = [
        ("/formatVersion", json!(2)),
        ("/formatVersion", json!("1")),
        ("/filesystem/workspace", json!("rw")),
        ("/filesystem/temp", json!("read")),
        ("/filesystem/extra", json!({})),
        ("/network/mode", json!("host")),
        ("/process/treeConfinement", json!("optional")),
        ("/resources/memoryBytes", json!(0)),
        ("/resources/memoryBytes", json!(-1)),
        ("/resources/memoryBytes", json!(1.5)),
        ("/resources/processes", json!(9_007_199_254_740_992u64)),
        ("/environment/allow", json!(["1BAD"])),
        ("/filesystem", json!(null)),
        ("", json!([])),
    ];
    for (pointer, value) in cases {
        let err = error_of(with(read_only(), pointer, value.clone()));
        assert_eq!(
            err.code(),
            ErrorCode::PolicyInvalid,
            "{pointer} = {value}: {err}"
        );
    }
}

#[test]
fn extra_mounts_must_be_normalized_absolute_and_outside_the_layout() {
    for path in [
        "relative",
        "/opt/../etc",
        "/opt//x",
        "/usr/local",
        "/tmp/x",
        "/proc",
        "/",
        "/workspace",
    ] {
        let value = with(
            read_only(),
            "/filesystem/extra",
            json!([{"path": path, "access": "read"}]),
        );
        assert_eq!(error_of(value).code(), ErrorCode::PolicyInvalid, "{path}");
    }
    let ok = with(
        read_only(),
        "/filesystem/extra",
        json!([{"path": "/opt/data", "access": "write"}]),
    );
    let policy = Policy::from_json(&ok).unwrap();
    assert_eq!(
        policy.extra,
        vec![ExtraMount {
            path: "/opt/data".into(),
            access: Access::Write
        }]
    );
}

#[test]
fn extras_that_are_equal_or_nested_by_path_components_are_refused_naming_both() {
    for (first, second) in [
        ("/srv/data/secret", "/srv/data"),
        ("/srv/data", "/srv/data/secret"),
        ("/srv/data", "/srv/data"),
    ] {
        let value = with(
            read_only(),
            "/filesystem/extra",
            json!([{"path": first, "access": "read"}, {"path": second, "access": "write"}]),
        );
        let err = error_of(value);
        assert_eq!(err.code(), ErrorCode::PolicyInvalid, "{first} {second}");
        let text = err.to_string();
        assert!(
            text.contains("extra[1]") && text.contains("extra[0]"),
            "{text}"
        );
        assert!(text.contains(first) && text.contains(second), "{text}");
    }
    // Siblings and a shared string prefix are not nested.
    let ok = with(
        read_only(),
        "/filesystem/extra",
        json!([{"path": "/srv/a/b", "access": "read"}, {"path": "/srv/a/bc", "access": "write"}, {"path": "/srv/a/c", "access": "read"}]),
    );
    assert_eq!(Policy::from_json(&ok).unwrap().extra.len(), 3);
}

#[test]
fn a_mediated_network_policy_is_accepted_and_both_spellings_digest_alike() {
    let short = with(
        read_only(),
        "/network",
        json!({"mode": "mediated", "allow": ["api.example.com:443"]}),
    );
    let long = with(
        read_only(),
        "/network",
        json!({"mode": "mediated", "frontend": "auto", "allow": [
            {"protocol": "tcp", "host": "api.example.com", "port": 443, "requireTlsSni": false}
        ]}),
    );
    let a = Policy::from_json(&short).unwrap();
    let b = Policy::from_json(&long).unwrap();
    assert_eq!(a.digest(), b.digest());
    let NetworkMode::Mediated(m) = &a.network else {
        panic!("not mediated")
    };
    assert_eq!((m.allow.len(), m.frontend), (1, NetworkFrontend::Auto));
    let with_sni = with(
        read_only(),
        "/network",
        json!({"mode": "mediated", "allow": [{"protocol": "tcp", "host": "api.example.com", "port": 443, "requireTlsSni": true}]}),
    );
    assert_ne!(Policy::from_json(&with_sni).unwrap().digest(), a.digest());
}

#[test]
fn malformed_mediated_destinations_are_invalid_with_their_path() {
    for (network, path) in [
        (
            json!({"mode": "mediated", "allow": ["no-port"]}),
            "policy.network.allow[0]",
        ),
        (
            json!({"mode": "mediated", "allow": ["API.example.com:443"]}),
            "policy.network.allow[0]",
        ),
        (
            json!({"mode": "mediated", "allow": ["a.example:0"]}),
            "policy.network.allow[0]",
        ),
        (
            json!({"mode": "mediated", "allow": ["a.example:1", "a.example:1"]}),
            "policy.network.allow[1]",
        ),
        (
            json!({"mode": "mediated", "allow": [{"protocol": "udp", "host": "a.example", "port": 1}]}),
            "policy.network.allow[0].protocol",
        ),
        (
            json!({"mode": "mediated", "allow": [{"protocol": "tcp", "host": "a.example", "port": 1, "x": 1}]}),
            "policy.network.allow[0]",
        ),
        (
            json!({"mode": "mediated", "allow": [{"protocol": "tcp", "host": "10.0.0.1", "port": 1, "requireTlsSni": true}]}),
            "policy.network.allow[0]",
        ),
        (
            json!({"mode": "mediated", "allow": [{"protocol": "tcp", "host": "a.example", "port": 70000}]}),
            "policy.network.allow[0].port",
        ),
        (
            json!({"mode": "mediated", "frontend": "tun"}),
            "policy.network.frontend",
        ),
        (
            json!({"mode": "none", "allow": ["a.example:1"]}),
            "policy.network.allow",
        ),
        (
            json!({"mode": "none", "frontend": "proxy"}),
            "policy.network.frontend",
        ),
    ] {
        let error = error_of(with(read_only(), "/network", network.clone()));
        assert_eq!(error.code(), ErrorCode::PolicyInvalid, "{network}");
        assert!(error.to_string().contains(path), "{network}: {error}");
    }
    let many: Vec<String> = (0..1025).map(|i| format!("h{i}.example:80")).collect();
    let error = error_of(with(
        read_only(),
        "/network",
        json!({"mode": "mediated", "allow": many}),
    ));
    assert!(error.to_string().contains("at most 1024"), "{error}");
}

#[test]
fn network_quotas_are_positive_resources_in_the_digest() {
    let base = Policy::from_json(&read_only()).unwrap();
    let mut value = read_only();
    value["resources"]["networkStreams"] = json!(5);
    let p = Policy::from_json(&value).unwrap();
    assert_eq!(p.resources.network_quotas[0], Some(5));
    assert_ne!(p.digest(), base.digest());
    value["resources"]["networkBytesIn"] = json!(0);
    assert_eq!(error_of(value).code(), ErrorCode::PolicyInvalid);
}

#[test]
fn the_untrusted_profile_has_no_workspace() {
    let value = with(read_only(), "/filesystem/workspace", json!("none"));
    assert_eq!(Policy::from_json(&value).unwrap().workspace, Access::None);
}

#[test]
fn process_identity_defaults_to_own_accepts_the_explicit_opt_in_and_enters_the_digest() {
    let own = Policy::from_json(&read_only()).unwrap();
    assert_eq!(own.identity, IdentityMode::Own);
    let explicit = with(
        read_only(),
        "/process",
        json!({"treeConfinement": "required", "identity": "own"}),
    );
    assert_eq!(Policy::from_json(&explicit).unwrap().digest(), own.digest());
    let shared = with(
        read_only(),
        "/process",
        json!({"treeConfinement": "required", "identity": "shared-with-provider"}),
    );
    let shared = Policy::from_json(&shared).unwrap();
    assert_eq!(shared.identity, IdentityMode::SharedWithProvider);
    assert_ne!(shared.digest(), own.digest(), "the opt-in is in the digest");
    for bad in [json!("provider"), json!(1), json!(["own"])] {
        let value = with(
            read_only(),
            "/process",
            json!({"treeConfinement": "required", "identity": bad}),
        );
        let message = error_of(value).to_string();
        assert!(message.contains("policy.process.identity"), "{message}");
    }
}
