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
    /// An uncaught exception or rejection, as `toString` + stack.
    Threw(String),
    /// The promise can never settle: no job is left to run. (A stop by a
    /// latch also ends here; the latch then decides the outcome.)
    Stalled,
}

/// File name shown in stack traces of generated code.
const CODE_FILE_NAME: &str = "<code>";

pub fn run(ctx: &Ctx<'_>, latches: &Latches, bridge: &ToolBridge, code: &str) -> Completion {
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
            PromiseState::Resolved => return returned_value(ctx, &promise),
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

fn returned_value<'js>(ctx: &Ctx<'js>, promise: &Promise<'js>) -> Completion {
    let value = match promise.result::<Value<'js>>() {
        Some(Ok(value)) => value,
        _ => return Completion::Threw(describe(ctx, &ctx.catch())),
    };
    match ctx.json_stringify(value) {
        Ok(Some(text)) => match text.to_string() {
            Ok(text) => Completion::Returned(serde_json::from_str(&text).ok()),
            Err(_) => Completion::Returned(None),
        },
        Ok(None) => Completion::Returned(None),
        Err(_) => {
            let thrown = ctx.catch();
            if is_out_of_memory(ctx, &thrown) {
                Completion::Threw(describe(ctx, &thrown))
            } else {
                Completion::Returned(None)
            }
        }
    }
}

fn rejected_value<'js>(ctx: &Ctx<'js>, promise: &Promise<'js>) -> Completion {
    // `result` re-throws the rejection reason so that `catch` returns it.
    let _ = promise.result::<Value<'js>>();
    Completion::Threw(describe(ctx, &ctx.catch()))
}
