//! Turning JavaScript failures into text, and the texts of latched stops.

use rquickjs::{Coerced, Ctx, FromJs, Value};

use crate::latches::Latches;

/// Message of the protocol-failure error (thrown into JS and sent to the host).
pub const PROTOCOL_FAILURE: &str = "Code Mode bridge protocol failure";

/// Text of a thrown value: its `toString()`, then its `stack` when it has
/// one. Never fails: an unprintable value gets a fixed text.
pub fn describe<'js>(ctx: &Ctx<'js>, thrown: &Value<'js>) -> String {
    let text = match Coerced::<String>::from_js(ctx, thrown.clone()) {
        Ok(Coerced(text)) => text,
        Err(_) => {
            let nested = ctx.catch();
            if is_out_of_memory_text(ctx, &nested) {
                "InternalError: out of memory".to_owned()
            } else {
                "uncaught exception (its toString() failed)".to_owned()
            }
        }
    };
    let stack = thrown.as_object().and_then(|object| {
        match object.get::<_, Option<Coerced<String>>>("stack") {
            Ok(stack) => stack.map(|Coerced(stack)| stack),
            Err(_) => {
                ctx.catch();
                None
            }
        }
    });
    match stack {
        Some(stack) if !stack.trim().is_empty() => format!("{text}\n{}", stack.trim_end()),
        _ => text,
    }
}

/// Whether a thrown value is QuickJS's out-of-memory error.
pub fn is_out_of_memory<'js>(ctx: &Ctx<'js>, thrown: &Value<'js>) -> bool {
    is_out_of_memory_text(ctx, thrown)
}

fn is_out_of_memory_text<'js>(ctx: &Ctx<'js>, thrown: &Value<'js>) -> bool {
    let message = thrown
        .as_object()
        .and_then(|object| object.get::<_, Option<String>>("message").ok().flatten());
    if message.is_none() {
        ctx.catch();
    }
    message.is_some_and(|message| message.contains("out of memory"))
}

/// The message thrown into JavaScript once a latch stops the execution.
pub fn latched_message(latches: &Latches) -> &'static str {
    let snapshot = latches.snapshot();
    if snapshot.limit.is_some() {
        "tool call limit exceeded"
    } else if snapshot.cancelled {
        "execution cancelled"
    } else if snapshot.timed_out {
        "execution timed out"
    } else {
        PROTOCOL_FAILURE
    }
}
