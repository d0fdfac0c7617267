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
fn mediated_network_is_refused_as_unsupported_after_structural_checks() {
    let mediated = with(
        read_only(),
        "/network",
        json!({"mode": "mediated", "allow": ["api.example:443"]}),
    );
    assert_eq!(error_of(mediated).code(), ErrorCode::Unsupported);
    let bad_allow = with(
        read_only(),
        "/network",
        json!({"mode": "mediated", "allow": ["no-port"]}),
    );
    assert_eq!(error_of(bad_allow).code(), ErrorCode::PolicyInvalid);
    let allow_with_none = with(
        read_only(),
        "/network",
        json!({"mode": "none", "allow": ["a:1"]}),
    );
    assert_eq!(error_of(allow_with_none).code(), ErrorCode::PolicyInvalid);
}

#[test]
fn the_untrusted_profile_has_no_workspace() {
    let value = with(read_only(), "/filesystem/workspace", json!("none"));
    assert_eq!(Policy::from_json(&value).unwrap().workspace, Access::None);
}
