//! The fetch extension (docs/runner.md, "fetch") over a raw socketpair: the
//! runner sends `fetch.request`, the test plays the host's `fetch.result`,
//! aborts send `fetch.abort`, the request budget and the v1 world hold.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{json, Value};
use support::{kind, Host};

fn limits() -> Value {
    json!({"maxToolCalls": 8, "maxResultBytes": 524288, "timeoutMs": 5000})
}

fn with_fetch(max_requests: u64) -> Value {
    json!({"concurrentToolCalls": {"maxOutstanding": 4}, "fetch": {"maxRequests": max_requests},
           "timers": {"maxLive": 10}})
}

fn start(code: &str, max_requests: u64) -> Host {
    let mut host = Host::spawn(&[]);
    let ready = host.execute_ext(code, &["t"], limits(), with_fetch(max_requests));
    assert_eq!(
        ready["extensions"]["fetch"],
        json!({"maxRequests": max_requests}),
        "{ready}"
    );
    host
}

fn finish(mut host: Host) -> Value {
    let terminal = host.terminal();
    let ended = host.end();
    assert_eq!(ended.code, Some(0), "stderr: {}", ended.stderr);
    terminal
}

fn fetch_result(host: &mut Host, id: u64, response: Value) {
    host.send(
        &json!({"version": "code-bridge-v1", "type": "fetch.result", "id": id, "ok": true,
                      "response": response}),
    );
}

#[test]
fn a_fetch_sends_one_request_frame_and_the_result_becomes_a_response() {
    let mut host = start(
        r#"const r = await fetch('https://api.example.com/v1/items?q=1', {method: 'post',
               headers: {'X-Trace': 'a', Authorization: 'Bearer s'}, body: JSON.stringify({n: 1})});
           return {status: r.status, ok: r.ok, text: r.statusText, type: r.headers.get('content-type'),
                   url: r.url, redirected: r.redirected, body: await r.json(), used: r.bodyUsed};"#,
        4,
    );
    let request = host.recv();
    assert_eq!(request["type"], "fetch.request", "{request}");
    assert_eq!(request["id"], 1);
    let sent = &request["request"];
    assert_eq!(sent["method"], "POST");
    assert_eq!(sent["url"], "https://api.example.com/v1/items?q=1");
    assert_eq!(sent["redirect"], "follow");
    assert_eq!(
        sent["headers"],
        json!([
            ["x-trace", "a"],
            ["authorization", "Bearer s"],
            ["content-type", "text/plain;charset=UTF-8"]
        ])
    );
    assert_eq!(sent["body"], "eyJuIjoxfQ=="); // base64 of {"n":1}
    fetch_result(
        &mut host,
        1,
        json!({"status": 201, "statusText": "Created", "url": "https://api.example.com/v1/items?q=1",
               "redirected": false, "headers": [["content-type", "application/json"]],
               "body": "eyJvayI6dHJ1ZX0="}),
    );
    let terminal = finish(host);
    assert_eq!(kind(&terminal), "ok", "{terminal}");
    assert_eq!(
        terminal["result"],
        json!({"status": 201, "ok": true, "text": "Created", "type": "application/json",
               "url": "https://api.example.com/v1/items?q=1", "redirected": false,
               "body": {"ok": true}, "used": true})
    );
    // A fetch is not a tool call.
    assert_eq!(terminal["metrics"]["toolCalls"], 0);
}

#[test]
fn a_failed_result_is_a_catchable_type_error_with_the_hosts_code_as_cause() {
    let mut host = start(
        r#"try { await fetch('https://evil.example/'); return 'no'; }
           catch (e) { return [e instanceof TypeError, e.message, e.cause.code]; }"#,
        4,
    );
    let request = host.recv();
    host.send(&json!({"version": "code-bridge-v1", "type": "fetch.result", "id": request["id"],
                      "ok": false, "error": {"code": "NO_DESTINATION", "message": "evil.example:443 is not allowed"}}));
    let terminal = finish(host);
    assert_eq!(
        terminal["result"],
        json!([
            true,
            "fetch failed: evil.example:443 is not allowed",
            "NO_DESTINATION"
        ])
    );
}

#[test]
fn an_abort_rejects_at_once_and_sends_fetch_abort_for_the_outstanding_request() {
    let mut host = start(
        r#"const c = new AbortController();
           const p = fetch('https://api.example.com/slow', {signal: c.signal});
           setTimeout(() => c.abort(), 5);
           try { await p; return 'no'; } catch (e) { return e.name; }"#,
        4,
    );
    let request = host.recv();
    assert_eq!(request["type"], "fetch.request");
    let abort = host.recv();
    assert_eq!(
        abort,
        json!({"id": 1, "type": "fetch.abort", "version": "code-bridge-v1"})
    );
    let terminal = finish(host);
    assert_eq!(terminal["result"], "AbortError", "{terminal}");
}

