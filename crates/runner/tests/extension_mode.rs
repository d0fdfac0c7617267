//! Extension mode (execute carried `extensions`, even `{}`): model-facing
//! error texts and the added globals. v1 keeps its fixed texts (see
//! execution.rs).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{json, Value};
use support::{kind, Host};

/// Runs `code` in extension mode (no extension confirmed), answering no
/// tool call; returns the terminal frame.
fn run_ext(code: &str, tools: &[&str], max_result_bytes: u64) -> Value {
    let mut host = Host::spawn(&[]);
    host.execute_ext(
        code,
        tools,
        json!({"maxToolCalls": 8, "maxResultBytes": max_result_bytes, "timeoutMs": 5000}),
        json!({}),
    );
    let terminal = host.terminal();
    let ended = host.end();
    assert_eq!(ended.code, Some(0), "stderr: {}", ended.stderr);
    terminal
}

fn message(terminal: &Value) -> &str {
    terminal["error"]["message"].as_str().unwrap_or("")
}

#[test]
fn an_uncaught_call_of_an_undeclared_tool_names_it_and_the_granted_tools() {
    let granted = ["orders.get", "orders.list"];
    for (code, expected) in [
        ("return tools.orders_lst({});", "TypeError: tools.orders_lst is not a granted tool (granted: orders.get, orders.list)\n    at <anonymous> (<code>:2:14)"),
        ("const ids = [1];\nreturn await Promise.all(ids.map(id => tools['orders.gett']({id})));",
         "TypeError: tools[\"orders.gett\"] is not a granted tool (granted: orders.get, orders.list)"),
    ] {
        let terminal = run_ext(code, &granted, 1000);
        assert_eq!(kind(&terminal), "javascript");
        assert!(message(&terminal).starts_with(expected), "{}", message(&terminal));
    }
    // Anything else that is not a function is named as V8 names it.
    let terminal = run_ext("const f = null; return f();", &granted, 1000);
    assert!(
        message(&terminal).starts_with("TypeError: f is not a function\n"),
        "{}",
        message(&terminal)
    );
    // Unless the position is ambiguous (nested calls): QuickJS's text stays.
    let terminal = run_ext(
        "const f = null, x = 1; return f(String(x));",
        &granted,
        1000,
    );
    assert!(
        message(&terminal).starts_with("TypeError: not a function\n"),
        "{}",
        message(&terminal)
    );
}

#[test]
fn introspection_of_tools_stays_honest_in_extension_mode() {
    let code = "return [typeof tools.missing, 'missing' in tools, Object.keys(tools),
                       Object.isFrozen(tools), Object.getPrototypeOf(tools)];";
    let terminal = run_ext(code, &["a.b"], 1000);
    assert_eq!(
        terminal["result"],
        json!(["undefined", false, ["a.b"], true, null])
    );
}

#[test]
fn a_result_over_max_result_bytes_carries_both_sizes() {
    let terminal = run_ext("return 'x'.repeat(100);", &[], 50);
    assert_eq!(
        terminal["error"],
        json!({"kind": "result_limit", "message": "result exceeds max_result_bytes (102 bytes > 50)"})
    );
}

/// Runs `code` as a plain v1 host would (no `extensions`).
fn run_v1(code: &str) -> Value {
    let (terminal, _) = support::run(&[], code, &[]);
    terminal
}

#[test]
fn the_web_globals_exist_in_every_world_and_performance_and_fetch_only_in_extension_mode() {
    let code = "return ['structuredClone', 'TextEncoder', 'TextDecoder', 'atob', 'btoa', 'URL',
                       'URLSearchParams', 'crypto', 'Intl', 'DOMException', 'performance',
                       'fetch', 'setTimeout', 'native'].map(name => typeof globalThis[name]);";
    let mut expected = vec!["function"; 7];
    expected.extend([
        "object",
        "object",
        "function",
        "object",
        // Without the fetch extension: the fetch that says how to enable it.
        "function",
        "undefined",
        "undefined",
    ]);
    assert_eq!(run_ext(code, &[], 10_000)["result"], json!(expected));
    expected[10] = "undefined";
    expected[11] = "undefined";
    assert_eq!(run_v1(code)["result"], json!(expected));
}

#[test]
fn performance_now_is_monotonic_milliseconds_since_ready() {
    let code = "const a = performance.now(); let x = 0; for (let i = 0; i < 1e5; i++) x += i;
                const b = performance.now();
                return [typeof a, a >= 0, b >= a, a < 5000];";
    assert_eq!(
        run_ext(code, &[], 1000)["result"],
        json!(["number", true, true, true])
    );
}

