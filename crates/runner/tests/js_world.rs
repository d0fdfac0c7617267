//! §6: the JavaScript world — no ambient capability, the `tools` binding,
//! strict async function body, and the console on stderr.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::json;
use support::{run, Host};

#[test]
fn ambient_capabilities_are_absent_and_the_standard_library_is_present() {
    let code = "return {absent: [typeof std, typeof os, typeof fs, typeof fetch, typeof process,
                          typeof require, typeof module, typeof setTimeout, typeof setInterval,
                          typeof WebAssembly, typeof performance, typeof print, typeof scriptArgs],
                 present: [typeof JSON, typeof Promise, typeof Map, typeof Proxy, typeof Date,
                           typeof RegExp, typeof Uint8Array, typeof WeakRef]};";
    let (terminal, _) = run(&[], code, &[]);
    assert_eq!(terminal["result"]["absent"], json!(vec!["undefined"; 13]));
    assert_eq!(
        terminal["result"]["present"],
        json!(vec![
            "object", "function", "function", "function", "function", "function", "function",
            "function"
        ])
    );
}

#[test]
fn there_is_no_module_loader() {
    let (terminal, _) = run(
        &[],
        "try { await import('os'); return 'loaded'; } catch (e) { return String(e); }",
        &[],
    );
    assert_ne!(terminal["result"], "loaded");
}

#[test]
fn tools_holds_exactly_the_declared_names_in_catalogue_order() {
    let code = "return Reflect.ownKeys(tools);";
    let (terminal, _) = run(&[], code, &["z.last", "a.first", "m-mid"]);
    assert_eq!(terminal["result"], json!(["z.last", "a.first", "m-mid"]));
}

#[test]
fn tools_is_a_frozen_null_prototype_object_behind_a_fixed_global() {
    let code = "'use strict';
        const global = Object.getOwnPropertyDescriptor(globalThis, 'tools');
        const entry = Object.getOwnPropertyDescriptor(tools, 'a.b');
        const attempts = [];
        for (const attempt of [() => { tools = {}; }, () => { tools['a.b'] = 1; },
                               () => { tools.extra = 1; }, () => { delete tools['a.b']; }]) {
            try { attempt(); attempts.push('allowed'); } catch (e) { attempts.push(e.name); }
        }
        return {proto: Object.getPrototypeOf(tools), frozen: Object.isFrozen(tools),
                global: [global.writable, global.configurable],
                entry: [typeof entry.value, entry.enumerable, entry.writable, entry.configurable],
                attempts, stillSame: typeof tools['a.b']};";
    let (terminal, _) = run(&[], code, &["a.b"]);
    assert_eq!(
        terminal["result"],
        json!({"proto": null, "frozen": true, "global": [false, false],
               "entry": ["function", true, false, false],
               "attempts": ["TypeError", "TypeError", "TypeError", "TypeError"],
               "stillSame": "function"})
    );
}

#[test]
fn the_code_is_the_body_of_a_strict_async_function() {
    let code = "const strict = (function () { return this === undefined; })();
        let leaked = 'no';
        try { undeclared = 1; leaked = 'yes'; } catch (e) { leaked = e.name; }
        const awaited = await Promise.resolve(5);
        return {strict, leaked, awaited, isAsync: (async () => {}).constructor.name};";
    let (terminal, _) = run(&[], code, &[]);
    assert_eq!(
        terminal["result"],
        json!({"strict": true, "leaked": "ReferenceError", "awaited": 5, "isAsync": "AsyncFunction"})
    );
}

#[test]
fn console_methods_write_one_line_each_to_stderr_never_to_the_bridge() {
    let code = "console.log('a', 1, {k: [true]}); console.info('two\\nlines'); console.warn(new Error('w'));
                console.error(null, undefined); console.debug('d'); return 'done';";
    let (terminal, ended) = run(&[], code, &[]);
    assert_eq!(terminal["result"], "done");
    assert_eq!(
        ended.stderr,
        "a 1 { k: [ true ] }\ntwo\\nlines\nError: w\\n    at <anonymous> (<code>:2:80)\nnull undefined\nd\n"
    );
}

#[test]
fn console_output_past_max_log_bytes_is_dropped_and_counted_in_one_final_line() {
    let code = "for (let i = 0; i < 100; i++) console.log('line ' + String(i).padStart(3, '0')); return 1;";
    let (terminal, ended) = run(&["--max-log-bytes", "45"], code, &[]);
    assert_eq!(terminal["result"], 1);
    let lines: Vec<&str> = ended.stderr.lines().collect();
    // "line 000\n" is 9 bytes: five fit in 45.
    assert_eq!(
        &lines[..5],
        ["line 000", "line 001", "line 002", "line 003", "line 004"]
    );
    assert_eq!(lines.len(), 6, "{}", ended.stderr);
    assert!(lines[5].contains("95 line(s) dropped"), "{}", lines[5]);
}

#[test]
fn console_output_within_budget_has_no_drop_line() {
    let (_, ended) = run(
        &["--max-log-bytes", "9"],
        "console.log('line 000'); return 1;",
        &[],
    );
    assert_eq!(ended.stderr, "line 000\n");
}

#[test]
fn a_runner_waiting_for_execute_dies_by_sigterm() {
    let host = Host::spawn(&[]);
    std::thread::sleep(std::time::Duration::from_millis(50));
    host.signal(libc::SIGTERM);
    let ended = host.end();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(ended.status.signal(), Some(libc::SIGTERM));
}
