//! The terminal decision (§9): first match wins, and a latch always beats
//! whatever JavaScript caught or returned.
//!
//! Order: limit → cancelled → timeout → protocol → uncaught exception
//! (memory / javascript) → not serializable → over `maxResultBytes` → ok.

use serde_json::{json, Value};

use crate::canonical_json;
use crate::evaluation::Completion;
use crate::execute::PROTOCOL_VERSION;
use crate::js_errors::PROTOCOL_FAILURE;
use crate::latches::LatchSnapshot;

/// The result on success, or the exact `error` object.
pub type Decision = Result<Value, Value>;

/// Message of a JavaScript value with no JSON form (row 6).
const NOT_SERIALIZABLE: &str = "result is not JSON serializable";

/// Which error texts the terminal frame uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wording {
    /// The texts fixed by §9.
    V1,
    /// Extension mode: texts that tell the model what to fix (sizes).
    Extended,
}

pub fn decide(
    latches: LatchSnapshot,
    completion: Completion,
    max_result_bytes: u64,
    wording: Wording,
) -> Decision {
    if let Some(limit) = latches.limit {
        return Err(json!({"kind": "limit", "code": "TOOL_CALL_LIMIT_EXCEEDED",
                          "message": "tool call limit exceeded",
                          "limit": limit, "attempted": limit.saturating_add(1)}));
    }
    if latches.cancelled {
        return Err(json!({"kind": "cancelled", "message": "execution cancelled"}));
    }
    if latches.timed_out {
        return Err(json!({"kind": "timeout", "message": "execution timed out"}));
    }
    if latches.protocol_failed {
        return Err(json!({"kind": "internal", "message": PROTOCOL_FAILURE}));
    }
    match completion {
        Completion::Threw(message) if message.contains("out of memory") => {
            Err(json!({"kind": "memory", "message": message}))
        }
        Completion::Threw(message) => Err(json!({"kind": "javascript", "message": message})),
        Completion::Stalled => Err(json!({"kind": "javascript",
            "message": "execution stalled: the code awaits a promise that nothing can settle"})),
        Completion::Returned(None) => Err(json!({"kind": "result", "message": NOT_SERIALIZABLE})),
        Completion::Oversized { text_bytes } => {
            let message = match wording {
                Wording::V1 => "result exceeds max_result_bytes".to_owned(),
                // The text's size: the canonical one (never parsed) is
                // within a sixth of it (canonical_json.rs, parse_ceiling).
                Wording::Extended => format!(
                    "result exceeds max_result_bytes ({text_bytes} bytes > {max_result_bytes})"
                ),
            };
            Err(json!({"kind": "result_limit", "message": message}))
        }
        Completion::Returned(Some(result)) => {
            let bytes = canonical_json::encode(&result).len() as u64;
            if bytes > max_result_bytes {
                let message = match wording {
                    Wording::V1 => "result exceeds max_result_bytes".to_owned(),
                    Wording::Extended => format!(
                        "result exceeds max_result_bytes ({bytes} bytes > {max_result_bytes})"
                    ),
                };
                return Err(json!({"kind": "result_limit", "message": message}));
            }
            Ok(result)
        }
    }
}

/// Counters of the `metrics` object.
#[derive(Debug, Clone, Copy)]
pub struct Metrics {
    pub elapsed_ms: u64,
    pub tool_calls: u64,
    /// Console lines not sent; only when the console extension was
    /// confirmed (v1 metrics have exactly the two keys above).
    pub console_dropped_lines: Option<u64>,
}

/// The terminal `execution.result` frame.
pub fn terminal_frame(execution_id: Option<&str>, decision: Decision, metrics: Metrics) -> Value {
    let mut frame = json!({
        "executionId": execution_id,
        "metrics": {"elapsedMs": metrics.elapsed_ms, "toolCalls": metrics.tool_calls},
        "type": "execution.result",
        "version": PROTOCOL_VERSION,
    });
    if let Some(dropped) = metrics.console_dropped_lines {
        frame["metrics"]["consoleDroppedLines"] = json!(dropped);
    }
    match decision {
        Ok(result) => {
            frame["ok"] = Value::Bool(true);
            frame["result"] = result;
        }
        Err(error) => {
            frame["ok"] = Value::Bool(false);
            frame["error"] = error;
        }
    }
    frame
}