#[test]
fn an_unrefd_timer_such_as_abort_signal_timeout_fires_while_a_fetch_is_outstanding() {
    let mut host = start(
        r#"try { await fetch('https://api.example.com/slow', {signal: AbortSignal.timeout(20)}); return 'no'; }
           catch (e) { return e.name; }"#,
        4,
    );
    assert_eq!(host.recv()["type"], "fetch.request");
    assert_eq!(host.recv()["type"], "fetch.abort");
    let terminal = finish(host);
    assert_eq!(terminal["result"], "TimeoutError", "{terminal}");
}

#[test]
fn requests_past_max_requests_are_refused_without_a_frame() {
    let mut host = start(
        r#"const first = fetch('https://api.example.com/a');
           try { await fetch('https://api.example.com/b'); } catch (e) { globalThis.refusal = e.message; }
           await first;
           return refusal;"#,
        1,
    );
    let request = host.recv();
    assert_eq!(request["id"], 1);
    fetch_result(
        &mut host,
        1,
        json!({"status": 204, "statusText": "", "url": "https://api.example.com/a",
                                       "redirected": false, "headers": []}),
    );
    let terminal = finish(host);
    let message = terminal["result"].as_str().expect("a message");
    assert!(
        message.contains("request limit reached: at most 1 requests"),
        "{message}"
    );
}

#[test]
fn a_fetch_result_for_an_id_not_outstanding_is_a_protocol_failure() {
    let mut host = start("await fetch('https://api.example.com/'); return 1;", 4);
    host.recv();
    fetch_result(
        &mut host,
        7,
        json!({"status": 200, "statusText": "", "url": "", "headers": []}),
    );
    let terminal = finish(host);
    assert_eq!(kind(&terminal), "internal", "{terminal}");
}

#[test]
fn bad_base64_in_a_response_body_is_a_protocol_failure() {
    let mut host = start("await fetch('https://api.example.com/'); return 1;", 4);
    host.recv();
    fetch_result(
        &mut host,
        1,
        json!({"status": 200, "statusText": "", "url": "", "headers": [],
                                       "body": "not base64!"}),
    );
    assert_eq!(kind(&finish(host)), "internal");
}

#[test]
fn without_the_fetch_extension_fetch_says_how_to_enable_it_and_v1_has_none() {
    let mut host = Host::spawn(&[]);
    host.execute_ext(
        "try { await fetch('https://a.example/'); } catch (e) { return [e.name, e.message]; }",
        &[],
        limits(),
        json!({"concurrentToolCalls": {"maxOutstanding": 2}}),
    );
    let terminal = finish(host);
    assert_eq!(terminal["result"][0], "TypeError");
    assert!(
        terminal["result"][1]
            .as_str()
            .expect("text")
            .contains("createCodeMode({ network: { allow: ["),
        "{terminal}"
    );
    // The refusing `fetch` is shaped like the real one, and alone.
    let mut host = Host::spawn(&[]);
    host.execute_ext(
        "const d = Object.getOwnPropertyDescriptor(globalThis, 'fetch');
         return [fetch.name, fetch.length, d.writable, d.enumerable, d.configurable,
                 typeof Request, typeof Response, typeof Headers];",
        &[],
        limits(),
        json!({"console": {"maxLogBytes": 1024}}),
    );
    assert_eq!(
        finish(host)["result"],
        json!([
            "fetch",
            0,
            true,
            false,
            true,
            "undefined",
            "undefined",
            "undefined"
        ])
    );
    assert_v1_has_no_fetch(&[]);
}

/// A v1 world (no `extensions`) of a runner started with `args` has none of
/// the fetch globals.
fn assert_v1_has_no_fetch(args: &[&str]) {
    let mut host = Host::spawn(args);
    host.execute(
        "return [typeof fetch, typeof Request, typeof Response, typeof Headers];",
        &[],
    );
    assert_eq!(
        finish(host)["result"],
        json!(["undefined", "undefined", "undefined", "undefined"])
    );
}

