//! The concurrent-calls extension (docs/runner.md, "Extensions"): requested
//! in `execute`, confirmed in `ready`; tool functions return real promises,
//! at most K calls are on the wire, results may come in any order, and
//! every latch still holds with calls outstanding.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{json, Value};
use support::{kind, Host};

fn limits(max_tool_calls: u64, timeout_ms: u64) -> Value {
    json!({"maxToolCalls": max_tool_calls, "maxResultBytes": 524288, "timeoutMs": timeout_ms})
}

fn concurrent(k: u64) -> Value {
    json!({"concurrentToolCalls": {"maxOutstanding": k}})
}

/// Spawns a runner and starts `code` with K outstanding calls allowed.
fn start(code: &str, k: u64) -> Host {
    let mut host = Host::spawn(&[]);
    let ready = host.execute_ext(code, &["t"], limits(64, 5000), concurrent(k));
    assert_eq!(ready["extensions"], concurrent(k), "{ready}");
    host
}

fn reply(host: &mut Host, id: u64, ok: bool, payload: Value) {
    let mut frame = json!({"version": "code-bridge-v1", "type": "tool.result", "id": id, "ok": ok});
    frame[if ok { "result" } else { "error" }] = payload;
    host.send(&frame);
}

fn call_id(frame: &Value) -> u64 {
    assert_eq!(frame["type"], "tool.call", "{frame}");
    frame["id"].as_u64().expect("numeric id")
}

fn finish(mut host: Host) -> Value {
    let terminal = host.terminal();
    let ended = host.end();
    assert_eq!(ended.code, Some(0), "stderr: {}", ended.stderr);
    terminal
}

#[test]
fn ready_confirms_the_requested_extensions_clamped_to_the_runner_ceiling() {
    let mut host = Host::spawn(&["--max-log-bytes", "100"]);
    let ready = host.execute_ext(
        "return 1;",
        &[],
        limits(1, 1000),
        json!({"concurrentToolCalls": {"maxOutstanding": 8}, "console": {"maxLogBytes": 5000},
               "unknownFeature": {"x": 1}}),
    );
    assert_eq!(
        ready["extensions"],
        json!({"concurrentToolCalls": {"maxOutstanding": 8}, "console": {"maxLogBytes": 100}})
    );
    assert_eq!(kind(&finish(host)), "ok");
    let mut host = Host::spawn(&[]);
    let ready = host.execute_ext("return 1;", &[], limits(1, 1000), json!({}));
    assert_eq!(ready["extensions"], json!({}));
    let terminal = finish(host);
    assert_eq!(
        terminal["metrics"],
        json!({"elapsedMs": terminal["metrics"]["elapsedMs"], "toolCalls": 0})
    );
}

#[test]
fn an_invalid_extensions_field_exits_1_naming_its_path_and_sends_nothing() {
    for (extensions, path) in [
        (json!([]), "execute.extensions"),
        (
            json!({"concurrentToolCalls": true}),
            "execute.extensions.concurrentToolCalls",
        ),
        (
            json!({"concurrentToolCalls": {"maxOutstanding": 9}}),
            "execute.extensions.concurrentToolCalls.maxOutstanding",
        ),
        (
            json!({"concurrentToolCalls": {"maxOutstanding": 0}}),
            "execute.extensions.concurrentToolCalls.maxOutstanding",
        ),
        (
            json!({"concurrentToolCalls": {"maxOutstanding": 2.0}}),
            "execute.extensions.concurrentToolCalls.maxOutstanding",
        ),
        (
            json!({"console": {"maxLogBytes": 0}}),
            "execute.extensions.console.maxLogBytes",
        ),
        (
            json!({"console": {}}),
            "execute.extensions.console.maxLogBytes",
        ),
    ] {
        let mut host = Host::spawn(&[]);
        host.send(
            &json!({"version": "code-bridge-v1", "type": "execute", "code": "return 1",
                          "tools": [], "limits": limits(1, 1000), "extensions": extensions}),
        );
        assert_eq!(host.recv_line(), None, "no frame for {extensions}");
        let ended = host.end();
        assert_eq!(ended.code, Some(1));
        assert!(ended.stderr.contains(path), "{path} in {}", ended.stderr);
    }
}