#[test]
fn text_encoding_and_base64_follow_the_web_platform() {
    let code = "const bytes = new TextEncoder().encode('h\\u00e9\\u20ac\\ud83d\\ude00\\ud800');
        const fatal = (() => { try { new TextDecoder('utf-8', {fatal: true}).decode(new Uint8Array([0xc3])); return 'decoded'; }
                               catch (e) { return e.name; } })();
        const target = new Uint8Array(4);
        return {bytes: Array.from(bytes), back: new TextDecoder().decode(bytes),
                lossy: new TextDecoder().decode(new Uint8Array([0x61, 0xf0, 0x9f, 0x62])), fatal,
                bom: new TextDecoder().decode(new Uint8Array([0xef, 0xbb, 0xbf, 0x41])),
                into: new TextEncoder().encodeInto('a\\u00e9\\u20ac', target),
                label: (() => { try { new TextDecoder('latin1'); } catch (e) { return e.name; } })(),
                b64: btoa('\\u00ff\\u00fe'), un: atob(' /w== '), badAtob: (() => { try { atob('a'); } catch (e) { return e.name; } })(),
                badBtoa: (() => { try { btoa('\\u20ac'); } catch (e) { return e.name; } })()};";
    assert_eq!(
        run_v1(code)["result"],
        json!({"bytes": [104, 195, 169, 226, 130, 172, 240, 159, 152, 128, 239, 191, 189],
               "back": "h\u{e9}\u{20ac}\u{1f600}\u{fffd}", "lossy": "a\u{fffd}b", "fatal": "TypeError",
               "bom": "A", "into": {"read": 2, "written": 3}, "label": "RangeError",
               "b64": "//4=", "un": "\u{ff}", "badAtob": "InvalidCharacterError",
               "badBtoa": "InvalidCharacterError"})
    );
}

#[test]
fn url_and_search_params_parse_the_whatwg_way() {
    let code = "const u = new URL('HTTPS://user:pw@Example.COM:443/a/./b/../c%20d?q=1&r=a+b#h');
        u.searchParams.append('s', '\\u00e9 &');
        u.pathname = '/x y';
        const params = new URLSearchParams([['b', '2'], ['a', '1'], ['b', '3']]);
        params.sort(); params.set('b', 'only');
        return {href: u.href, origin: u.origin, host: u.host, port: u.port, q: u.searchParams.get('r'),
                relative: new URL('../up?x#y', 'http://h.test/a/b/c').href,
                invalid: [URL.canParse('no scheme'), URL.parse('http://[::1'), (() => { try { new URL('x'); } catch (e) { return e.name; } })()],
                unicodeHost: URL.canParse('http://b\\u00fccher.example/'),
                params: params.toString(), size: params.size, json: JSON.stringify({u: new URL('http://a.test')})};";
    assert_eq!(
        run_v1(code)["result"],
        json!({"href": "https://user:pw@example.com/x%20y?q=1&r=a+b&s=%C3%A9+%26#h",
               "origin": "https://example.com", "host": "example.com", "port": "", "q": "a b",
               "relative": "http://h.test/a/up?x#y",
               "invalid": [false, null, "TypeError"], "unicodeHost": false,
               "params": "a=1&b=only", "size": 2, "json": "{\"u\":\"http://a.test/\"}"})
    );
}

#[test]
fn crypto_draws_from_the_os_and_structured_clone_copies_deeply() {
    let code = "const uuids = new Set(Array.from({length: 50}, () => crypto.randomUUID()));
        const a = crypto.getRandomValues(new Uint8Array(64)), b = crypto.getRandomValues(new Uint8Array(64));
        const errors = [() => crypto.getRandomValues(new Float64Array(1)),
                        () => crypto.getRandomValues(new Uint8Array(65537)),
                        () => structuredClone({f() {}}), () => structuredClone(Symbol('s'))]
            .map(f => { try { f(); return 'no error'; } catch (e) { return e.name; } });
        const original = {d: new Date(0), m: new Map([['k', [1, {deep: true}]]]), s: new Set([1]), r: /x/gi,
                          t: new Uint16Array([1, 2])};
        original.self = original;
        const copy = structuredClone(original);
        return {uuids: uuids.size, shape: [...uuids][0].replace(/[0-9a-f]/g, 'x'),
                version: [...uuids].every(u => u[14] === '4' && '89ab'.includes(u[19])),
                differ: a.some((x, i) => x !== b[i]), errors,
                clone: [copy !== original, copy.self === copy, copy.d instanceof Date, copy.d.getTime(),
                        copy.m.get('k')[1].deep, copy.m.get('k') !== original.m.get('k'),
                        copy.r.flags, Array.from(copy.t), copy.t.buffer !== original.t.buffer]};";
    assert_eq!(
        run_v1(code)["result"],
        json!({"uuids": 50, "shape": "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", "version": true,
               "differ": true,
               "errors": ["TypeMismatchError", "QuotaExceededError", "DataCloneError", "DataCloneError"],
               "clone": [true, true, true, 0, true, true, "gi", [1, 2], true]})
    );
}

