//! Running the generated code (§6): the body of a strict-mode async
//! function, driven until its promise settles or no job is left.
//!
//! Steps: compile the wrapper → call it → run pending jobs until the promise
//! settles or a latch stops the run; when no job is left, wait for the
//! result of an outstanding tool call (concurrent-calls extension only) and
//! go on, else stop → turn the settled value into JSON text or an error text.

use rquickjs::context::EvalOptions;
use rquickjs::promise::PromiseState;
use rquickjs::{Ctx, Function, Promise, Value};

use crate::js_errors::{describe, is_out_of_memory};
use crate::latches::Latches;
use crate::tool_bridge::ToolBridge;

/// How the code ended, before latches are consulted.
#[derive(Debug, Clone, PartialEq)]
pub enum Completion {
    /// The promise fulfilled; `None` when the value has no JSON form
    /// (`undefined`, a function, a cycle, a BigInt…).
    Returned(Option<serde_json::Value>),
    /// The promise fulfilled with a value whose JSON text (`text_bytes`
    /// long) is certainly over `maxResultBytes`: it was never parsed.
    Oversized { text_bytes: u64 },
    /// An uncaught exception or rejection, as `toString` + stack.
    Threw(String),
    /// The promise can never settle: no job is left to run. (A stop by a
    /// latch also ends here; the latch then decides the outcome.)
    Stalled,
}

/// File name shown in stack traces of generated code.
const CODE_FILE_NAME: &str = "<code>";

/// `max_result_bytes` bounds the result's parse (see [`Completion::Oversized`]).
pub fn run(
    ctx: &Ctx<'_>,
    latches: &Latches,
    bridge: &ToolBridge,
    code: &str,
    max_result_bytes: u64,
) -> Completion {
    // The body starts on line 2 of the wrapper; the directive makes it strict
    // even where the code would not say so.
    let source = format!("(async function () {{\"use strict\";\n{code}\n}})");
    let mut options = EvalOptions::default();
    options.strict = true;
    options.filename = Some(CODE_FILE_NAME.to_owned());
    let started = ctx
        .eval_with_options::<Function, _>(source, options)
        .and_then(|function| function.call::<_, Promise>(()));
    let promise = match started {
        Ok(promise) => promise,
        Err(rquickjs::Error::Exception) => return Completion::Threw(describe(ctx, &ctx.catch())),
        Err(error) => return Completion::Threw(error.to_string()),
    };
    loop {
        match promise.state() {
            PromiseState::Resolved => return returned_value(ctx, &promise, max_result_bytes),
            PromiseState::Rejected => return rejected_value(ctx, &promise),
            PromiseState::Pending if latches.should_stop() => return Completion::Stalled,
            PromiseState::Pending => {
                // The state is checked after every job: jobs still queued
                // when the code's promise settles never run.
                if !ctx.execute_pending_job() && !bridge.await_result(ctx) {
                    return Completion::Stalled;
                }
            }
        }
    }
}

/// The fulfilled value → JSON, inside the memory ceiling: QuickJS's
/// `JSON.stringify` builds the text on the QuickJS heap (a text past the
/// ceiling throws its out-of-memory error), the text is read in place (no
/// copy outside that heap), and it is parsed only when it could fit
/// `max_result_bytes`. Parsing is the costly step: a `serde_json::Value`
/// takes up to ~16× its text (32 bytes per `0,`), and a result that repeats
/// one array made the runner abort on allocation far past the ceiling.
fn returned_value<'js>(
    ctx: &Ctx<'js>,
    promise: &Promise<'js>,
    max_result_bytes: u64,
) -> Completion {
    let value = match promise.result::<Value<'js>>() {
        Some(Ok(value)) => value,
        _ => return Completion::Threw(describe(ctx, &ctx.catch())),
    };
    let text = match ctx.json_stringify(value).map(|t| t.map(|t| t.to_cstring())) {
        Ok(Some(Ok(text))) => text,
        Ok(None) => return Completion::Returned(None),
        Ok(Some(Err(_))) | Err(_) => {
            let thrown = ctx.catch();
            return if is_out_of_memory(ctx, &thrown) {
                Completion::Threw(describe(ctx, &thrown))
            } else {
                Completion::Returned(None)
            };
        }
    };
    let text_bytes = u64::try_from(text.len()).unwrap_or(u64::MAX);
    if text_bytes > parse_ceiling(max_result_bytes) {
        return Completion::Oversized { text_bytes };
    }
    Completion::Returned(serde_json::from_str(text.as_str()).ok())
}

/// The longest `JSON.stringify` text whose canonical spelling (what
/// `maxResultBytes` counts) can still fit `max_result_bytes`. The canonical
/// spelling is never shorter than 5/6 of it: it escapes every non-ASCII
/// character (longer), and differs otherwise only in numbers, where it
/// saves at most one byte of a 5-byte token and its separator (`1e+21,` →
/// `1e21,`).
pub(crate) fn parse_ceiling(max_result_bytes: u64) -> u64 {
    max_result_bytes
        .saturating_add(max_result_bytes / 5)
        .saturating_add(1)
}

fn rejected_value<'js>(ctx: &Ctx<'js>, promise: &Promise<'js>) -> Completion {
    // `result` re-throws the rejection reason so that `catch` returns it.
    let _ = promise.result::<Value<'js>>();
    Completion::Threw(describe(ctx, &ctx.catch()))
}
