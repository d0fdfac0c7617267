//! The napi surface of cordon: JSON options in, a native execution handle
//! out, launcher errors mapped to their stable `ERR_CORDON_…` codes, and
//! launcher events delivered to one JavaScript callback. Everything else
//! lives in `cordon-launcher`; index.js builds the public API on top.

mod chunk_buffer;
mod live_executions;

use std::sync::Arc;

use cordon_launcher::{
    Completion, Event, EventSink, ExecutionHandle, LaunchFailure, StopReason, Stream,
};
use napi::bindgen_prelude::{Buffer, Function};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::Env;
use napi_derive::napi;
use serde_json::json;

/// Event kinds passed to the JavaScript callback (index.js mirrors them).
const EV_PROTOCOL_DATA: u32 = 0;
const EV_STDERR_DATA: u32 = 1;
const EV_PROTOCOL_END: u32 = 2;
const EV_STDERR_END: u32 = 3;
const EV_WRITE_DONE: u32 = 4;
const EV_SHUTDOWN_DONE: u32 = 5;
const EV_FINISHED: u32 = 6;
const EV_FAILED: u32 = 7;

/// Stream ids accepted by `grant` (index.js mirrors them).
const STREAM_PROTOCOL: u32 = 0;
const STREAM_STDERR: u32 = 1;

type EventArgs = (u32, Option<Buffer>, Option<String>);
type EventFn = ThreadsafeFunction<Event, (), EventArgs, napi::Status, false>;

/// Delivers launcher events to JavaScript, in order, on the JS thread. The
/// launcher's threads hold the only references: when the execution is over
/// they are dropped, the function is released, and Node may exit.
struct JsSink(EventFn);

impl EventSink for JsSink {
    fn emit(&self, event: Event) {
        // NonBlocking: the queue is bounded by the pumps' credits (one chunk
        // in flight per stream), so it never grows without bound.
        self.0.call(event, ThreadsafeFunctionCallMode::NonBlocking);
    }
}

/// Data chunks become Node-allocated buffers that garbage collection keeps
/// pace with during a flood (see `chunk_buffer`).
fn to_args(env: &Env, event: Event) -> napi::Result<EventArgs> {
    let copy = |bytes: Vec<u8>| chunk_buffer::chunk_buffer(env, bytes);
    Ok(match event {
        Event::Data {
            stream: Stream::Protocol,
            bytes,
        } => (EV_PROTOCOL_DATA, Some(copy(bytes)?), None),
        Event::Data {
            stream: Stream::Stderr,
            bytes,
        } => (EV_STDERR_DATA, Some(copy(bytes)?), None),
        Event::End {
            stream: Stream::Protocol,
            error,
        } => (EV_PROTOCOL_END, None, error),
        Event::End {
            stream: Stream::Stderr,
            error,
        } => (EV_STDERR_END, None, error),
        Event::WriteDone { discarded } => {
            (EV_WRITE_DONE, None, discarded.then(|| "discarded".into()))
        }
        Event::ShutdownDone => (EV_SHUTDOWN_DONE, None, None),
        Event::Finished(Ok(done)) => (EV_FINISHED, None, Some(completion_json(done))),
        Event::Finished(Err(failure)) => (EV_FAILED, None, Some(failure_json(failure))),
    })
}

fn completion_json(done: Completion) -> String {
    json!({"returncode": done.returncode, "signal": done.signal, "receipt": done.receipt_json})
        .to_string()
}

fn failure_json(failure: LaunchFailure) -> String {
    json!({"code": failure.code.as_str(), "message": failure.message, "receipt": failure.receipt_json}).to_string()
}

/// A running (or finished) execution.
#[napi]
pub struct NativeExecution {
    handle: ExecutionHandle,
}

#[napi]
impl NativeExecution {
    /// bwrap's pid, or undefined when the fork/exec failed.
    #[napi(getter)]
    pub fn pid(&self) -> Option<u32> {
        self.handle.pid
    }

    /// The consumer of stream 0 (protocol) or 1 (stderr) wants one more chunk.
    #[napi]
    pub fn grant(&self, stream: u32) {
        match stream {
            STREAM_PROTOCOL => self.handle.grant(Stream::Protocol),
            STREAM_STDERR => self.handle.grant(Stream::Stderr),
            _ => {}
        }
    }

    /// Queues a copy of `chunk` for fd 3; false = not queued (discarded).
    #[napi]
    pub fn write(&self, chunk: Buffer) -> bool {
        self.handle.write(chunk.to_vec())
    }

    /// Queues SHUT_WR after earlier writes; false = nothing to shut down.
    #[napi]
    pub fn shutdown_write(&self) -> bool {
        self.handle.shutdown_write()
    }

    /// Starts the stop ladder; `reason` is "stop", "deadline" or "signal".
    #[napi]
    pub fn stop(&self, reason: String) {
        let reason = match reason.as_str() {
            "deadline" => StopReason::Deadline,
            "signal" => StopReason::Signal,
            _ => StopReason::Requested,
        };
        self.handle.stop(reason);
    }
}

/// Validates `optionsJson`, prepares and starts the sandbox. Throws an error
/// whose `code` is an `ERR_CORDON_…` string when validation or preparation
/// fails; later failures arrive as a `FAILED` event.
#[napi]
pub fn spawn_native(
    env: Env,
    options_json: String,
    on_event: Function<'_, EventArgs, ()>,
) -> napi::Result<NativeExecution, String> {
    let tsfn: EventFn = on_event
        .build_threadsafe_function::<Event>()
        .build_callback(|ctx| to_args(&ctx.env, ctx.value))
        .map_err(|e| napi::Error::new("ERR_CORDON_SPAWN_FAILED".to_string(), e.reason.clone()))?;
    let sink: Arc<dyn EventSink> = Arc::new(JsSink(tsfn));
    let handle = cordon_launcher::launch(&options_json, sink)
        .map_err(|e| napi::Error::new(e.code().as_str().to_string(), e.to_string()))?;
    // Not registering only loses the worker-teardown stop; the run is live.
    let _ = live_executions::register(&env, &handle.control);
    Ok(NativeExecution { handle })
}

/// The launcher's host report for `doctor()` (see `host_probe::report`).
/// `optionsJson` is `{"bwrapPath"?, "runnerPath"?, "networkRelayPath"?}`;
/// the result is `{ok, checks: [{name, ok, importance, detail, fix}]}`.
#[napi]
pub fn doctor_native(options_json: String) -> String {
    let options = serde_json::from_str(&options_json).unwrap_or(serde_json::Value::Null);
    cordon_launcher::host_probe::report_json(&options).to_string()
}

/// The directory holding this provider's control roots (not created here):
/// for tests and diagnostics.
#[napi]
pub fn control_root_base() -> String {
    cordon_launcher::control_root::base_path()
        .to_string_lossy()
        .into_owned()
}

/// Validates `optionsJson` without touching the disk (for option checks).
#[napi]
pub fn validate_native(options_json: String) -> napi::Result<(), String> {
    cordon_launcher::validate(&options_json)
        .map(|_| ())
        .map_err(|e| napi::Error::new(e.code().as_str().to_string(), e.to_string()))
}

/// The launcher's policy presets (`cordon_launcher::presets`), as JSON text
/// `[{"name", "policy"}, …]`: lib/isolated-policy.js builds `readOnly()`,
/// `workspaceWrite()` and `profile(name)` from it, so JS restates nothing.
#[napi]
pub fn policy_presets() -> String {
    cordon_launcher::presets::all_json().to_string()
}