#[test]
fn intl_formats_in_en_us_and_utc_by_default_and_in_any_iana_zone_asked_for() {
    let code = "const d = new Date(Date.UTC(2024, 0, 5, 15, 4, 5));
        return {numbers: [new Intl.NumberFormat('en-US').format(1234567.891),
                          Intl.NumberFormat('en-US', {style: 'currency', currency: 'USD'}).format(-1234.5),
                          new Intl.NumberFormat('en-US', {style: 'currency', currency: 'EUR'}).format(3),
                          new Intl.NumberFormat('en-US', {maximumFractionDigits: 1}).format(2.25),
                          new Intl.NumberFormat('en-US', {minimumFractionDigits: 2}).format(5),
                          (0.256).toLocaleString('en-US', {style: 'percent'}), (1234.5).toLocaleString()],
                dates: [d.toLocaleDateString(), d.toLocaleTimeString(), d.toLocaleString(),
                        d.toLocaleDateString('en-US', {month: 'long', day: 'numeric', year: 'numeric'}),
                        d.toLocaleDateString('en-US', {weekday: 'short', month: 'short', day: 'numeric'}),
                        new Intl.DateTimeFormat('en-US', {dateStyle: 'medium', timeStyle: 'short'}).format(d),
                        new Intl.DateTimeFormat('en-US', {hour: '2-digit', minute: '2-digit', hour12: false}).format(d)],
                zone: Intl.DateTimeFormat().resolvedOptions().timeZone,
                otherZone: d.toLocaleTimeString('en-US', {timeZone: 'Europe/Paris'})};";
    assert_eq!(
        run_v1(code)["result"],
        json!({"numbers": ["1,234,567.891", "-$1,234.50", "€3.00", "2.3", "5.00", "26%", "1,234.5"],
               "dates": ["1/5/2024", "3:04:05 PM", "1/5/2024, 3:04:05 PM", "January 5, 2024",
                         "Fri, Jan 5", "Jan 5, 2024, 3:04 PM", "15:04"],
               "zone": "UTC", "otherZone": "4:04:05 PM"})
    );
}

#[test]
fn the_web_globals_are_built_on_first_use_and_an_earlier_assignment_wins() {
    let code = "const before = Object.getOwnPropertyDescriptor(globalThis, 'atob');
        globalThis.URL = 'mine';
        const encoder = typeof TextEncoder;
        const after = Object.getOwnPropertyDescriptor(globalThis, 'atob');
        return [typeof before.get, encoder, URL, typeof after.value, after.enumerable,
                Object.keys(globalThis).includes('TextEncoder'), (12345.5).toLocaleString()];";
    assert_eq!(
        run_v1(code)["result"],
        json!(["function", "function", "mine", "function", false, false, "12,345.5"])
    );
}

/// Runs `code` in a world with the timers extension; its terminal frame.
fn run_with_timers(code: &str) -> Value {
    let mut host = Host::spawn(&[]);
    host.execute_ext(
        code,
        &[],
        json!({"maxToolCalls": 8, "maxResultBytes": 1024, "timeoutMs": 5000}),
        json!({"timers": {"maxLive": 10}}),
    );
    let terminal = host.terminal();
    let ended = host.end();
    assert_eq!(ended.code, Some(0), "stderr: {}", ended.stderr);
    terminal
}

#[test]
fn the_timer_globals_are_built_on_first_use_and_an_earlier_assignment_wins() {
    let terminal = run_with_timers(
        "const before = Object.getOwnPropertyDescriptor(globalThis, 'setTimeout');
         globalThis.clearTimeout = 'mine';
         const controller = typeof AbortController;
         const after = Object.getOwnPropertyDescriptor(globalThis, 'setTimeout');
         return [typeof before.get, controller, clearTimeout, typeof after.value, after.enumerable];",
    );
    assert_eq!(
        terminal["result"],
        json!(["function", "function", "mine", "function", false])
    );
}

#[test]
fn a_setter_on_object_prototype_never_receives_a_lazy_scripts_native_half() {
    // The timers and web globals are built on first read, after the program
    // ran: their native objects are defined, so a setter the program put on
    // Object.prototype never runs and never sees them.
    let terminal = run_with_timers(
        "for (const name of ['schedule', 'cancel', 'setRef', 'reportError', 'utf8Encode', 'utf8Decode',
                             'randomBytes', 'urlParse', 'urlSet', 'collator', 'compare', 'unitPatterns'])
           Object.defineProperty(Object.prototype, name, {set(f) { globalThis.N = name; }, configurable: true});
         const t = typeof setTimeout, e = typeof TextEncoder, i = (1234.5).toLocaleString('de-DE');
         return [t, e, i, typeof globalThis.N];",
    );
    assert_eq!(
        terminal["result"],
        json!(["function", "function", "1.234,5", "undefined"])
    );
}
