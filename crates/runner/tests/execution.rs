//! §5, §7 and §9 without latches: ready, results, tool calls and the
//! unlatched terminal kinds (javascript, memory, result, result_limit);
//! and §3's exit 1 when the peer is gone while the terminal frame is written.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::os::unix::process::ExitStatusExt;

use serde_json::json;
use support::{kind, run, Host};

#[test]
fn ready_carries_clamped_limits_then_the_result_follows_with_metrics() {
    let mut host = Host::spawn(&[
        "--max-calls",
        "32",
        "--timeout-ms",
        "4000",
        "--max-result-bytes",
        "1000",
    ]);
    let ready = host.execute_with(
        "return {answer: 6 * 7};",
        &[],
        json!({"maxToolCalls": 50, "maxResultBytes": 500, "timeoutMs": 9000}),
    );
    assert_eq!(
        ready,
        json!({"effectiveLimits": {"maxResultBytes": 500, "maxToolCalls": 32, "timeoutMs": 4000},
               "executionId": "exec-1", "runnerVersion": "0.1.0", "type": "ready",
               "version": "code-bridge-v1"})
    );
    let terminal = host.recv();
    assert_eq!(terminal["ok"], true);
    assert_eq!(terminal["result"], json!({"answer": 42}));
    assert_eq!(terminal["executionId"], "exec-1");
    assert_eq!(terminal["metrics"]["toolCalls"], 0);
    assert!(terminal["metrics"]["elapsedMs"].is_u64());
    assert_eq!(host.end().code, Some(0));
}

#[test]
fn without_flags_ready_clamps_a_generous_request_to_the_documented_defaults() {
    let mut host = Host::spawn(&[]);
    let ready = host.execute_with(
        "return 1;",
        &[],
        json!({"maxToolCalls": 1000, "maxResultBytes": 1_000_000_000_u64,
               "timeoutMs": 1_000_000_000_u64}),
    );
    assert_eq!(
        ready["effectiveLimits"],
        json!({"maxResultBytes": 524288, "maxToolCalls": 64, "timeoutMs": 5000})
    );
    assert_eq!(kind(&host.terminal()), "ok");
    assert_eq!(host.end().code, Some(0));
}

#[test]
fn frames_are_compact_sorted_and_ascii_escaped() {
    let mut host = Host::spawn(&[]);
    host.execute("return {z: 'é😀', a: [1, 'x']};", &[]);
    let line = host.recv_line().expect("terminal");
    let elapsed = serde_json::from_str::<serde_json::Value>(&line).expect("json")["metrics"]
        ["elapsedMs"]
        .clone();
    let expected = format!(
        "{}{elapsed}{}",
        r#"{"executionId":"exec-1","metrics":{"elapsedMs":"#,
        r#","toolCalls":0},"ok":true,"result":{"a":[1,"x"],"z":"\u00e9\ud83d\ude00"},"type":"execution.result","version":"code-bridge-v1"}"#
    );
    assert_eq!(line, expected);
}

#[test]
fn an_absent_execution_id_is_null_in_every_frame() {
    let mut host = Host::spawn(&[]);
    host.send(
        &json!({"version": "code-bridge-v1", "type": "execute", "code": "return 1", "tools": [],
                      "limits": {"maxToolCalls": 0, "maxResultBytes": 10, "timeoutMs": 1000}}),
    );
    let ready = host.recv();
    assert!(ready
        .as_object()
        .expect("object")
        .contains_key("executionId"));
    assert_eq!(ready["executionId"], serde_json::Value::Null);
    assert_eq!(host.recv()["executionId"], serde_json::Value::Null);
}

#[test]
fn a_tool_call_is_sent_byte_for_byte_and_its_result_returned() {
    let mut host = Host::spawn(&[]);
    host.execute(
        "const value = await tools['math.double']({value: 21, note: 'ü'}); return {answer: value.result};",
        &["math.double"],
    );
    let call = host.recv_line().expect("tool.call");
    assert_eq!(
        call,
        r#"{"arguments":{"note":"\u00fc","value":21},"id":1,"name":"math.double","type":"tool.call","version":"code-bridge-v1"}"#
    );
    host.reply_ok(1, json!({"result": 42}));
    let terminal = host.recv();
    assert_eq!(terminal["result"], json!({"answer": 42}));
    assert_eq!(terminal["metrics"]["toolCalls"], 1);
}