#[test]
fn a_tool_call_returns_a_real_promise_with_then_catch_and_all_settled() {
    let code = "const p = tools.t({n: 1});
        const isPromise = p instanceof Promise;
        const doubled = await p.then(r => r.n * 2);
        const caught = await tools.t({n: 2}).catch(e => e.message);
        const settled = await Promise.allSettled([tools.t({n: 3}), tools.t({n: 4})]);
        return {isPromise, doubled, caught,
                settled: settled.map(s => s.status === 'fulfilled' ? s.value : s.reason.message)};";
    let mut host = start(code, 8);
    assert_eq!(call_id(&host.recv()), 1);
    reply(&mut host, 1, true, json!({"n": 21}));
    assert_eq!(call_id(&host.recv()), 2);
    reply(&mut host, 2, false, json!({"message": "nope"}));
    assert_eq!(call_id(&host.recv()), 3);
    assert_eq!(call_id(&host.recv()), 4);
    reply(&mut host, 4, true, json!("four"));
    reply(&mut host, 3, false, json!({"message": "three failed"}));
    let terminal = finish(host);
    assert_eq!(
        terminal["result"],
        json!({"isPromise": true, "doubled": 42, "caught": "tool failed: nope",
               "settled": ["tool failed: three failed", "four"]})
    );
    assert_eq!(terminal["metrics"]["toolCalls"], 4);
}

#[test]
fn results_answered_out_of_order_reach_their_own_calls() {
    let code =
        "return await Promise.all([tools.t({i: 'a'}), tools.t({i: 'b'}), tools.t({i: 'c'})]);";
    let mut host = start(code, 3);
    let calls: Vec<Value> = (0..3).map(|_| host.recv()).collect();
    assert_eq!(calls.iter().map(call_id).collect::<Vec<_>>(), vec![1, 2, 3]);
    for (id, letter) in [(3, "c"), (1, "a"), (2, "b")] {
        assert_eq!(calls[id as usize - 1]["arguments"]["i"], letter);
        reply(&mut host, id, true, json!(format!("result {letter}")));
    }
    assert_eq!(
        finish(host)["result"],
        json!(["result a", "result b", "result c"])
    );
}

#[test]
fn never_more_than_k_calls_are_on_the_wire_and_the_rest_go_out_in_order() {
    // All seven calls are made synchronously before the console line: only
    // K=2 frames may precede it, the rest wait for free slots.
    let code = "const all = Promise.all(Array.from({length: 7}, (_, i) => tools.t({i})));
                console.log('all issued');
                return await all;";
    let mut host = Host::spawn(&[]);
    let extensions = json!({"concurrentToolCalls": {"maxOutstanding": 2},
                            "console": {"maxLogBytes": 100}});
    host.execute_ext(code, &["t"], limits(64, 5000), extensions);
    assert_eq!(call_id(&host.recv()), 1);
    assert_eq!(call_id(&host.recv()), 2);
    assert_eq!(host.recv()["text"], "all issued");
    let mut outstanding: Vec<u64> = vec![1, 2];
    let mut seen = vec![1, 2];
    // Answer the newest first (order does not matter to the runner); each
    // answer frees exactly one slot.
    while let Some(newest) = outstanding.pop() {
        reply(&mut host, newest, true, json!(newest));
        if seen.len() < 7 {
            let frame = host.recv();
            let id = call_id(&frame);
            // ids are assigned in wire order and the FIFO keeps call order.
            assert_eq!(frame["arguments"]["i"], seen.len() as u64);
            seen.push(id);
            outstanding.push(id);
        }
    }
    assert_eq!(seen, (1..=7).collect::<Vec<_>>());
    let terminal = finish(host);
    assert_eq!(terminal["result"], json!([1, 2, 3, 4, 5, 6, 7]));
    assert_eq!(terminal["metrics"]["toolCalls"], 7);
}

