//! The fetch extension (docs/runner.md, "fetch"): `fetch`, `Request`,
//! `Response` and `Headers` (`fetch.js`) over three frames. The runner
//! never touches the network: it sends `fetch.request` and the host
//! performs the request under its own admission rules.
//!
//! A fetch is a promised call ([`crate::promised_calls`]) that shares the
//! K outstanding slots with tool calls (both replies share the reader queue
//! of 8), with its own id sequence, assigned at admission so that an abort
//! can name a fetch still queued. Steps of one fetch:
//!   1. `fetch.js` builds the request (method, URL, header pairs, redirect
//!      mode) and the body bytes;
//!   2. [`ToolBridge::fetch_send`]: the request count, then the frame
//!      `{"id":N,"request":{…,"body":"<base64>"},"type":"fetch.request"}`
//!      is written, or queued while K calls are outstanding;
//!   3. the host answers `fetch.result` (`ok:true` with `response`, the body
//!      base64; `ok:false` with `error`); the body becomes an `ArrayBuffer`;
//!   4. an `AbortSignal` calls [`ToolBridge::fetch_abort`]: a queued fetch
//!      is dropped, an outstanding one gets `{"id":N,"type":"fetch.abort"}`
//!      and keeps its slot until the host's `fetch.result`.

use std::rc::Rc;

use base64::Engine;
use rquickjs::function::Opt;
use rquickjs::{ArrayBuffer, Ctx, Exception, Function, Object, Value};
use serde_json::{json, Value as Json};

use crate::execute::PROTOCOL_VERSION;
use crate::fetch_frames::request_frame;
use crate::js_errors::{refuse_if_latched, PROTOCOL_FAILURE};
use crate::promised_calls::{Call, Slot, Wire};
use crate::tool_bridge::{CallMode, ToolBridge};

/// The JavaScript half: `(native) => void`, defining the four globals.
const SCRIPT: &str = include_str!("fetch.js");
/// Without the extension: `() => void`, defining only the refusing `fetch`.
const DISABLED_SCRIPT: &str = include_str!("fetch_disabled.js");

fn script_options() -> rquickjs::context::EvalOptions {
    let mut options = rquickjs::context::EvalOptions::default();
    options.strict = true;
    options.filename = Some("<fetch>".to_owned());
    options
}

/// Compiles `fetch.js` into its installing function, without running it.
/// Done before `execute` only when the command line says the host will ask
/// for fetch (`--max-requests`): compiling it is ~0.7 ms, and the first
/// compilation of a process faults the QuickJS compiler's code in (~0.2 MiB
/// of an idle runner's RSS), which a world without fetch must not pay while
/// it waits. Compiling runs none of the script: the intrinsics it uses are
/// still read when it runs, after `execute`, before the program.
pub fn compile_script<'js>(ctx: &Ctx<'js>) -> rquickjs::Result<Function<'js>> {
    ctx.eval_with_options(SCRIPT, script_options())
}

