//! Tool calls (§7): the frozen, null-prototype `tools` registry and the six
//! steps of one call. Calls are synchronous: one outstanding call, and the
//! JavaScript thread blocks in [`Mailbox::wait`] until the host answers.

use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;

use rquickjs::function::Opt;
use rquickjs::object::Property;
use rquickjs::{Ctx, Exception, Function, Object, Value};
use serde_json::{json, Map, Value as Json};

use crate::canonical_json;
use crate::execute::{integer_value, PROTOCOL_VERSION};
use crate::frame_writer::FrameWriter;
use crate::js_errors::{is_out_of_memory, latched_message, PROTOCOL_FAILURE};
use crate::latches::Latches;
use crate::mailbox::{Mailbox, Wake};

pub struct ToolBridge {
    writer: Rc<FrameWriter>,
    mailbox: Arc<Mailbox>,
    latches: Arc<Latches>,
    max_tool_calls: u64,
    /// `tool.call` frames emitted so far; the last id used.
    calls_sent: Cell<u64>,
}

impl ToolBridge {
    pub fn new(
        writer: Rc<FrameWriter>,
        mailbox: Arc<Mailbox>,
        latches: Arc<Latches>,
        max_tool_calls: u64,
    ) -> Self {
        ToolBridge {
            writer,
            mailbox,
            latches,
            max_tool_calls,
            calls_sent: Cell::new(0),
        }
    }

    pub fn calls_sent(&self) -> u64 {
        self.calls_sent.get()
    }

    /// Defines the global `tools`: non-writable, non-configurable, bound to a
    /// frozen null-prototype object holding one function per declared name,
    /// in catalogue order (enumerable, non-writable, non-configurable).
    pub fn install<'js>(self: &Rc<Self>, ctx: &Ctx<'js>, names: &[String]) -> rquickjs::Result<()> {
        let registry = Object::new(ctx.clone())?;
        registry.set_prototype(None)?;
        for name in names {
            let bridge = Rc::clone(self);
            let tool = name.clone();
            let function =
                Function::new(ctx.clone(), move |ctx: Ctx<'js>, args: Opt<Value<'js>>| {
                    bridge.call(&ctx, &tool, args.0)
                })?
                .with_name(name)?;
            registry.prop(name.as_str(), Property::from(function).enumerable())?;
        }
        let object: Object = ctx.globals().get("Object")?;
        let freeze: Function = object.get("freeze")?;
        freeze.call::<_, ()>((registry.clone(),))?;
        ctx.globals().prop("tools", Property::from(registry))
    }

    /// One call, steps 1–6 of §7.
    fn call<'js>(
        &self,
        ctx: &Ctx<'js>,
        name: &str,
        args: Option<Value<'js>>,
    ) -> rquickjs::Result<Value<'js>> {
        if self.latches.should_stop() {
            return Err(Exception::throw_message(
                ctx,
                latched_message(&self.latches),
            ));
        }
        let args = match args {
            Some(args) if !args.is_undefined() => args,
            _ => Object::new(ctx.clone())?.into_value(),
        };
        if !args.is_object() || args.is_array() {
            return Err(Exception::throw_type(
                ctx,
                "tool arguments must be an object",
            ));
        }
        let sent = self.calls_sent.get();
        if sent >= self.max_tool_calls {
            self.latches.exceed_limit(self.max_tool_calls);
            self.mailbox.notify();
            return Err(Exception::throw_message(ctx, "tool call limit exceeded"));
        }
        let arguments = self.serialize_arguments(ctx, args)?;
        let id = sent + 1;
        let frame = json!({"arguments": arguments, "id": id, "name": name,
                           "type": "tool.call", "version": PROTOCOL_VERSION});
        self.send(ctx, &frame)?;
        self.calls_sent.set(id);
        match self.mailbox.wait(&self.latches) {
            Wake::Frame(reply) => self.accept_reply(ctx, id, &reply),
            Wake::Cancelled | Wake::ProtocolFailed | Wake::TimedOut => Err(
                Exception::throw_message(ctx, latched_message(&self.latches)),
            ),
        }
    }

    /// Step 3: the arguments as a JSON object, else a catchable TypeError.
    /// An interrupt or out-of-memory raised while serializing propagates as is.
    fn serialize_arguments<'js>(&self, ctx: &Ctx<'js>, args: Value<'js>) -> rquickjs::Result<Json> {
        let not_serializable =
            || Exception::throw_type(ctx, "tool arguments must be JSON serializable");
        let text = match ctx.json_stringify(args) {
            Ok(Some(text)) => text.to_string()?,
            Ok(None) => return Err(not_serializable()),
            Err(rquickjs::Error::Exception) => {
                let thrown = ctx.catch();
                if self.latches.should_stop() || is_out_of_memory(ctx, &thrown) {
                    return Err(ctx.throw(thrown));
                }
                return Err(not_serializable());
            }
            Err(error) => return Err(error),
        };
        match serde_json::from_str::<Json>(&text) {
            Ok(object @ Json::Object(_)) => Ok(object),
            _ => Err(not_serializable()),
        }
    }

    /// Step 4. A frame over `--max-frame-bytes` is a catchable RangeError and
    /// is not sent; a failed write is a protocol failure.
    fn send(&self, ctx: &Ctx<'_>, frame: &Json) -> rquickjs::Result<()> {
        let bytes = match self.writer.encode(frame) {
            Ok(bytes) => bytes,
            Err(error) => return Err(Exception::throw_range(ctx, &error.to_string())),
        };
        // The host is gone: the call can never be answered.
        self.writer.write_encoded(&bytes).map_err(|_| {
            self.latches.fail_protocol();
            self.mailbox.notify();
            Exception::throw_message(ctx, PROTOCOL_FAILURE)
        })
    }

    /// Steps 5–6: the reply must be `tool.result` for this id with a boolean
    /// `ok`; anything else sets the protocol latch.
    fn accept_reply<'js>(
        &self,
        ctx: &Ctx<'js>,
        id: u64,
        reply: &Map<String, Json>,
    ) -> rquickjs::Result<Value<'js>> {
        let id_matches = match reply.get("id") {
            Some(Json::Number(number)) => {
                integer_value(number) == Some(id) || number.as_f64() == Some(id as f64)
            }
            _ => false,
        };
        let well_formed = reply.get("version").and_then(Json::as_str) == Some(PROTOCOL_VERSION)
            && reply.get("type").and_then(Json::as_str) == Some("tool.result")
            && id_matches;
        match reply.get("ok") {
            Some(Json::Bool(true)) if well_formed => {
                let result = reply.get("result").unwrap_or(&Json::Null);
                ctx.json_parse(canonical_json::encode(result))
            }
            Some(Json::Bool(false)) if well_formed => {
                let message = provider_message(reply.get("error"));
                Err(Exception::throw_message(
                    ctx,
                    &format!("tool failed: {message}"),
                ))
            }
            _ => {
                self.latches.fail_protocol();
                self.mailbox.notify();
                Err(Exception::throw_message(ctx, PROTOCOL_FAILURE))
            }
        }
    }
}

/// `error.message` of a failed `tool.result` (a bare string `error` is
/// accepted too); "unknown error" when neither is present.
fn provider_message(error: Option<&Json>) -> &str {
    match error {
        Some(Json::String(message)) => message,
        Some(Json::Object(error)) => error
            .get("message")
            .and_then(Json::as_str)
            .unwrap_or("unknown error"),
        _ => "unknown error",
    }
}
