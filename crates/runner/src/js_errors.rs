//! Turning JavaScript failures into text, and the texts of latched stops.

use rquickjs::{Coerced, Ctx, Exception, FromJs, Value};

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
            if is_out_of_memory(ctx, &nested) {
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

/// Whether a thrown value is QuickJS's out-of-memory error (an error
/// object whose `message` says so).
pub fn is_out_of_memory<'js>(ctx: &Ctx<'js>, thrown: &Value<'js>) -> bool {
    let Some(object) = thrown.as_object() else {
        return false;
    };
    match object.get::<_, Option<String>>("message") {
        Ok(message) => message.is_some_and(|message| message.contains("out of memory")),
        Err(_) => {
            // A throwing getter or a non-string message: not QuickJS's error.
            ctx.catch();
            false
        }
    }
}

/// Refuses a new call (a tool call or a fetch) once a latch has stopped
/// the execution: nothing is sent, the call throws [`latched_message`].
pub fn refuse_if_latched(ctx: &Ctx<'_>, latches: &Latches) -> rquickjs::Result<()> {
    if latches.should_stop() {
        return Err(Exception::throw_message(ctx, latched_message(latches)));
    }
    Ok(())
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