impl ToolBridge {
    /// Runs `fetch.js`: with the extension confirmed the globals perform
    /// requests through the host; without it (`self.fetch` is `None`) only
    /// `fetch` exists, rejecting with a `TypeError` that says how a host
    /// enables it. `compiled`: `fetch.js` compiled ahead ([`compile_script`]),
    /// else it is compiled here when needed.
    pub fn install_fetch<'js>(
        self: &Rc<Self>,
        ctx: &Ctx<'js>,
        compiled: Option<Function<'js>>,
    ) -> rquickjs::Result<()> {
        // Most worlds do not have the extension: they compile only the
        // refusal. QuickJS compiles a whole script at once (no lazy function
        // bodies), and fetch.js took ~0.8 ms of every extension-mode run's
        // `execute` → `ready` (docs/performance.md, "The pooled path").
        if self.fetch.is_none() {
            let script: Function = ctx.eval_with_options(DISABLED_SCRIPT, script_options())?;
            return script.call(());
        }
        // With it, fetch.js runs now, before the program: built lazily (on
        // the program's first read) it ran over intrinsics the program may
        // have replaced by then (Object.defineProperty, a setter on
        // Object.prototype catching `native`), as a white-box review found.
        self.run_fetch_script(ctx, compiled)
    }

    /// Runs `fetch.js` with this bridge's native half behind it. `native`'s
    /// members are defined, not assigned: an assignment would run a setter
    /// the program put on `Object.prototype` and hand it `native`.
    fn run_fetch_script<'js>(
        self: &Rc<Self>,
        ctx: &Ctx<'js>,
        script: Option<Function<'js>>,
    ) -> rquickjs::Result<()> {
        let native = Object::new(ctx.clone())?;
        let this = Rc::clone(self);
        native.prop(
            "send",
            Function::new(
                ctx.clone(),
                move |ctx: Ctx<'js>, request: Value<'js>, body: Opt<Value<'js>>| {
                    this.fetch_send(&ctx, request, body.0)
                },
            )?,
        )?;
        let this = Rc::clone(self);
        native.prop(
            "abort",
            Function::new(ctx.clone(), move |id: u64| this.fetch_abort(id))?,
        )?;
        let script = match script {
            Some(compiled) => compiled,
            None => compile_script(ctx)?,
        };
        script.call((native,))
    }

    /// Step 2: counts the fetch and writes or queues its frame. Returns
    /// `[id, promise]`; a refusal throws (fetch.js rejects with it).
    fn fetch_send<'js>(
        &self,
        ctx: &Ctx<'js>,
        request: Value<'js>,
        body: Option<Value<'js>>,
    ) -> rquickjs::Result<Value<'js>> {
        refuse_if_latched(ctx, &self.latches)?;
        let (Some(count), CallMode::Promised(calls)) = (&self.fetch, &self.mode) else {
            return Err(Exception::throw_type(ctx, "fetch is not enabled"));
        };
        if count.accepted.get() >= count.max_requests {
            let message = format!(
                "fetch failed: request limit reached: at most {} requests per run (the host's \
                 network.maxRequests, or the runner's --max-requests if lower)",
                count.max_requests
            );
            return Err(Exception::throw_type(ctx, &message));
        }
        let mut request = match ctx.json_stringify(request)? {
            Some(text) => serde_json::from_str::<Json>(&text.to_string()?).ok(),
            None => None,
        }
        .filter(Json::is_object)
        .ok_or_else(|| Exception::throw_type(ctx, "fetch request is not an object"))?;
        if let Some(bytes) = body
            .as_ref()
            .and_then(|body| ArrayBuffer::from_value(body.clone()))
        {
            // SAFETY: the slice is encoded at once; no JavaScript runs (so
            // the buffer cannot be detached or resized) while it is borrowed.
            let encoded = base64::engine::general_purpose::STANDARD
                .encode(unsafe { bytes.as_bytes() }.unwrap_or_default());
            request["body"] = Json::String(encoded);
        }
        let id = count.accepted.get() + 1;
        if let Err(error) = self.writer.encode(&request_frame(id, &request)) {
            let message = format!("fetch failed: the request does not fit a frame: {error}");
            return Err(Exception::throw_range(ctx, &message));
        }
        count.accepted.set(id);
        let (promise, resolve, reject) = ctx.promise()?;
        let call = Call::new(ctx, Wire::Fetch { id, request }, resolve, reject);
        if calls.has_room() {
            if self.send_promised(calls, call).is_err() {
                return Err(Exception::throw_message(ctx, PROTOCOL_FAILURE));
            }
        } else {
            calls.enqueue(call);
        }
        let pair = rquickjs::Array::new(ctx.clone())?;
        pair.set(0, id)?;
        pair.set(1, promise)?;
        Ok(pair.into_value())
    }

    /// Step 4: the program aborted fetch `id` (its promise is already
    /// rejected by fetch.js).
    fn fetch_abort(&self, id: u64) {
        let CallMode::Promised(calls) = &self.mode else {
            return;
        };
        if calls.take_queued_fetch(id).is_some() {
            return;
        }
        if calls.is_outstanding(Slot::Fetch(id)) {
            let frame = json!({"id": id, "type": "fetch.abort", "version": PROTOCOL_VERSION});
            if let Ok(bytes) = self.writer.encode(&frame) {
                // A failed write has set the protocol latch.
                let _ = self.write_call(&bytes);
            }
        }
    }
}