#[test]
fn ids_count_up_and_a_missing_result_is_null_and_no_argument_is_an_empty_object() {
    let mut host = Host::spawn(&[]);
    host.execute(
        "const a = await tools.t(); const b = tools.t(undefined); return [a, b];",
        &["t"],
    );
    for id in [1, 2] {
        let call = host.recv();
        assert_eq!(
            (call["id"].clone(), call["arguments"].clone()),
            (json!(id), json!({}))
        );
        host.send(
            &json!({"version": "code-bridge-v1", "type": "tool.result", "id": id, "ok": true}),
        );
    }
    let terminal = host.recv();
    assert_eq!(terminal["result"], json!([null, null]));
    assert_eq!(terminal["metrics"]["toolCalls"], 2);
}

#[test]
fn a_tool_result_reaches_the_program_with_its_keys_in_the_hosts_order() {
    let mut host = Host::spawn(&[]);
    host.execute(
        "const r = await tools.t(); return JSON.stringify([Object.keys(r), r, Object.is(r.neg, -0)]);",
        &["t"],
    );
    host.recv();
    // As JSON.parse in Node gives it: integer keys first, ascending, then
    // the others in the order written, at every depth; -0 stays -0.
    host.send_raw(
        br#"{"version":"code-bridge-v1","type":"tool.result","id":1,"ok":true,"result":{"zeta":1,"alpha":{"y":1,"x":[{"b":2,"a":1}]},"10":"ten","2":"two","neg":-0}}
"#,
    );
    let terminal = host.recv();
    assert_eq!(
        terminal["result"],
        json!(
            r#"[["2","10","zeta","alpha","neg"],{"2":"two","10":"ten","zeta":1,"alpha":{"y":1,"x":[{"b":2,"a":1}]},"neg":0},true]"#
        )
    );
}

#[test]
fn a_provider_error_is_catchable_as_tool_failed() {
    let mut host = Host::spawn(&[]);
    host.execute(
        "try { await tools.t({}); } catch (e) { return String(e); }",
        &["t"],
    );
    host.recv();
    host.send(
        &json!({"version": "code-bridge-v1", "type": "tool.result", "id": 1, "ok": false,
                      "error": {"message": "disk on fire"}}),
    );
    assert_eq!(host.recv()["result"], "Error: tool failed: disk on fire");
}

#[test]
fn an_uncaught_provider_error_ends_as_javascript() {
    let mut host = Host::spawn(&[]);
    host.execute("return await tools.t({});", &["t"]);
    host.recv();
    host.send(
        &json!({"version": "code-bridge-v1", "type": "tool.result", "id": 1, "ok": false,
                      "error": {"message": "nope"}}),
    );
    let terminal = host.recv();
    assert_eq!(kind(&terminal), "javascript");
    assert!(terminal["error"]["message"]
        .as_str()
        .expect("text")
        .contains("tool failed: nope"));
}

#[test]
fn an_undeclared_tool_is_not_a_function_and_sends_no_frame() {
    let (terminal, _) = run(&[], "return tools['system.exec']({});", &["a"]);
    assert_eq!(kind(&terminal), "javascript");
    assert!(terminal["error"]["message"]
        .as_str()
        .expect("text")
        .contains("not a function"));
    assert_eq!(terminal["metrics"]["toolCalls"], 0);
}

#[test]
fn non_object_arguments_are_a_catchable_type_error_and_send_nothing() {
    let code = "const seen = [];
        for (const bad of [['not', 'an', 'object'], null, 7, 'x', true]) {
            try { await tools.t(bad); } catch (e) { seen.push(e instanceof TypeError && e.message); }
        }
        return seen;";
    let (terminal, _) = run(&[], code, &["t"]);
    assert_eq!(
        terminal["result"],
        json!(vec!["tool arguments must be an object"; 5])
    );
    assert_eq!(terminal["metrics"]["toolCalls"], 0);
    let (terminal, _) = run(&[], "return tools.t(['not', 'an', 'object']);", &["t"]);
    assert!(terminal["error"]["message"]
        .as_str()
        .expect("text")
        .contains("arguments must be an object"));
}

