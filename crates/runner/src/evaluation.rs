//! Running the generated code (§6): the body of a strict-mode async
//! function, driven until its promise settles or no job is left.
//!
//! Steps: compile the wrapper → call it → run pending jobs until the promise
//! settles or a latch stops the run; when no job is left, fire the earliest
//! due timer (timers extension), else wait for the result of an outstanding
//! tool call (concurrent-calls extension) or the next timer, whichever comes
//! first, and go on; with neither, stop → turn the settled value into JSON
//! text or an error text. An error a timer callback or event listener threw
//! ends the run, as an uncaught exception ends a Node process.

use rquickjs::context::EvalOptions;
use rquickjs::promise::PromiseState;
use rquickjs::{Ctx, Function, Promise, Value};

use crate::canonical_json;
use crate::js_errors::{describe, is_out_of_memory};
use crate::latches::Latches;
use crate::mailbox::Mailbox;
use crate::timers::Timers;
use crate::tool_bridge::{Progress, ToolBridge};

/// What the loop may wait on besides QuickJS jobs.
pub struct Waits<'a> {
    pub latches: &'a Latches,
    pub bridge: &'a ToolBridge,
    pub mailbox: &'a Mailbox,
    /// `None` unless the timers extension was confirmed.
    pub timers: Option<&'a Timers>,
}

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
pub fn run(ctx: &Ctx<'_>, waits: &Waits<'_>, code: &str, max_result_bytes: u64) -> Completion {
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
        if let Some(uncaught) = waits.timers.and_then(Timers::take_uncaught) {
            return Completion::Threw(uncaught);
        }
        match promise.state() {
            PromiseState::Resolved => return returned_value(ctx, &promise, max_result_bytes),
            PromiseState::Rejected => return rejected_value(ctx, &promise),
            PromiseState::Pending if waits.latches.should_stop() => return Completion::Stalled,
            PromiseState::Pending => {
                // The state is checked after every job: jobs still queued
                // when the code's promise settles never run.
                if !ctx.execute_pending_job() && !waits.advance(ctx) {
                    return Completion::Stalled;
                }
            }
        }
    }
}

impl Waits<'_> {
    /// With no job left: fires a due timer, or waits for a tool result or
    /// the next timer. `false` when nothing can ever make progress.
    fn advance(&self, ctx: &Ctx<'_>) -> bool {
        if self.timers.is_some_and(|timers| timers.fire_due(ctx)) {
            return true;
        }
        if self.bridge.has_outstanding() {
            let next_timer = self.timers.and_then(Timers::next_scheduled);
            return self.bridge.await_result(ctx, next_timer) != Progress::Stuck;
        }
        let next_timer = self.timers.and_then(Timers::next_due);
        match next_timer {
            // Sleeping on a timer costs no CPU; the deadline still ends it.
            Some(due) => matches!(
                self.mailbox.sleep_until(self.latches, due),
                crate::mailbox::Wake::Elapsed
            ),
            None => false,
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
    if text_bytes > canonical_json::parse_ceiling(max_result_bytes) {
        return Completion::Oversized { text_bytes };
    }
    Completion::Returned(serde_json::from_str(text.as_str()).ok())
}

fn rejected_value<'js>(ctx: &Ctx<'js>, promise: &Promise<'js>) -> Completion {
    // `result` re-throws the rejection reason so that `catch` returns it.
    let _ = promise.result::<Value<'js>>();
    Completion::Threw(describe(ctx, &ctx.catch()))
}
