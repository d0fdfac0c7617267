//! `console.log/info/warn/error/debug` (beyond the reference runner): one
//! line each on stderr, never on the bridge, within `--max-log-bytes`.
//!
//! Budget rule: a line (with its newline) is written only while it fits in
//! what is left of the budget; from the first line that does not fit, every
//! later line is dropped and counted, and [`Console::finish`] writes one
//! final line saying how many were dropped.

use std::cell::Cell;
use std::io::Write;
use std::rc::Rc;

use rquickjs::function::Rest;
use rquickjs::{Coerced, Ctx, FromJs, Function, Object, Value};

const LEVELS: [&str; 5] = ["log", "info", "warn", "error", "debug"];

pub struct Console {
    budget_bytes: u64,
    used_bytes: Cell<u64>,
    dropped_lines: Cell<u64>,
}

impl Console {
    pub fn new(budget_bytes: u64) -> Self {
        Console {
            budget_bytes,
            used_bytes: Cell::new(0),
            dropped_lines: Cell::new(0),
        }
    }

    /// Defines the global `console` with its five methods.
    pub fn install<'js>(self: &Rc<Self>, ctx: &Ctx<'js>) -> rquickjs::Result<()> {
        let console = Object::new(ctx.clone())?;
        for level in LEVELS {
            let sink = Rc::clone(self);
            let method =
                Function::new(ctx.clone(), move |ctx: Ctx<'js>, args: Rest<Value<'js>>| {
                    sink.write_line(&format_line(&ctx, &args.0));
                })?
                .with_name(level)?;
            console.set(level, method)?;
        }
        ctx.globals().set("console", console)
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

    /// Writes the final "lines dropped" line, if any line was dropped.
    pub fn finish(&self) {
        let dropped = self.dropped_lines.get();
        if dropped > 0 {
            let _ = writeln!(
                std::io::stderr().lock(),
                "cordon-runner: console output over --max-log-bytes {}: {dropped} line(s) dropped",
                self.budget_bytes
            );
        }
    }
}

/// Arguments joined by spaces: strings as they are, errors and primitives
/// through `String()`, other objects as JSON when they have a JSON form.
/// Newlines are escaped so that one call is one line.
fn format_line<'js>(ctx: &Ctx<'js>, args: &[Value<'js>]) -> String {
    let parts: Vec<String> = args.iter().map(|arg| format_value(ctx, arg)).collect();
    parts.join(" ").replace('\r', "\\r").replace('\n', "\\n")
}

fn format_value<'js>(ctx: &Ctx<'js>, value: &Value<'js>) -> String {
    if let Some(text) = value.as_string().and_then(|text| text.to_string().ok()) {
        return text;
    }
    if value.is_object() && !value.is_function() && !value.is_error() {
        match ctx.json_stringify(value.clone()) {
            Ok(Some(json)) => {
                if let Ok(json) = json.to_string() {
                    return json;
                }
            }
            Ok(None) => {}
            Err(_) => {
                ctx.catch();
            }
        }
    }
    match Coerced::<String>::from_js(ctx, value.clone()) {
        Ok(Coerced(text)) => text,
        Err(_) => {
            ctx.catch();
            "[unprintable]".to_owned()
        }
    }
}