#[test]
fn a_function_or_cyclic_argument_is_a_catchable_type_error_and_sends_nothing() {
    let code = "const cyclic = {}; cyclic.self = cyclic; const seen = [];
        for (const bad of [function () {}, cyclic, {toJSON() { return 5; }}, {n: 1n}]) {
            try { await tools.t(bad); } catch (e) { seen.push(e instanceof TypeError && e.message); }
        }
        return seen;";
    let (terminal, _) = run(&[], code, &["t"]);
    assert_eq!(
        terminal["result"],
        json!(vec!["tool arguments must be JSON serializable"; 4])
    );
    assert_eq!(terminal["metrics"]["toolCalls"], 0);
}

#[test]
fn undefined_no_return_and_a_function_are_not_serializable_results() {
    for code in [
        "return undefined;",
        "1 + 1;",
        "return () => 1;",
        "return 10n;",
    ] {
        let (terminal, _) = run(&[], code, &[]);
        assert_eq!(
            terminal["error"],
            json!({"kind": "result", "message": "result is not JSON serializable"}),
            "{code}"
        );
    }
}

#[test]
fn a_result_over_max_result_bytes_is_result_limit() {
    let (terminal, _) = run(
        &["--max-result-bytes", "128"],
        "return {value: 'x'.repeat(1024)};",
        &[],
    );
    assert_eq!(
        terminal["error"],
        json!({"kind": "result_limit", "message": "result exceeds max_result_bytes"})
    );
    let (terminal, _) = run(
        &["--max-result-bytes", "128"],
        "return 'x'.repeat(126);",
        &[],
    );
    assert_eq!(kind(&terminal), "ok", "128 bytes exactly fit");
}

#[test]
fn an_uncaught_exception_is_javascript_with_tostring_and_stack() {
    let (terminal, _) = run(
        &[],
        "function deep() { throw new RangeError('bad'); }\ndeep();",
        &[],
    );
    let message = terminal["error"]["message"].as_str().expect("text");
    assert_eq!(kind(&terminal), "javascript");
    assert!(message.starts_with("RangeError: bad\n"), "{message}");
    assert!(message.contains("at deep"), "{message}");
    let (terminal, _) = run(&[], "await null; throw 42;", &[]);
    assert_eq!(
        terminal["error"],
        json!({"kind": "javascript", "message": "42"})
    );
}

#[test]
fn a_syntax_error_is_javascript() {
    let (terminal, _) = run(&[], "return {;", &[]);
    assert_eq!(kind(&terminal), "javascript");
    assert!(terminal["error"]["message"]
        .as_str()
        .expect("text")
        .contains("SyntaxError"));
}

#[test]
fn deep_recursion_under_stack_bytes_is_javascript_mentioning_stack() {
    // 16 MiB (the ceiling) does not fit an 8 MiB main-thread stack limit:
    // it runs on a sized thread.
    for stack_bytes in ["524288", "16777216"] {
        let (terminal, _) = run(
            &["--stack-bytes", stack_bytes],
            "function recurse() { return recurse(); } return recurse();",
            &[],
        );
        assert_eq!(kind(&terminal), "javascript", "{stack_bytes}");
        let message = terminal["error"]["message"].as_str().expect("text");
        assert!(message.to_lowercase().contains("stack"), "{message}");
    }
}

#[test]
fn exhausting_memory_bytes_is_memory_mentioning_out_of_memory() {
    let (terminal, _) = run(
        &["--memory-bytes", "4194304", "--timeout-ms", "5000"],
        "const values = []; while (true) values.push('x'.repeat(4096));",
        &[],
    );
    assert_eq!(kind(&terminal), "memory", "{terminal}");
    assert!(terminal["error"]["message"]
        .as_str()
        .expect("text")
        .contains("out of memory"));
}

#[test]
fn a_promise_that_nothing_can_settle_ends_at_once_as_javascript() {
    let (terminal, _) = run(&[], "await new Promise(() => {});", &[]);
    assert_eq!(kind(&terminal), "javascript");
    assert!(terminal["error"]["message"]
        .as_str()
        .expect("text")
        .contains("stalled"));
}

