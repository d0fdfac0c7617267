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
    // Anything else that is not a function keeps QuickJS's text.
    let terminal = run_ext("const f = null; return f();", &granted, 1000);
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
