//! Tool calls (§7): the frozen, null-prototype `tools` registry and the
//! steps of one call.
//!
//! Two modes. v1 ([`CallMode::Synchronous`]): one outstanding call, the
//! JavaScript thread blocks in [`Mailbox::wait`] until the host answers and
//! the function returns the result. The concurrent-calls extension
//! ([`CallMode::Promised`]): each call returns a real Promise, at most K
//! calls are outstanding on the wire, the rest wait in a FIFO
//! ([`crate::promised_calls`]); the evaluation loop blocks for results only
//! when no JavaScript job is left ([`ToolBridge::await_result`]).

use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Instant;

use rquickjs::function::Opt;
use rquickjs::object::Property;
use rquickjs::{Ctx, Exception, Function, Object, Value};
use serde_json::{json, Map, Value as Json};

use crate::execute::PROTOCOL_VERSION;
use crate::execute_rule::integer_value;
use crate::fetch_frames::{self, FetchCount};
use crate::frame_reader::Frame;
use crate::frame_writer::{FrameWriter, WriteError};
use crate::js_errors::{is_out_of_memory, latched_message, refuse_if_latched, PROTOCOL_FAILURE};
use crate::latches::Latches;
use crate::mailbox::{Mailbox, Wake};
use crate::promised_calls::{Call, PromisedCalls, Slot, Wire};

/// How tool functions behave, fixed when `execute` is validated.
pub enum CallMode {
    /// code-bridge-v1: synchronous, one outstanding call.
    Synchronous,
    /// The concurrent-calls extension, with its effective `maxOutstanding`.
    Promised(PromisedCalls),
}

pub struct ToolBridge {
    pub(crate) writer: Rc<FrameWriter>,
    pub(crate) mailbox: Arc<Mailbox>,
    pub(crate) latches: Arc<Latches>,
    max_tool_calls: u64,
    /// `tool.call` frames emitted so far; the last id used.
    calls_sent: Cell<u64>,
    /// Calls admitted so far (steps 1–3 passed), counted against
    /// `max_tool_calls`; equals `calls_sent` in v1.
    calls_accepted: Cell<u64>,
    pub(crate) mode: CallMode,
    /// `Some` when the fetch extension was confirmed.
    pub(crate) fetch: Option<FetchCount>,
}

/// Why step 3 refused the arguments.
enum ArgumentError {
    /// A catchable `TypeError` (`tool arguments must be JSON serializable`).
    NotSerializable,
    /// A catchable `RangeError`: the arguments' JSON text (`text_bytes`)
    /// cannot fit a tool.call frame, so it was never parsed.
    TooLarge { text_bytes: u64 },
    /// An interrupt or out-of-memory: propagates unchanged.
    Fatal(rquickjs::Error),
}

/// Why the host's reply to a call is refused: the protocol latch is set.
pub struct BadReply;

/// What one [`ToolBridge::await_result`] achieved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// A call's promise was settled.
    Settled,
    /// `until` came first: a timer is due.
    Elapsed,
    /// Nothing can make progress here.
    Stuck,
}

impl ToolBridge {
    pub fn new(
        writer: Rc<FrameWriter>,
        mailbox: Arc<Mailbox>,
        latches: Arc<Latches>,
        max_tool_calls: u64,
        mode: CallMode,
    ) -> Self {
        ToolBridge {
            writer,
            mailbox,
            latches,
            max_tool_calls,
            calls_sent: Cell::new(0),
            calls_accepted: Cell::new(0),
            mode,
            fetch: None,
        }
    }

