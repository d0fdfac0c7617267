//! `console` (beyond the reference runner): Node's console for a pipe —
//! `log/info/warn/error/debug` formatted as `util.format` does, `dir`,
//! `table`, `group`, `count`, `time`, `assert`, `trace` (`console.js`, formatting in `inspect.js`); each
//! call is one line at one of the five levels, sent from here.
//!
//! v1 (and any host that did not confirm the console extension): one line
//! each on stderr, never on the bridge, within `--max-log-bytes`. A line
//! (with its newline) is written only while it fits in what is left of the
//! budget; from the first line that does not fit, every later line is
//! dropped and counted, and [`Console::finish`] writes one final line
//! saying how many were dropped.
//!
//! Console extension ([`Console::send_frames`]): one `console` frame per
//! call on the bridge, in program order with `tool.call` frames, nothing on
//! stderr. The UTF-8 bytes of `text` count against the confirmed
//! `maxLogBytes`; the first line that does not fit is cut to what is left
//! and marked `truncated`, every later line is only counted
//! ([`Console::dropped_lines`]).

use std::cell::{Cell, RefCell};
use std::io::Write;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Instant;

use rquickjs::context::EvalOptions;
use rquickjs::object::{Accessor, Property};
use rquickjs::{Ctx, Function, Object, Value};
use serde_json::{json, Value as Json};

use crate::canonical_json;
use crate::execute::PROTOCOL_VERSION;
use crate::frame_writer::FrameWriter;
use crate::latches::Latches;
use crate::mailbox::Mailbox;

const LEVELS: [&str; 5] = ["log", "info", "warn", "error", "debug"];

/// Node's console in JavaScript: `table`, `group`, `count`, `time`,
/// `assert`, `trace` over the five levels.
const SCRIPT: &str = include_str!("console.js");
/// Node's `util.inspect` and `util.format`, for the console.
const INSPECT_SCRIPT: &str = include_str!("inspect.js");

/// Where console frames go once the extension is confirmed.
pub struct FrameSink {
    pub writer: Rc<FrameWriter>,
    pub execution_id: Option<String>,
    /// The confirmed `maxLogBytes`.
    pub budget_bytes: u64,
    /// A failed write means the host is gone: the protocol latch.
    pub latches: Arc<Latches>,
    pub mailbox: Arc<Mailbox>,
}

pub struct Console {
    budget_bytes: u64,
    used_bytes: Cell<u64>,
    dropped_lines: Cell<u64>,
    /// Set once a line was cut: later lines are only counted.
    exhausted: Cell<bool>,
    frames: RefCell<Option<FrameSink>>,
    /// When `ready` was sent: `elapsedMs` of console frames counts from it.
    ready_at: Cell<Option<Instant>>,
}

impl Console {
    pub fn new(budget_bytes: u64) -> Self {
        Console {
            budget_bytes,
            used_bytes: Cell::new(0),
            dropped_lines: Cell::new(0),
            exhausted: Cell::new(false),
            frames: RefCell::new(None),
            ready_at: Cell::new(None),
        }
    }