#[test]
fn a_program_that_returns_with_calls_outstanding_ends_and_queued_calls_are_never_sent() {
    let code = "tools.t({}); tools.t({}); tools.t({}); tools.t({}); return 'done';";
    let mut host = start(code, 2);
    assert_eq!(call_id(&host.recv()), 1);
    assert_eq!(call_id(&host.recv()), 2);
    let terminal = host.recv();
    assert_eq!(terminal["type"], "execution.result");
    assert_eq!(terminal["result"], "done");
    assert_eq!(terminal["metrics"]["toolCalls"], 2);
    // A late answer after the terminal frame is discarded (or refused by a
    // runner already gone), never an error.
    host.send_raw_lossy(
        b"{\"version\":\"code-bridge-v1\",\"type\":\"tool.result\",\"id\":1,\"ok\":true}\n",
    );
    assert_eq!(host.end().code, Some(0));
}

#[test]
fn argument_errors_reject_the_promise_and_send_nothing() {
    let code = "const p = tools.t(5);
        const messages = [];
        for (const bad of [p, tools.t([1]), tools.t({f: 10n}), tools.t(() => 1)]) {
            messages.push(await bad.then(() => 'resolved', e => e.name + ': ' + e.message));
        }
        return {thenable: typeof p.then, messages};";
    let terminal = finish(start(code, 8));
    assert_eq!(
        terminal["result"],
        json!({"thenable": "function", "messages": [
            "TypeError: tool arguments must be an object",
            "TypeError: tool arguments must be an object",
            "TypeError: tool arguments must be JSON serializable",
            "TypeError: tool arguments must be JSON serializable"]})
    );
    assert_eq!(terminal["metrics"]["toolCalls"], 0);
}

#[test]
fn an_uncaught_tool_failure_in_a_fan_out_ends_as_javascript() {
    let mut host = start("return await Promise.all([tools.t({}), tools.t({})]);", 8);
    call_id(&host.recv());
    call_id(&host.recv());
    reply(&mut host, 2, false, json!({"message": "boom"}));
    let terminal = finish(host);
    assert_eq!(kind(&terminal), "javascript");
    assert!(terminal["error"]["message"]
        .as_str()
        .unwrap()
        .contains("tool failed: boom"));
}

#[test]
fn a_result_for_an_unknown_id_a_duplicate_or_another_frame_is_a_protocol_failure() {
    let bad_answers: [&dyn Fn(&mut Host); 5] = [
        &|host| reply(host, 7, true, json!(null)),
        &|host| {
            reply(host, 1, true, json!(1));
            reply(host, 1, true, json!(1));
        },
        &|host| host.send(&json!({"version": "code-bridge-v1", "type": "ping"})),
        &|host| host.send(&json!({"version": "code-bridge-v1", "type": "tool.result", "id": 1})),
        &|host| {
            host.send(
                &json!({"version": "code-bridge-v1", "type": "tool.result", "id": "1", "ok": true}),
            )
        },
    ];
    for answer in bad_answers {
        let code = "try { await Promise.all([tools.t({}), tools.t({})]); } catch (e) {} return 'survived';";
        let mut host = start(code, 4);
        call_id(&host.recv());
        call_id(&host.recv());
        answer(&mut host);
        let terminal = finish(host);
        assert_eq!(
            terminal["error"],
            json!({"kind": "internal", "message": "Code Mode bridge protocol failure"})
        );
    }
}