    /// The fetch extension, confirmed with `max_requests` (it needs the
    /// concurrent-calls mode: extensions.rs refuses it alone).
    pub fn with_fetch(mut self, max_requests: u64) -> Self {
        self.fetch = Some(FetchCount::new(max_requests));
        self
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
            let function = Function::new(
                ctx.clone(),
                move |ctx: Ctx<'js>, args: Opt<Value<'js>>| match &bridge.mode {
                    CallMode::Synchronous => bridge.call(&ctx, &tool, args.0),
                    CallMode::Promised(calls) => bridge.call_promised(&ctx, calls, &tool, args.0),
                },
            )?
            .with_name(name)?;
            registry.prop(name.as_str(), Property::from(function).enumerable())?;
        }
        let object: Object = ctx.globals().get("Object")?;
        let freeze: Function = object.get("freeze")?;
        freeze.call::<_, ()>((registry.clone(),))?;
        ctx.globals().prop("tools", Property::from(registry))
    }

    /// Step 1: the argument, defaulted to `{}`, if it is a non-array object.
    fn argument_object<'js>(
        ctx: &Ctx<'js>,
        args: Option<Value<'js>>,
    ) -> rquickjs::Result<Option<Value<'js>>> {
        let args = match args {
            Some(args) if !args.is_undefined() => args,
            _ => Object::new(ctx.clone())?.into_value(),
        };
        Ok((args.is_object() && !args.is_array()).then_some(args))
    }

    /// Step 2: whether one more call would exceed `maxToolCalls`; if so the
    /// limit latch is set.
    fn over_limit(&self) -> bool {
        if self.calls_accepted.get() >= self.max_tool_calls {
            self.latches.exceed_limit(self.max_tool_calls);
            self.mailbox.notify();
            return true;
        }
        false
    }

    /// One v1 call, steps 1–6 of §7.
    fn call<'js>(
        &self,
        ctx: &Ctx<'js>,
        name: &str,
        args: Option<Value<'js>>,
    ) -> rquickjs::Result<Value<'js>> {
        refuse_if_latched(ctx, &self.latches)?;
        let Some(args) = Self::argument_object(ctx, args)? else {
            return Err(Exception::throw_type(
                ctx,
                "tool arguments must be an object",
            ));
        };
        if self.over_limit() {
            return Err(Exception::throw_message(ctx, "tool call limit exceeded"));
        }
        let arguments = match self.serialize_arguments(ctx, args) {
            Ok(arguments) => arguments,
            Err(ArgumentError::NotSerializable) => return Err(not_serializable(ctx)),
            Err(ArgumentError::TooLarge { text_bytes }) => {
                return Err(self.too_large(ctx, text_bytes))
            }
            Err(ArgumentError::Fatal(error)) => return Err(error),
        };
        let id = self.calls_sent.get() + 1;
        let frame = call_frame(id, name, &arguments);
        let bytes = match self.writer.encode(&frame) {
            Ok(bytes) => bytes,
            Err(error) => return Err(Exception::throw_range(ctx, &error.to_string())),
        };
        self.write_call(&bytes)
            .map_err(|_| Exception::throw_message(ctx, PROTOCOL_FAILURE))?;
        self.calls_sent.set(id);
        self.calls_accepted.set(id);
        match self.mailbox.wait(&self.latches) {
            Wake::Frame(reply) => match self.check_reply(&reply, |slot| slot == Slot::Tool(id)) {
                Ok(_) => reply_value(ctx, &reply),
                Err(BadReply) => Err(Exception::throw_message(ctx, PROTOCOL_FAILURE)),
            },
            // (`Elapsed` cannot happen: `wait` has no `until`.)
            Wake::Cancelled | Wake::ProtocolFailed | Wake::TimedOut | Wake::Elapsed => Err(
                Exception::throw_message(ctx, latched_message(&self.latches)),
            ),
        }
    }

    /// One call of the concurrent-calls extension: steps 1–3 reject the
    /// returned promise (nothing sent); an accepted call is written now if
    /// fewer than K are outstanding, else queued.
    fn call_promised<'js>(
        &self,
        ctx: &Ctx<'js>,
        calls: &PromisedCalls,
        name: &str,
        args: Option<Value<'js>>,
    ) -> rquickjs::Result<Value<'js>> {
        refuse_if_latched(ctx, &self.latches)?;
        let (promise, resolve, reject) = ctx.promise()?;
        let refusal = match Self::argument_object(ctx, args)? {
            None => Some(Exception::throw_type(
                ctx,
                "tool arguments must be an object",
            )),
            Some(_) if self.over_limit() => {
                Some(Exception::throw_message(ctx, "tool call limit exceeded"))
            }
            Some(args) => match self.serialize_arguments(ctx, args) {
                Err(ArgumentError::Fatal(error)) => return Err(error),
                Err(ArgumentError::NotSerializable) => Some(not_serializable(ctx)),
                Err(ArgumentError::TooLarge { text_bytes }) => {
                    Some(self.too_large(ctx, text_bytes))
                }
                Ok(arguments) => self.admit(ctx, calls, name, arguments, resolve, &reject)?,
            },
        };
        if let Some(rquickjs::Error::Exception) = refusal {
            let thrown = ctx.catch();
            reject.call::<_, ()>((thrown,))?;
        }
        Ok(promise.into_value())
    }

    /// Counts an accepted call and writes or queues it. A frame over
    /// `--max-frame-bytes` is refused here (a catchable `RangeError`, not
    /// counted): it is sized with an id no smaller than the one it will get.
    fn admit<'js>(
        &self,
        ctx: &Ctx<'js>,
        calls: &PromisedCalls,
        name: &str,
        arguments: Json,
        resolve: Function<'js>,
        reject: &Function<'js>,
    ) -> rquickjs::Result<Option<rquickjs::Error>> {
        let accepted = self.calls_accepted.get() + 1;
        if let Err(error) = self.writer.encode(&call_frame(accepted, name, &arguments)) {
            return Ok(Some(Exception::throw_range(ctx, &error.to_string())));
        }
        self.calls_accepted.set(accepted);
        let wire = Wire::Tool {
            name: name.to_owned(),
            arguments,
        };
        let call = Call::new(ctx, wire, resolve, reject.clone());
        if calls.has_room() {
            if self.send_promised(calls, call).is_err() {
                return Ok(Some(Exception::throw_message(ctx, PROTOCOL_FAILURE)));
            }
        } else {
            calls.enqueue(call);
        }
        Ok(None)
    }

    /// Writes an admitted call (a tool call with the next id) and records
    /// it outstanding.
    pub(crate) fn send_promised(
        &self,
        calls: &PromisedCalls,
        call: Call,
    ) -> Result<(), WriteError> {
        let (slot, frame) = match call.wire() {
            Wire::Tool { name, arguments } => {
                let id = self.calls_sent.get() + 1;
                (Slot::Tool(id), call_frame(id, name, arguments))
            }
            Wire::Fetch { id, request } => {
                (Slot::Fetch(*id), fetch_frames::request_frame(*id, request))
            }
        };
        let bytes = self.writer.encode(&frame)?;
        self.write_call(&bytes)?;
        if let Slot::Tool(id) = slot {
            self.calls_sent.set(id);
        }
        calls.record_outstanding(slot, call);
        Ok(())
    }

    /// With calls outstanding and no JavaScript job left: blocks for the
    /// host's next frame (bounded by the deadline and by `until`, the next
    /// timer, woken by cancel, signals and protocol failures), settles that
    /// call's promise and sends queued calls into the freed slot.
    /// [`Progress::Stuck`] means nothing can make progress (nothing
    /// outstanding, a latch, a bad frame).
    pub fn await_result(&self, ctx: &Ctx<'_>, until: Option<Instant>) -> Progress {
        let CallMode::Promised(calls) = &self.mode else {
            return Progress::Stuck;
        };
        if !calls.has_outstanding() {
            return Progress::Stuck;
        }
        let reply = match self.mailbox.wait_until(&self.latches, until) {
            Wake::Frame(reply) => reply,
            Wake::Elapsed => return Progress::Elapsed,
            Wake::Cancelled | Wake::ProtocolFailed | Wake::TimedOut => return Progress::Stuck,
        };
        let Ok(slot) = self.check_reply(&reply, |candidate| calls.is_outstanding(candidate)) else {
            return Progress::Stuck;
        };
        let Some(call) = calls.take_outstanding(slot) else {
            return Progress::Stuck;
        };
        // The freed slot goes to the oldest queued call, unless a latch has
        // stopped the execution: queued calls are then never sent.
        while calls.has_room() && !self.latches.should_stop() {
            let Some(next) = calls.dequeue() else { break };
            if self.send_promised(calls, next).is_err() {
                break;
            }
        }
        let value = match slot {
            Slot::Tool(_) => reply_value(ctx, &reply),
            Slot::Fetch(_) => match fetch_frames::reply_value(ctx, &reply) {
                Ok(value) => Ok(value),
                Err(fetch_frames::BadFetchReply::Js(error)) => Err(error),
                Err(fetch_frames::BadFetchReply::Malformed) => {
                    self.latches.fail_protocol();
                    self.mailbox.notify();
                    return Progress::Stuck;
                }
            },
        };
        let settled = match value {
            Ok(value) => call.resolve(ctx, value),
            Err(rquickjs::Error::Exception) => call.reject(ctx, ctx.catch()),
            Err(_) => Ok(()),
        };
        if settled.is_err() {
            // Resolving can only fail for lack of memory; the code's promise
            // then settles (or stalls) and the outcome says so.
            ctx.catch();
        }
        Progress::Settled
    }

    /// Whether calls are outstanding on the wire (their results can wake
    /// the evaluation loop).
    pub fn has_outstanding(&self) -> bool {
        matches!(&self.mode, CallMode::Promised(calls) if calls.has_outstanding())
    }

    /// Step 3: the arguments as a JSON object.
    fn serialize_arguments<'js>(
        &self,
        ctx: &Ctx<'js>,
        args: Value<'js>,
    ) -> Result<Json, ArgumentError> {
        // Read in place and parsed only when it could fit a frame: a parsed
        // value takes up to ~16× its text, far past the memory ceiling for
        // a text that repeats one array (see evaluation.rs, returned_value).
        let text = match ctx.json_stringify(args) {
            Ok(Some(text)) => text.to_cstring().map_err(ArgumentError::Fatal)?,
            Ok(None) => return Err(ArgumentError::NotSerializable),
            Err(rquickjs::Error::Exception) => {
                let thrown = ctx.catch();
                if self.latches.should_stop() || is_out_of_memory(ctx, &thrown) {
                    return Err(ArgumentError::Fatal(ctx.throw(thrown)));
                }
                return Err(ArgumentError::NotSerializable);
            }
            Err(error) => return Err(ArgumentError::Fatal(error)),
        };
        let text_bytes = u64::try_from(text.len()).unwrap_or(u64::MAX);
        if text_bytes > crate::canonical_json::parse_ceiling(self.writer.max_frame_bytes()) {
            return Err(ArgumentError::TooLarge { text_bytes });
        }
        match serde_json::from_str::<Json>(text.as_str()) {
            Ok(object @ Json::Object(_)) => Ok(object),
            _ => Err(ArgumentError::NotSerializable),
        }
    }

    /// The catchable refusal of arguments too large for any frame.
    fn too_large(&self, ctx: &Ctx<'_>, text_bytes: u64) -> rquickjs::Error {
        let max = self.writer.max_frame_bytes();
        let message = format!(
            "tool arguments are {text_bytes} bytes of JSON: a tool.call frame must be shorter \
             than --max-frame-bytes {max}"
        );
        Exception::throw_range(ctx, &message)
    }

    /// Step 4's write; a failed write (the host is gone, the call can never
    /// be answered) sets the protocol latch.
    pub(crate) fn write_call(&self, bytes: &[u8]) -> Result<(), WriteError> {
        self.writer.write_encoded(bytes).inspect_err(|_| {
            self.latches.fail_protocol();
            self.mailbox.notify();
        })
    }

    /// Step 5: the reply must be `tool.result` (or, for a fetch,
    /// `fetch.result`) with a boolean `ok` and the numeric id of a call that
    /// `expected` accepts (`1` and `1.0` both match); anything else sets
    /// the protocol latch.
    fn check_reply(
        &self,
        reply: &Map<String, Json>,
        expected: impl Fn(Slot) -> bool,
    ) -> Result<Slot, BadReply> {
        let id = match reply.get("id") {
            Some(Json::Number(number)) => integer_value(number).or_else(|| {
                let float = number.as_f64()?;
                (float.fract() == 0.0 && float >= 1.0 && float < u64::MAX as f64)
                    .then_some(float as u64)
            }),
            _ => None,
        };
        let slot = match reply.get("type").and_then(Json::as_str) {
            Some("tool.result") => id.map(Slot::Tool),
            Some("fetch.result") if self.fetch.is_some() => id.map(Slot::Fetch),
            _ => None,
        };
        let well_formed = reply.get("version").and_then(Json::as_str) == Some(PROTOCOL_VERSION)
            && matches!(reply.get("ok"), Some(Json::Bool(_)));
        match slot {
            Some(slot) if well_formed && expected(slot) => Ok(slot),
            _ => {
                self.latches.fail_protocol();
                self.mailbox.notify();
                Err(BadReply)
            }
        }
    }
}

/// A `tool.call` frame: exactly the five keys of §7.
fn call_frame(id: u64, name: &str, arguments: &Json) -> Json {
    json!({"arguments": arguments, "id": id, "name": name,
           "type": "tool.call", "version": PROTOCOL_VERSION})
}

fn not_serializable(ctx: &Ctx<'_>) -> rquickjs::Error {
    Exception::throw_type(ctx, "tool arguments must be JSON serializable")
}

/// Step 6 for a checked reply: `ok:true` → `result` (missing → null),
/// parsed by QuickJS from the host's text, keys in the host's order;
/// `ok:false` → a thrown, catchable `tool failed: <error.message>`.
fn reply_value<'js>(ctx: &Ctx<'js>, reply: &Frame) -> rquickjs::Result<Value<'js>> {
    if reply.get("ok") == Some(&Json::Bool(true)) {
        return ctx.json_parse(reply.result_text().unwrap_or("null"));
    }
    let message = provider_message(reply.get("error"));
    Err(Exception::throw_message(
        ctx,
        &format!("tool failed: {message}"),
    ))
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
