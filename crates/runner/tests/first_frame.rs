//! §3 and §4: the first frame. Unreadable → exit 2; invalid execute → exit 1
//! with the field path on stderr and no frame at all.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::json;
use support::Host;

/// Sends `bytes` as the whole first frame (then half-closes), expecting no
/// frame back and the exit `code`; returns stderr.
fn refused(args: &[&str], bytes: &[u8], code: i32) -> String {
    let mut host = Host::spawn(args);
    host.send_raw(bytes);
    host.shut_write();
    let ended = host.end();
    assert_eq!(ended.code, Some(code), "stderr: {}", ended.stderr);
    ended.stderr
}

#[test]
fn duplicate_keys_exit_2_with_duplicate_in_the_message() {
    let frame = br#"{"version":"code-bridge-v1","type":"execute","type":"execute","code":"return 1;","tools":[]}"#;
    let stderr = refused(&[], &[&frame[..], b"\n"].concat(), 2);
    assert!(stderr.to_lowercase().contains("duplicate"), "{stderr}");
}

#[test]
fn a_nul_byte_exits_2() {
    assert!(refused(&[], b"{\"version\":\"code-bridge-v1\"\0}\n", 2).contains("NUL"));
}

#[test]
fn a_line_not_shorter_than_max_frame_bytes_exits_2() {
    let line = br#"{"version":"code-bridge-v1","pad":"xxxxxxxxxx"}"#;
    let stderr = refused(
        &["--max-frame-bytes", &line.len().to_string()],
        &[&line[..], b"\n"].concat(),
        2,
    );
    assert!(stderr.contains("--max-frame-bytes"), "{stderr}");
}

#[test]
fn an_endless_line_is_refused_once_it_reaches_the_ceiling() {
    let mut host = Host::spawn(&["--max-frame-bytes", "4096"]);
    // Far more than the ceiling, and no newline: the runner must not wait for one.
    host.send_raw_lossy(&vec![b' '; 1 << 20]);
    let ended = host.end();
    assert_eq!(ended.code, Some(2), "stderr: {}", ended.stderr);
}

#[test]
fn garbage_and_non_objects_exit_2() {
    for bytes in [
        &b"hello\n"[..],
        b"[1,2]\n",
        b"\"execute\"\n",
        b"\n",
        b"{\"a\":\xff}\n",
    ] {
        refused(&[], bytes, 2);
    }
}

#[test]
fn eof_before_a_newline_and_eof_before_any_byte_exit_2() {
    assert!(refused(&[], br#"{"version":"code-bridge-v1""#, 2).contains("EOF"));
    assert!(refused(&[], b"", 2).contains("EOF"));
}

#[test]
fn an_invalid_execute_exits_1_naming_the_field_and_sends_nothing() {
    let cases = [
        (
            json!({"version": "code-bridge-v0", "type": "execute"}),
            "execute.version",
        ),
        (
            json!({"version": "code-bridge-v1", "type": "cancel"}),
            "execute.type",
        ),
        (
            json!({"version": "code-bridge-v1", "type": "execute", "code": ""}),
            "execute.code",
        ),
        (
            json!({"version": "code-bridge-v1", "type": "execute", "code": "1", "executionId": 5}),
            "execute.executionId",
        ),
        (
            json!({"version": "code-bridge-v1", "type": "execute", "code": "1", "limits": [],
                "tools": []}),
            "execute.limits",
        ),
        (
            json!({"version": "code-bridge-v1", "type": "execute", "code": "1", "tools": [],
                "limits": {"maxToolCalls": 1, "maxResultBytes": 1, "timeoutMs": 5000.0}}),
            "execute.limits.timeoutMs",
        ),
        (
            json!({"version": "code-bridge-v1", "type": "execute", "code": "1",
                "limits": {"maxToolCalls": 0, "maxResultBytes": 1, "timeoutMs": 1},
                "tools": [{"name": "a"}, {"name": "a"}]}),
            "execute.tools[1].name",
        ),
    ];
    for (frame, path) in cases {
        let mut bytes = serde_json::to_vec(&frame).expect("json");
        bytes.push(b'\n');
        let stderr = refused(&[], &bytes, 1);
        assert!(stderr.contains(path), "expected {path} in {stderr}");
    }
}

#[test]
fn a_host_gone_before_ready_can_be_written_exits_1() {
    let mut host = Host::spawn(&["--timeout-ms", "2000"]);
    host.send(&json!({"version": "code-bridge-v1", "type": "execute", "code": "while (true) {}",
                      "tools": [], "limits": {"maxToolCalls": 0, "maxResultBytes": 10, "timeoutMs": 2000}}));
    let ended = host.disconnect();
    assert_eq!(ended.code, Some(1), "stderr: {}", ended.stderr);
}

#[test]
fn a_heap_ceiling_too_small_for_the_context_is_a_setup_failure_before_any_frame() {
    // The world is built before the execute frame is read: the runner exits
    // 1 on its own, having read and sent nothing.
    let host = Host::spawn(&["--memory-bytes", "1024"]);
    let ended = host.end();
    assert_eq!(ended.code, Some(1), "stderr: {}", ended.stderr);
    assert!(ended.stderr.contains("QuickJS"), "{}", ended.stderr);
}

#[test]
fn a_heap_ceiling_too_small_for_the_context_wins_over_a_bad_first_frame() {
    let mut host = Host::spawn(&["--memory-bytes", "1024"]);
    host.send_raw_lossy(b"not json\n");
    let ended = host.end();
    assert_eq!(ended.code, Some(1), "stderr: {}", ended.stderr);
    assert!(ended.stderr.contains("QuickJS"), "{}", ended.stderr);
}