/// `--max-requests N`: fetch.js is compiled before `execute` (docs/runner.md,
/// "fetch"). The world is the same as without it: a frame with fetch gets the
/// four globals, confirmed at most N; one without fetch gets only the
/// refusal, and a v1 frame nothing — the compiled script never ran there.
#[test]
fn with_max_requests_fetch_is_prepared_and_worlds_are_unchanged() {
    let mut host = Host::spawn(&["--max-requests", "3"]);
    let ready = host.execute_ext(
        "const r = await fetch('https://a.example/x');
         return [r.status, typeof Request, typeof Response, typeof Headers];",
        &[],
        limits(),
        with_fetch(5),
    );
    assert_eq!(
        ready["extensions"]["fetch"],
        json!({"maxRequests": 3}),
        "{ready}"
    );
    let request = host.recv();
    assert_eq!(request["type"], "fetch.request", "{request}");
    fetch_result(
        &mut host,
        1,
        json!({"status": 204, "statusText": "", "url": "https://a.example/x",
               "redirected": false, "headers": [], "body": ""}),
    );
    assert_eq!(
        finish(host)["result"],
        json!([204, "function", "function", "function"])
    );
    // Without fetch in the frame: only the refusal; the compiled fetch.js
    // is never run, so no Request/Response/Headers.
    let mut host = Host::spawn(&["--max-requests", "3"]);
    host.execute_ext(
        "try { await fetch('https://a.example/'); } catch (e) { return [e.name, typeof Request]; }",
        &[],
        limits(),
        json!({"concurrentToolCalls": {"maxOutstanding": 2}}),
    );
    assert_eq!(finish(host)["result"], json!(["TypeError", "undefined"]));
    assert_v1_has_no_fetch(&["--max-requests", "3"]);
}

/// `fetch.js` compiled ahead for `--max-requests` is dropped when the frame
/// does not ask for fetch: the program's heap is the same as without the
/// flag (a white-box review found a v1 program under a 1 MiB ceiling
/// allocating 6210 objects with the flag against 6746 without).
#[test]
fn with_max_requests_a_frame_without_fetch_keeps_its_whole_heap() {
    let code = "const a = []; try { for (;;) a.push({x: a.length}); } catch (e) {}
                const n = a.length; a.length = 0; return n;";
    let objects = |args: &[&str], extensions: Option<Value>| {
        let mut host = Host::spawn(args);
        match extensions {
            Some(extensions) => {
                host.execute_ext(code, &[], limits(), extensions);
            }
            None => {
                host.execute(code, &[]);
            }
        }
        finish(host)["result"].as_u64().expect("a count")
    };
    let small = ["--memory-bytes", "1048576"];
    let flagged = ["--memory-bytes", "1048576", "--max-requests", "3"];
    assert_eq!(objects(&flagged, None), objects(&small, None), "v1");
    let ext = || Some(json!({"concurrentToolCalls": {"maxOutstanding": 2}}));
    assert_eq!(
        objects(&flagged, ext()),
        objects(&small, ext()),
        "extensions without fetch"
    );
}

#[test]
fn headers_request_and_response_follow_whatwg_for_local_use() {
    let host = start(
        r#"const h = new Headers({B: '2', a: ' 1 '});
           h.append('set-cookie', 'x=1'); h.append('Set-Cookie', 'y=2'); h.append('b', '3');
           const r = Response.json({k: 1}, {status: 202});
           const q = new Request('https://api.example.com/x', {method: 'patch', body: 'z'});
           let getBody; try { new Request('https://a.example/', {body: 'x'}); } catch (e) { getBody = e.message; }
           return {entries: [...h], cookies: h.getSetCookie(), json: await r.json(), status: r.status,
                   type: r.headers.get('content-type'), method: q.method, text: await q.text(), getBody};"#,
        4,
    );
    assert_eq!(
        finish(host)["result"],
        json!({"entries": [["a", "1"], ["b", "2, 3"], ["set-cookie", "x=1"], ["set-cookie", "y=2"]],
               "cookies": ["x=1", "y=2"], "json": {"k": 1}, "status": 202,
               "type": "application/json", "method": "patch", "text": "z",
               "getBody": "Request with GET/HEAD method cannot have body."})
    );
}

#[test]
fn the_fetch_globals_are_built_before_the_program_and_never_hand_it_their_native_half() {
    // Built lazily (after the program ran) fetch.js met the program's
    // setters: one on Object.prototype caught `native` (a white-box review).
    let host = start(
        "Object.defineProperty(Object.prototype, 'send', {set(f) { globalThis.N = this; }, configurable: true});
         Object.defineProperty(Object.prototype, 'abort', {set(f) { globalThis.N = this; }, configurable: true});
         const d = Object.getOwnPropertyDescriptor(globalThis, 'Headers');
         return [typeof d.value, typeof d.get, typeof fetch, typeof globalThis.N];",
        4,
    );
    assert_eq!(
        finish(host)["result"],
        json!(["function", "undefined", "function", "undefined"])
    );
}