    /// Announces the global `console`: an accessor that builds it from
    /// `console.js` on first read (its formatting code costs nothing to a
    /// program that never logs) and replaces itself by the object. An
    /// assignment before that defines `console` as the code wants.
    pub fn install<'js>(self: &Rc<Self>, ctx: &Ctx<'js>) -> rquickjs::Result<()> {
        let sink = Rc::clone(self);
        let get = move |ctx: Ctx<'js>| -> rquickjs::Result<Value<'js>> {
            let console = sink.build(&ctx)?;
            ctx.globals().prop(
                "console",
                Property::from(console.clone()).writable().configurable(),
            )?;
            Ok(console)
        };
        let set = move |ctx: Ctx<'js>, value: Value<'js>| -> rquickjs::Result<()> {
            ctx.globals()
                .prop("console", Property::from(value).writable().configurable())
        };
        ctx.globals()
            .prop("console", Accessor::new(get, set).configurable())
    }

    /// Runs `inspect.js`, then `console.js` with it and the native
    /// `write(level, text)` and `now()`.
    fn build<'js>(self: &Rc<Self>, ctx: &Ctx<'js>) -> rquickjs::Result<Value<'js>> {
        let native = Object::new(ctx.clone())?;
        let sink = Rc::clone(self);
        let write = Function::new(ctx.clone(), move |level: String, text: String| {
            if let Some(level) = LEVELS.iter().find(|known| **known == level) {
                sink.write(level, &text);
            }
        })?;
        native.prop("write", write)?;
        let origin = Instant::now();
        let now = Function::new(ctx.clone(), move || origin.elapsed().as_secs_f64() * 1000.0)?;
        native.prop("now", now)?;
        let options = |file: &str| {
            let mut options = EvalOptions::default();
            options.strict = true;
            options.filename = Some(file.to_owned());
            options
        };
        let inspect: Function = ctx.eval_with_options(INSPECT_SCRIPT, options("<console>"))?;
        let util: Value = inspect.call(())?;
        let script: Function = ctx.eval_with_options(SCRIPT, options("<console>"))?;
        script.call((native, util))
    }

    /// From now on console output goes to the bridge as frames.
    pub fn send_frames(&self, sink: FrameSink) {
        *self.frames.borrow_mut() = Some(sink);
    }

    pub fn mark_ready(&self, at: Instant) {
        self.ready_at.set(Some(at));
    }

    /// Lines not sent at all (console extension only).
    pub fn dropped_lines(&self) -> u64 {
        self.dropped_lines.get()
    }

    fn write(&self, level: &str, text: &str) {
        match &*self.frames.borrow() {
            Some(sink) => self.send_frame(sink, level, text),
            None => self.write_line(&escape_newlines(text)),
        }
    }

    fn write_line(&self, line: &str) {
        let bytes = line.len() as u64 + 1;
        let used = self.used_bytes.get();
        if self.dropped_lines.get() > 0 || used.saturating_add(bytes) > self.budget_bytes {
            self.dropped_lines.set(self.dropped_lines.get() + 1);
            return;
        }
        self.used_bytes.set(used + bytes);
        let mut out = Vec::with_capacity(line.len() + 1);
        out.extend_from_slice(line.as_bytes());
        out.push(b'\n');
        // stderr is diagnostics only: a closed stderr must not fail the run.
        let _ = std::io::stderr().lock().write_all(&out);
    }

    fn send_frame(&self, sink: &FrameSink, level: &str, text: &str) {
        if self.exhausted.get() {
            self.dropped_lines.set(self.dropped_lines.get() + 1);
            return;
        }
        let left = sink.budget_bytes.saturating_sub(self.used_bytes.get());
        let mut text = text;
        let mut truncated = false;
        if text.len() as u64 > left {
            text = cut(text, usize::try_from(left).unwrap_or(usize::MAX));
            truncated = true;
            self.exhausted.set(true);
        }
        let elapsed_ms = self.ready_at.get().map_or(0, |at| {
            u64::try_from(at.elapsed().as_millis()).unwrap_or(u64::MAX)
        });
        let mut frame = json!({"elapsedMs": elapsed_ms, "executionId": sink.execution_id,
                               "level": level, "text": text, "type": "console",
                               "version": PROTOCOL_VERSION});
        if truncated {
            frame["truncated"] = Json::Bool(true);
        }
        let bytes = match sink.writer.encode(&frame) {
            Ok(bytes) => bytes,
            Err(_) => {
                // Over --max-frame-bytes: cut to what fits, each byte
                // counted as 6 for the worst-case `\u00XX` escape.
                frame["text"] = Json::String(String::new());
                frame["truncated"] = Json::Bool(true);
                let rest = canonical_json::encode(&frame).len() as u64;
                let room = sink.writer.max_frame_bytes().saturating_sub(rest + 1) / 6;
                text = cut(text, usize::try_from(room).unwrap_or(usize::MAX));
                frame["text"] = Json::String(text.to_owned());
                match sink.writer.encode(&frame) {
                    Ok(bytes) => bytes,
                    Err(_) => return,
                }
            }
        };
        self.used_bytes
            .set(self.used_bytes.get().saturating_add(text.len() as u64));
        if sink.writer.write_encoded(&bytes).is_err() {
            sink.latches.fail_protocol();
            sink.mailbox.notify();
        }
    }

    /// Writes the final "lines dropped" line on stderr, if any line was
    /// dropped there (v1 mode; frames report it in `metrics`).
    pub fn finish(&self) {
        let dropped = self.dropped_lines.get();
        if dropped > 0 && self.frames.borrow().is_none() {
            let _ = writeln!(
                std::io::stderr().lock(),
                "cordon-runner: console output over --max-log-bytes {}: {dropped} line(s) dropped",
                self.budget_bytes
            );
        }
    }
}

/// The longest prefix of `text` of at most `bytes` bytes that ends on a
/// character boundary.
fn cut(text: &str, bytes: usize) -> &str {
    let mut end = bytes.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// On stderr one call is one line.
fn escape_newlines(text: &str) -> String {
    text.replace('\r', "\\r").replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_end_on_character_boundaries() {
        assert_eq!(cut("aé", 2), "a");
        assert_eq!(cut("aé", 3), "aé");
        assert_eq!(cut("abc", 0), "");
        assert_eq!(cut("abc", 99), "abc");
    }
}