/// Makes a terminal frame that is too large for `--max-frame-bytes` fit:
/// an `ok` frame becomes the `result_limit` error; a failed one keeps its
/// kind and its message is cut (on a character boundary) to what fits, each
/// byte counted as 6 for the worst-case `\u00XX` escape.
pub fn shrink_to_fit(mut frame: Value, max_frame_bytes: u64) -> Value {
    if frame["ok"] == Value::Bool(true) {
        if let Value::Object(map) = &mut frame {
            map.remove("result");
        }
        frame["ok"] = Value::Bool(false);
        frame["error"] =
            json!({"kind": "result_limit", "message": "result exceeds max_result_bytes"});
        return frame;
    }
    let message = frame["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    frame["error"]["message"] = Value::String(String::new());
    let rest = canonical_json::encode(&frame).len() as u64;
    let budget =
        usize::try_from(max_frame_bytes.saturating_sub(rest + 1) / 6).unwrap_or(usize::MAX);
    let mut end = budget.min(message.len());
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    frame["error"]["message"] = Value::String(message[..end].to_owned());
    frame
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(decision: &Decision) -> &str {
        decision
            .as_ref()
            .err()
            .and_then(|e| e["kind"].as_str())
            .unwrap_or("ok")
    }

    #[test]
    fn latches_are_ranked_limit_cancel_timeout_protocol() {
        let all = LatchSnapshot {
            limit: Some(2),
            cancelled: true,
            timed_out: true,
            protocol_failed: true,
        };
        let returned = || Completion::Returned(Some(json!(1)));
        let error = decide(all, returned(), 10, Wording::V1).expect_err("latched");
        assert_eq!(
            error,
            json!({"kind": "limit", "code": "TOOL_CALL_LIMIT_EXCEEDED",
            "message": "tool call limit exceeded", "limit": 2, "attempted": 3})
        );
        let no_limit = LatchSnapshot { limit: None, ..all };
        assert_eq!(
            kind(&decide(no_limit, returned(), 10, Wording::V1)),
            "cancelled"
        );
        let no_cancel = LatchSnapshot {
            cancelled: false,
            ..no_limit
        };
        assert_eq!(
            kind(&decide(no_cancel, returned(), 10, Wording::V1)),
            "timeout"
        );
        let no_timeout = LatchSnapshot {
            timed_out: false,
            ..no_cancel
        };
        assert_eq!(
            kind(&decide(no_timeout, returned(), 10, Wording::V1)),
            "internal"
        );
    }

    #[test]
    fn an_oversized_failure_keeps_its_kind_and_a_cut_message_that_fits() {
        let metrics = Metrics {
            elapsed_ms: 1,
            tool_calls: 0,
            console_dropped_lines: None,
        };
        let error = json!({"kind": "javascript", "message": "é".repeat(5000)});
        let frame = shrink_to_fit(terminal_frame(Some("id"), Err(error), metrics), 1000);
        assert!(canonical_json::encode(&frame).len() < 1000);
        assert_eq!(frame["error"]["kind"], "javascript");
        assert!(frame["error"]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("éé")));
    }

    #[test]
    fn an_oversized_success_becomes_result_limit() {
        let metrics = Metrics {
            elapsed_ms: 1,
            tool_calls: 0,
            console_dropped_lines: None,
        };
        let frame = shrink_to_fit(terminal_frame(None, Ok(json!("x".repeat(99))), metrics), 50);
        assert_eq!(frame["ok"], false);
        assert_eq!(frame["error"]["kind"], "result_limit");
        assert!(frame.get("result").is_none());
    }

    #[test]
    fn unlatched_completions_map_to_their_kinds() {
        let none = LatchSnapshot::default();
        let oom = Completion::Threw("InternalError: out of memory".into());
        assert_eq!(kind(&decide(none, oom, 10, Wording::V1)), "memory");
        assert_eq!(
            kind(&decide(
                none,
                Completion::Threw("x".into()),
                10,
                Wording::V1
            )),
            "javascript"
        );
        assert_eq!(
            kind(&decide(none, Completion::Returned(None), 10, Wording::V1)),
            "result"
        );
        let big = Completion::Returned(Some(json!("x".repeat(20))));
        assert_eq!(
            kind(&decide(none, big.clone(), 10, Wording::V1)),
            "result_limit"
        );
        assert_eq!(
            decide(none, big, 10, Wording::Extended).expect_err("too big")["message"],
            "result exceeds max_result_bytes (22 bytes > 10)"
        );
        assert_eq!(
            decide(none, Completion::Returned(Some(json!([1]))), 3, Wording::V1),
            Ok(json!([1]))
        );
    }

    #[test]
    fn an_unparsed_oversized_result_is_a_result_limit_that_gives_its_text_size() {
        let none = LatchSnapshot::default();
        let oversized = || Completion::Oversized { text_bytes: 40 };
        assert_eq!(
            decide(none, oversized(), 10, Wording::V1).expect_err("too big")["message"],
            "result exceeds max_result_bytes"
        );
        let extended = decide(none, oversized(), 10, Wording::Extended).expect_err("too big");
        assert_eq!(extended["kind"], "result_limit");
        assert!(extended["message"]
            .as_str()
            .is_some_and(|m| m.contains("(40 bytes > 10)")));
        let timed_out = LatchSnapshot {
            timed_out: true,
            ..LatchSnapshot::default()
        };
        assert_eq!(
            kind(&decide(timed_out, oversized(), 10, Wording::V1)),
            "timeout"
        );
    }
}