#[test]
fn frames_written_together_with_execute_are_not_lost() {
    let execute = json!({"version": "code-bridge-v1", "type": "execute", "executionId": "e",
        "code": "return await tools.t({});", "tools": [{"name": "t"}],
        "limits": {"maxToolCalls": 1, "maxResultBytes": 100, "timeoutMs": 5000}});
    let reply = json!({"version": "code-bridge-v1", "type": "tool.result", "id": 1, "ok": true, "result": "early"});
    let mut bytes = serde_json::to_vec(&execute).expect("json");
    bytes.push(b'\n');
    bytes.extend(serde_json::to_vec(&reply).expect("json"));
    bytes.push(b'\n');
    let mut host = Host::spawn(&[]);
    host.send_raw(&bytes);
    assert_eq!(host.recv()["type"], "ready");
    assert_eq!(host.recv()["type"], "tool.call");
    assert_eq!(host.recv()["result"], "early");
    assert_eq!(host.end().code, Some(0));
}

#[test]
fn a_tool_call_frame_over_max_frame_bytes_is_a_catchable_range_error_and_not_sent() {
    let code = "try { await tools.t({blob: 'x'.repeat(5000)}); } catch (e) { return [e.name, tools.t !== undefined]; }";
    let (terminal, _) = run(&["--max-frame-bytes", "4096"], code, &["t"]);
    assert_eq!(terminal["result"], json!(["RangeError", true]));
    assert_eq!(terminal["metrics"]["toolCalls"], 0);
}

#[test]
fn an_ok_terminal_frame_over_max_frame_bytes_becomes_result_limit() {
    let (terminal, _) = run(
        &["--max-frame-bytes", "2048", "--max-result-bytes", "100000"],
        "return 'x'.repeat(4000);",
        &[],
    );
    assert_eq!(
        terminal["error"],
        json!({"kind": "result_limit", "message": "result exceeds max_result_bytes"})
    );
}

#[test]
fn an_error_frame_over_max_frame_bytes_keeps_its_kind_with_a_cut_message() {
    let mut host = Host::spawn(&["--max-frame-bytes", "4096"]);
    host.execute("throw new Error('x'.repeat(10000));", &[]);
    let line = host.recv_line().expect("terminal");
    assert!(line.len() < 4096, "{}", line.len());
    let terminal: serde_json::Value = serde_json::from_str(&line).expect("json");
    assert_eq!(kind(&terminal), "javascript");
    assert!(terminal["error"]["message"]
        .as_str()
        .expect("text")
        .starts_with("Error: xxxx"));
    assert_eq!(host.end().code, Some(0));
}

/// §3: the peer gone while the terminal frame is written is exit 1, with
/// the failed write on stderr, and never a death by signal (SIGPIPE).
fn exited_1_failing_the_terminal_write(ended: &support::Ended) {
    assert_eq!(ended.status.signal(), None, "killed by a signal: {ended:?}");
    assert_eq!(ended.code, Some(1), "stderr: {}", ended.stderr);
    assert!(
        ended.stderr.contains("cannot send execution.result"),
        "{}",
        ended.stderr
    );
}

#[test]
fn a_host_that_stops_reading_makes_the_terminal_write_fail_and_the_runner_exit_1() {
    // The host keeps writing (no EOF, no protocol latch): the code finishes
    // `ok`, and only the write of `execution.result` fails (EPIPE). SIGPIPE
    // must not kill the runner: it exits 1, not by a signal.
    let mut host = Host::spawn(&[]);
    host.execute("return await tools.t({});", &["t"]);
    assert_eq!(host.recv()["type"], "tool.call");
    host.shut_read();
    host.reply_ok(1, json!("answer"));
    exited_1_failing_the_terminal_write(&host.wait_unread());
}

#[test]
fn a_host_gone_while_the_code_runs_makes_the_terminal_write_fail_and_the_runner_exit_1() {
    // The tool call proves the code started; then the host closes both
    // directions: the runner sees EOF (protocol failure) and cannot write
    // the terminal frame.
    let mut host = Host::spawn(&[]);
    host.execute("try { await tools.t({}); } catch (e) {} return 1;", &["t"]);
    assert_eq!(host.recv()["type"], "tool.call");
    exited_1_failing_the_terminal_write(&host.disconnect());
}
