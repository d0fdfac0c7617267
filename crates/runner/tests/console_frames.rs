//! The console extension (docs/runner.md, "Extensions"): console output as
//! `console` frames on the bridge, in program order with `tool.call`
//! frames, bounded by the confirmed `maxLogBytes`, nothing on stderr.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{json, Value};
use support::Host;

fn limits() -> Value {
    json!({"maxToolCalls": 64, "maxResultBytes": 524288, "timeoutMs": 5000})
}

fn with_console(max_log_bytes: u64, k: Option<u64>) -> Value {
    let mut extensions = json!({"console": {"maxLogBytes": max_log_bytes}});
    if let Some(k) = k {
        extensions["concurrentToolCalls"] = json!({"maxOutstanding": k});
    }
    extensions
}

/// Runs `code`, answering every tool call with its id, and returns every
/// frame after `ready` (the terminal one last) and stderr.
fn run_all(args: &[&str], code: &str, extensions: Value) -> (Vec<Value>, String) {
    let mut host = Host::spawn(args);
    let ready = host.execute_ext(code, &["t"], limits(), extensions);
    assert!(ready.get("extensions").is_some());
    let mut frames = Vec::new();
    loop {
        let frame = host.recv();
        if frame["type"] == "tool.call" {
            host.reply_ok(frame["id"].as_u64().unwrap(), frame["id"].clone());
        }
        let last = frame["type"] == "execution.result";
        frames.push(frame);
        if last {
            break;
        }
    }
    let ended = host.end();
    assert_eq!(ended.code, Some(0), "stderr: {}", ended.stderr);
    (frames, ended.stderr)
}

fn summary(frame: &Value) -> String {
    match frame["type"].as_str().unwrap() {
        "console" => format!(
            "{}:{}",
            frame["level"].as_str().unwrap(),
            frame["text"].as_str().unwrap()
        ),
        "tool.call" => format!("call {}", frame["id"]),
        other => other.to_owned(),
    }
}

#[test]
fn console_frames_come_in_program_order_with_tool_calls_and_nothing_goes_to_stderr() {
    let code = "console.log('start', {a: [1, 2]}, 3, null);
        const p = tools.t({});
        console.info('line one\\nline two');
        const r = await p;
        console.warn('got', r); console.error(new TypeError('bad')); console.debug('é');
        return 'ok';";
    let (frames, stderr) = run_all(&[], code, with_console(65536, Some(8)));
    let summaries: Vec<String> = frames.iter().map(summary).collect();
    assert_eq!(
        summaries,
        vec![
            // Formatted as Node's util.format does: objects through inspect,
            // errors with their stack.
            "log:start { a: [ 1, 2 ] } 3 null",
            "call 1",
            "info:line one\nline two",
            "warn:got 1",
            "error:TypeError: bad\n    at <anonymous> (<code>:6:51)",
            "debug:é",
            "execution.result"
        ]
    );
    for frame in &frames[..frames.len() - 1] {
        if frame["type"] == "console" {
            let keys: Vec<&String> = frame.as_object().unwrap().keys().collect();
            assert_eq!(
                keys,
                [
                    "elapsedMs",
                    "executionId",
                    "level",
                    "text",
                    "type",
                    "version"
                ]
            );
            assert!(frame["elapsedMs"].is_u64());
            assert_eq!(frame["executionId"], "exec-1");
        }
    }
    let terminal = frames.last().unwrap();
    assert_eq!(terminal["metrics"]["consoleDroppedLines"], 0);
    assert_eq!(stderr, "");
}

#[test]
fn console_frames_keep_their_order_with_synchronous_v1_calls_too() {
    let code = "console.log('a'); const r = tools.t({}); console.log('b', r); return r;";
    let (frames, _) = run_all(&[], code, with_console(100, None));
    let summaries: Vec<String> = frames.iter().map(summary).collect();
    assert_eq!(
        summaries,
        vec!["log:a", "call 1", "log:b 1", "execution.result"]
    );
}

#[test]
fn the_budget_cuts_the_first_line_that_does_not_fit_and_counts_every_later_line() {
    // 5 + 1 bytes fit in 10; "héllo" (6 bytes) is cut to the 4 left: "hél".
    let code = "console.log('12345'); console.log('x'); console.log('héllo');
                console.log('dropped'); console.log(''); return 1;";
    let (frames, stderr) = run_all(&[], code, with_console(10, None));
    let console: Vec<&Value> = frames.iter().filter(|f| f["type"] == "console").collect();
    assert_eq!(console.len(), 3);
    assert_eq!(console[0]["text"], "12345");
    assert!(console[0].get("truncated").is_none());
    assert_eq!(console[1]["text"], "x");
    assert_eq!(console[2]["text"], "hél");
    assert_eq!(console[2]["truncated"], true);
    assert_eq!(frames.last().unwrap()["metrics"]["consoleDroppedLines"], 2);
    assert_eq!(stderr, "");
    let code = "console.log('ab'); console.log('aé'); return 1;";
    let (frames, _) = run_all(&[], code, with_console(3, None));
    assert_eq!(frames[1]["text"], "a", "a cut never splits a character");
    assert_eq!(frames[1]["truncated"], true);
}

#[test]
fn a_console_frame_over_max_frame_bytes_is_cut_to_fit_and_marked_truncated() {
    let code = "console.log('\\u0001'.repeat(1000)); console.log('after'); return 1;";
    let (frames, _) = run_all(
        &["--max-frame-bytes", "400"],
        code,
        with_console(5000, None),
    );
    let line = support_encoded_len(&frames[0]);
    assert!(line < 400, "{line}");
    assert_eq!(frames[0]["truncated"], true);
    assert!(frames[0]["text"].as_str().unwrap().len() > 10);
    assert_eq!(frames[1]["text"], "after");
}

fn support_encoded_len(frame: &Value) -> usize {
    // Runner frames escape non-ASCII and control characters as \uXXXX.
    let compact = serde_json::to_string(frame).unwrap();
    compact.len() + compact.matches('\u{1}').count() * 5
}

#[test]
fn without_the_console_extension_output_stays_on_stderr_and_metrics_stay_v1() {
    let mut host = Host::spawn(&[]);
    host.execute_ext(
        "console.log('to stderr'); return 1;",
        &[],
        limits(),
        json!({"concurrentToolCalls": {"maxOutstanding": 2}}),
    );
    let terminal = host.recv();
    assert_eq!(terminal["type"], "execution.result");
    let keys: Vec<&String> = terminal["metrics"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["elapsedMs", "toolCalls"]);
    let ended = host.end();
    assert_eq!(ended.stderr, "to stderr\n");
}