#[test]
fn a_cancel_with_calls_outstanding_ends_as_cancelled() {
    let code = "try { await Promise.all([tools.t({}), tools.t({}), tools.t({})]); } catch (e) {}
                return 'survived';";
    let mut host = start(code, 8);
    for _ in 0..3 {
        call_id(&host.recv());
    }
    host.send(&json!({"version": "code-bridge-v1", "type": "cancel"}));
    let terminal = finish(host);
    assert_eq!(kind(&terminal), "cancelled");
    assert_eq!(terminal["metrics"]["toolCalls"], 3);
}

#[test]
fn the_deadline_with_calls_outstanding_ends_as_timeout() {
    let mut host = Host::spawn(&[]);
    host.execute_ext(
        "try { await Promise.all([tools.t({}), tools.t({})]); } catch (e) {} return 'survived';",
        &["t"],
        limits(64, 300),
        concurrent(8),
    );
    call_id(&host.recv());
    call_id(&host.recv());
    let terminal = finish(host);
    assert_eq!(kind(&terminal), "timeout");
}

#[test]
fn the_tool_call_limit_hit_mid_fan_out_sends_exactly_the_allowed_calls() {
    let code = "const all = Promise.allSettled(Array.from({length: 6}, () => tools.t({})));
                await all; return 'survived';";
    let mut host = Host::spawn(&[]);
    host.execute_ext(code, &["t"], limits(3, 5000), concurrent(8));
    for expected in 1..=3 {
        assert_eq!(call_id(&host.recv()), expected);
    }
    let terminal = host.recv();
    assert_eq!(
        terminal["type"], "execution.result",
        "no fourth call: {terminal}"
    );
    assert_eq!(
        terminal["error"],
        json!({"kind": "limit", "code": "TOOL_CALL_LIMIT_EXCEEDED",
               "message": "tool call limit exceeded", "limit": 3, "attempted": 4})
    );
    assert_eq!(terminal["metrics"]["toolCalls"], 3);
    assert_eq!(host.end().code, Some(0));
}

#[test]
fn calls_queued_behind_k_count_against_the_limit_at_invocation() {
    // K=1: the second and third calls wait in the queue; the fourth is over
    // maxToolCalls=3 although only one frame was sent.
    let code = "const ps = [tools.t({}), tools.t({}), tools.t({})];
                try { tools.t({}); } catch (e) {}
                await Promise.allSettled(ps); return 'survived';";
    let mut host = Host::spawn(&[]);
    host.execute_ext(code, &["t"], limits(3, 5000), concurrent(1));
    assert_eq!(call_id(&host.recv()), 1);
    let terminal = host.recv();
    assert_eq!(terminal["error"]["kind"], "limit", "{terminal}");
    assert_eq!(terminal["error"]["attempted"], 4);
    assert_eq!(terminal["metrics"]["toolCalls"], 1);
    assert_eq!(host.end().code, Some(0));
}

#[test]
fn a_host_that_does_not_ask_gets_synchronous_v1_calls() {
    let mut host = Host::spawn(&[]);
    let ready = host.execute("const r = tools.t({}); return typeof r.then;", &["t"]);
    assert!(ready.get("extensions").is_none());
    assert_eq!(call_id(&host.recv()), 1);
    reply(&mut host, 1, true, json!({"then": "not a function"}));
    assert_eq!(finish(host)["result"], "string");
}

#[test]
fn busy_code_inside_a_promise_job_still_ends_as_timeout_or_cancelled() {
    let code = "try { await tools.t({}).then(() => { while (true) {} }); } catch (e) {}
                return 'survived';";
    let mut host = Host::spawn(&[]);
    host.execute_ext(code, &["t"], limits(64, 300), concurrent(2));
    assert_eq!(call_id(&host.recv()), 1);
    reply(&mut host, 1, true, json!(1));
    assert_eq!(kind(&finish(host)), "timeout");
    let mut host = start(code, 2);
    assert_eq!(call_id(&host.recv()), 1);
    reply(&mut host, 1, true, json!(1));
    host.send(&json!({"version": "code-bridge-v1", "type": "cancel"}));
    assert_eq!(kind(&finish(host)), "cancelled");
}
