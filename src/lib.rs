//! The napi surface of cordon: JSON options in, a native execution handle
//! out, launcher errors mapped to their stable `ERR_CORDON_…` codes, and
//! launcher events delivered to one JavaScript callback. Everything else
//! lives in `cordon-launcher`; index.js builds the public API on top.

mod chunk_buffer;
mod live_executions;
mod loop_callback;
mod loop_reader;
pub mod network_rules;
pub mod tree_removal_task;
pub mod uid_sweep_task;
mod uv;

use std::sync::{Arc, RwLock, Weak};

use cordon_launcher::{
    Completion, Event, EventSink, ExecutionHandle, LaunchFailure, StopReason, Stream, WriteNow,
    WriteOutcome, WritePart,
};
use napi::bindgen_prelude::{Buffer, FnArgs, Function, JsValue};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::Env;
use napi_derive::napi;
use serde_json::Value;

use loop_reader::LoopReader;

/// What a launcher event is: the first argument of every `onEvent` call.
/// lib/isolated-execution.js reads these from the binding (`EventKind`).
#[napi]
pub enum EventKind {
    /// `chunk`: bytes the program wrote to fd 3.
    ProtocolData = 0,
    /// `chunk`: bytes the program wrote to fd 1 or 2 (or bwrap's diagnostics).
    StderrData = 1,
    /// fd 3 reached EOF; `message`: why reading failed, if it did.
    ProtocolEnd = 2,
    /// The stderr pipe reached EOF; `message`: why reading failed, if it did.
    StderrEnd = 3,
    /// The oldest queued write finished; `message` is "discarded" when the
    /// program had closed fd 3 (the bytes were dropped and counted).
    WriteDone = 4,
    /// The half-close (SHUT_WR) queued by `shutdownWrite` was applied.
    ShutdownDone = 5,
    /// The run ended and is accounted for; `settled`: `{returncode, signal, receipt}`.
    Finished = 6,
    /// The launch or the run failed; `settled`: `{code, message, receipt?}`.
    Failed = 7,
    /// The program was observed running; `settled`: `{receipt}`, the
    /// receipt's fields known before the end (docs/receipts.md › "Before the
    /// end"). At most once, before `Finished`/`Failed`.
    Observed = 8,
}

/// What the function given to `pullProtocol` is called with, from the
/// event loop (src/loop_callback.rs).
#[napi]
pub enum LoopEvent {
    /// A granted chunk waits on fd 3: take it with `readProtocol`.
    Readable = 0,
    /// fd 3 is writable again after `awaitWritable`: write the rest.
    Writable = 1,
    /// An earlier call threw; the second argument is what it threw, to be
    /// rethrown from the caller's own callback.
    Thrown = 2,
}

/// The streams whose reader `grant` gives one more chunk of credit.
#[napi]
pub enum StreamId {
    Protocol = 0,
    Stderr = 1,
}

/// Why JS asks `stop`: `stop()`, its deadline timer, or its AbortSignal. Any
/// other string throws (it would otherwise be recorded as the wrong reason).
#[napi(string_enum = "lowercase")]
pub enum StopCause {
    Stop,
    Deadline,
    Signal,
}

/// What `write` and `shutdownWrite` did. A full queue is not a result: it
/// throws `ERR_CORDON_WRITE_QUEUE_FULL`, so no caller can drop bytes silently.
#[napi]
pub enum WriteResult {
    /// Queued: a `WriteDone` (or `ShutdownDone`) event follows.
    Queued = 0,
    /// The run is over: nothing was queued and no event follows; the bytes
    /// are discarded (docs/errors.md).
    Ended = 1,
    /// `write` only: the socket took every byte on the calling thread
    /// (nothing was queued ahead of them); no `WriteDone` follows.
    Sent = 2,
}

/// Commands the native writer queues before `write` throws
/// `ERR_CORDON_WRITE_QUEUE_FULL`: the launcher's own depth, which
/// lib/isolated-execution.js uses as its window of writes in flight.
#[napi]
pub const WRITE_QUEUE_DEPTH: u32 = cordon_launcher::WRITE_QUEUE_DEPTH as u32;

/// The largest `deadlineMs` the launcher accepts (2^31 - 1 ms): lib/stop-triggers.js
/// checks a pooled take's deadline against it, `stopAfter` enforces it.
#[napi]
pub const MAX_DEADLINE_MS: u32 = cordon_launcher::request::launch_request::MAX_DEADLINE_MS as u32;

/// The workspace-owner uid range (`process_identity.rs`): a run whose
/// workspace is owned by one of these uids runs as that owner. Sessions
/// (lib/sessions) give each session workspace an owner of this range.
#[napi]
pub const WORKSPACE_OWNER_UID_FIRST: u32 = cordon_launcher::host::process_identity::SANDBOX_UID;
/// How many uids the workspace-owner range holds.
#[napi]
pub const WORKSPACE_OWNER_UIDS: u32 = cordon_launcher::host::process_identity::WORKSPACE_UIDS;

/// How a run settled (the fourth argument of a `Finished` or `Failed`
/// event). The receipt crosses the seam once, as an object.
#[napi(object)]
pub struct Settled {
    /// `Finished`: the program's exit code, unless it was killed by a signal.
    pub returncode: Option<i32>,
    /// `Finished`: the signal's name ("SIGKILL"), if one ended the program.
    pub signal: Option<String>,
    /// `Failed`: the `ERR_CORDON_…` code.
    pub code: Option<String>,
    /// `Failed`: what failed, naming the step.
    pub message: Option<String>,
    /// The run's receipt (docs/receipts.md); `Finished` always has one.
    pub receipt: Option<Value>,
    /// `Finished`: `sha256:<hex>` of the receipt's canonical JSON, for the
    /// audit record (computed by the launcher, off the JS thread).
    pub receipt_digest: Option<String>,
}

/// The fixed argument list of every `onEvent` call, spread (never an array):
/// `(kind, chunk, message, settled)`; the slots a kind does not use are
/// `undefined` (see `EventKind`).
type EventArgs = FnArgs<(EventKind, Option<Buffer>, Option<String>, Option<Settled>)>;
type EventFn = ThreadsafeFunction<Event, (), EventArgs, napi::Status, false>;

/// Delivers launcher events to JavaScript, in order, on the JS thread. The
/// launcher's threads hold the only strong references: when the execution is
/// over they are dropped, the function is released, and Node may exit. The
/// lock is only written by `NativeExecution::hold` (JS thread), so the pumps'
/// read locks never contend in practice.
struct JsSink(RwLock<EventFn>);

impl EventSink for JsSink {
    fn emit(&self, event: Event) {
        // NonBlocking: the queue is bounded by the pumps' credits (one chunk
        // in flight per stream), so it never grows without bound.
        if let Ok(tsfn) = self.0.read() {
            tsfn.call(event, ThreadsafeFunctionCallMode::NonBlocking);
        }
    }
}

impl JsSink {
    /// Refs (`held`) or unrefs the function: an unref'd execution does not
    /// keep Node's event loop alive (an idle pooled sandbox).
    // `refer`/`unref` are deprecated in favour of dropping clones, which
    // cannot express "keep it, but let Node exit"; they are the N-API calls.
    #[allow(deprecated)]
    fn hold(&self, env: &Env, held: bool) -> napi::Result<()> {
        let Ok(mut tsfn) = self.0.write() else {
            return Ok(());
        };
        if held {
            tsfn.refer(env)
        } else {
            tsfn.unref(env)
        }
    }
}

/// Data chunks become Node-allocated buffers that garbage collection keeps
/// pace with during a flood (see `chunk_buffer`).
fn to_args(env: &Env, event: Event) -> napi::Result<EventArgs> {
    let copy = |bytes: Vec<u8>| chunk_buffer::chunk_buffer(env, &bytes);
    let args = match event {
        Event::Data {
            stream: Stream::Protocol,
            bytes,
        } => (EventKind::ProtocolData, Some(copy(bytes)?), None, None),
        Event::Data {
            stream: Stream::Stderr,
            bytes,
        } => (EventKind::StderrData, Some(copy(bytes)?), None, None),
        Event::End {
            stream: Stream::Protocol,
            error,
        } => (EventKind::ProtocolEnd, None, error, None),
        Event::End {
            stream: Stream::Stderr,
            error,
        } => (EventKind::StderrEnd, None, error, None),
        Event::WriteDone { discarded } => (
            EventKind::WriteDone,
            None,
            discarded.then(|| "discarded".into()),
            None,
        ),
        Event::ShutdownDone => (EventKind::ShutdownDone, None, None, None),
        Event::Observed { receipt_head } => {
            (EventKind::Observed, None, None, Some(head(receipt_head)))
        }
        Event::Finished(Ok(done)) => (EventKind::Finished, None, None, Some(completed(done))),
        Event::Finished(Err(failure)) => (EventKind::Failed, None, None, Some(failed(failure))),
    };
    Ok(args.into())
}

fn head(receipt_head: Value) -> Settled {
    Settled {
        returncode: None,
        signal: None,
        code: None,
        message: None,
        receipt: Some(for_js(receipt_head)),
        receipt_digest: None,
    }
}

fn completed(done: Completion) -> Settled {
    Settled {
        returncode: done.returncode,
        signal: done.signal,
        code: None,
        message: None,
        receipt: Some(for_js(done.receipt)),
        receipt_digest: Some(done.receipt_digest),
    }
}

fn failed(failure: LaunchFailure) -> Settled {
    Settled {
        returncode: None,
        signal: None,
        code: Some(failure.code.as_str().to_string()),
        message: Some(failure.message),
        receipt: failure.receipt.map(for_js),
        receipt_digest: None,
    }
}

/// The receipt with its numbers as `JSON.parse` would give them: never a
/// `BigInt`, which `JSON.stringify` refuses (see `js_number`).
fn for_js(mut receipt: Value) -> Value {
    cordon_launcher::receipt::js_number::to_js_numbers(&mut receipt);
    receipt
}

/// A write past the window: loud, never a silent drop.
fn queue_full() -> napi::Error<String> {
    napi::Error::new(
        "ERR_CORDON_WRITE_QUEUE_FULL".to_string(),
        format!(
            "the protocol write queue is full ({WRITE_QUEUE_DEPTH} writes already queued): a \
             write must wait for an earlier one's WriteDone event; nothing was queued"
        ),
    )
}

/// `write_some`'s answer for a write handed to the writer: -1 (queued), or
/// every byte taken (the run is over: discarded).
fn sent_or_queued(outcome: WriteOutcome, all: i64) -> napi::Result<i64, String> {
    match write_result(outcome)? {
        WriteResult::Queued => Ok(-1),
        _ => Ok(all),
    }
}

fn write_result(outcome: WriteOutcome) -> napi::Result<WriteResult, String> {
    match outcome {
        WriteOutcome::Queued => Ok(WriteResult::Queued),
        WriteOutcome::Ended => Ok(WriteResult::Ended),
        WriteOutcome::Full => Err(queue_full()),
    }
}

/// A running (or finished) execution.
#[napi]
pub struct NativeExecution {
    handle: ExecutionHandle,
    /// fd 3's reader, on this environment's loop (loop_reader.rs).
    reader: LoopReader,
    /// Weak: once the launcher has dropped the sink (the run is over) there is
    /// nothing left to ref or unref, and this handle must not keep it alive.
    sink: Weak<JsSink>,
}

#[napi]
impl NativeExecution {
    /// bwrap's pid, or undefined when the fork/exec failed.
    #[napi(getter)]
    pub fn pid(&self) -> Option<u32> {
        self.handle.pid
    }

    /// The consumer of `stream` wants one more chunk.
    #[napi]
    pub fn grant(&self, stream: StreamId) {
        match stream {
            // Whichever reads fd 3: the loop reader, or the launcher's
            // thread where the kernel cannot refuse passed descriptors
            // (cordon_launcher::run::owner_reader); the other ignores it.
            StreamId::Protocol => {
                self.reader.grant();
                self.handle.grant(Stream::Protocol);
            }
            StreamId::Stderr => self.handle.grant(Stream::Stderr),
        }
    }

    /// From now on fd 3's chunks are pulled, not `ProtocolData` events:
    /// `onLoop(LoopEvent.Readable)` is called from the event loop, as an
    /// I/O callback, when a granted chunk waits, and takes it with
    /// `readProtocol()`; `onLoop(LoopEvent.Writable)` after
    /// `awaitWritable`; `onLoop(LoopEvent.Thrown, error)` hands back what
    /// such a call threw, to be rethrown from the caller's own callback
    /// (src/loop_callback.rs). Call it right after `spawnNative`, before
    /// returning to the loop.
    #[napi(ts_args_type = "onLoop: (event: LoopEvent, error?: unknown) => void")]
    pub fn pull_protocol(&self, env: Env, on_loop: Function<'_>) -> napi::Result<()> {
        self.reader.pull(&env, on_loop.raw())
    }

    /// Sends what the socket takes of `chunk` at once: returns how many
    /// bytes it took (no `WriteDone` follows; fewer than `chunk.length`
    /// when it was full: keep the rest, call `awaitWritable` and write it
    /// on `LoopEvent.Writable`), or -1 when (the rest of) it was queued as
    /// `write` queues (a `WriteDone` follows). A run that is over takes
    /// every byte (discarded, as `write`'s `Ended`). Throws like `write`.
    /// `rest`: `chunk` is the rest an earlier call left with the caller.
    #[napi]
    pub fn write_some(&self, chunk: Buffer, rest: Option<bool>) -> napi::Result<i64, String> {
        let all = i64::try_from(chunk.len()).unwrap_or(i64::MAX);
        if !self.reader.keeps_rest() {
            return match self.handle.write_now(&chunk) {
                WriteNow::Sent => Ok(all),
                WriteNow::Deferred(outcome) => sent_or_queued(outcome, all),
            };
        }
        match self.handle.write_some(&chunk, rest.unwrap_or(false)) {
            WritePart::Sent(n) => Ok(i64::try_from(n).unwrap_or(i64::MAX)),
            WritePart::Deferred(outcome) => sent_or_queued(outcome, all),
        }
    }

    /// Bytes of protocol writes dropped after the run's receipt was
    /// composed (the run had ended; the `Finished` event was on its way or
    /// handled): in neither of the receipt's protocol counters.
    #[napi(getter)]
    pub fn protocol_dropped_bytes(&self) -> i64 {
        i64::try_from(self.handle.dropped_after_receipt()).unwrap_or(i64::MAX)
    }

    /// `LoopEvent.Writable` once fd 3 is writable; false when it cannot be
    /// told (the reader is closed): queue the rest with `write` instead.
    #[napi]
    pub fn await_writable(&self) -> bool {
        self.reader.await_writable()
    }

    /// The granted chunk waiting on fd 3, or nothing (pulled: see
    /// `pullProtocol`). A chunk taken spends the grant. `atOnce`: the
    /// consumer takes it now (a flowing stream, nothing buffered), so it may
    /// be up to 256 KiB; else at most 64 KiB, what one event chunk holds.
    #[napi]
    pub fn read_protocol(&self, env: Env, at_once: bool) -> napi::Result<Option<Buffer>> {
        self.reader.read(&env, at_once)
    }

    /// Queues the rest a `writeSome` left with the caller, for the writer
    /// thread (fd 3's writability cannot be told any more): as `write`,
    /// except that a run that ended meanwhile counted that rest already.
    #[napi]
    pub fn write_rest(&self, chunk: Buffer) -> napi::Result<WriteResult, String> {
        write_result(self.handle.write_rest(chunk.to_vec()))
    }

    /// Sends `chunk` to fd 3 at once when nothing is queued ahead of it and
    /// the socket takes it all (`Sent`), else queues a copy of (the rest of)
    /// it (`Queued`). Throws `ERR_CORDON_WRITE_QUEUE_FULL` when
    /// `WRITE_QUEUE_DEPTH` commands are already queued.
    #[napi]
    pub fn write(&self, chunk: Buffer) -> napi::Result<WriteResult, String> {
        match self.handle.write_now(&chunk) {
            WriteNow::Sent => Ok(WriteResult::Sent),
            WriteNow::Deferred(outcome) => write_result(outcome),
        }
    }

    /// Queues SHUT_WR after earlier writes; throws like `write` when full.
    #[napi]
    pub fn shutdown_write(&self) -> napi::Result<WriteResult, String> {
        write_result(self.handle.shutdown_write())
    }

    /// Whether this execution keeps Node's event loop alive (it does from
    /// spawn). A pool unholds its idle sandboxes and holds one again when it
    /// is taken or stopped. A no-op once the execution is over.
    #[napi]
    pub fn hold(&self, env: Env, held: bool) -> napi::Result<()> {
        match self.sink.upgrade() {
            Some(sink) => sink.hold(&env, held),
            None => Ok(()),
        }
    }

    /// Starts the stop ladder (idempotent; the first reason is recorded).
    #[napi]
    pub fn stop(&self, reason: StopCause) {
        self.handle.stop(match reason {
            StopCause::Stop => StopReason::Requested,
            StopCause::Deadline => StopReason::Deadline,
            StopCause::Signal => StopReason::Signal,
        });
    }

    /// Arms a deadline `ms` (1..=2^31-1) from now, enforced by the launcher's
    /// own timer with reason "deadline" (a pooled run's, counted from take()).
    #[napi]
    pub fn stop_after(&self, ms: u32) -> napi::Result<(), String> {
        if !(1..=MAX_DEADLINE_MS).contains(&ms) {
            return Err(napi::Error::new(
                "ERR_CORDON_INVALID_OPTIONS".to_string(),
                format!("deadlineMs must be an integer from 1 to {MAX_DEADLINE_MS}"),
            ));
        }
        self.handle
            .stop_after(std::time::Duration::from_millis(u64::from(ms)));
        Ok(())
    }
}

/// Validates `optionsJson`, prepares and starts the sandbox. Throws an error
/// whose `code` is an `ERR_CORDON_…` string when validation or preparation
/// fails; later failures arrive as a `Failed` event. `onEvent` is called on
/// the JS thread, in order, as `onEvent(kind, chunk, message, settled)`
/// (always those four arguments; see `EventKind`).
#[napi(
    ts_args_type = "optionsJson: string, onEvent: (kind: EventKind, chunk: Buffer | undefined, \
                    message: string | undefined, settled: Settled | undefined) => void"
)]
pub fn spawn_native(
    env: Env,
    options_json: String,
    on_event: Function<'_, EventArgs, ()>,
) -> napi::Result<NativeExecution, String> {
    let spawn_failed =
        |reason: String| napi::Error::new("ERR_CORDON_SPAWN_FAILED".to_string(), reason);
    let reader = LoopReader::new(&env).map_err(|e| spawn_failed(e.reason.clone()))?;
    let settles = reader.clone();
    let built = on_event
        .build_threadsafe_function::<Event>()
        .build_callback(move |ctx| {
            // Nothing of fd 3 follows the run's end (loop_reader.rs).
            if matches!(ctx.value, Event::Finished(_)) {
                settles.settle();
            }
            to_args(&ctx.env, ctx.value)
        });
    let tsfn: EventFn = match built {
        Ok(tsfn) => tsfn,
        Err(e) => {
            reader.settle();
            return Err(spawn_failed(e.reason.clone()));
        }
    };
    let js_sink = Arc::new(JsSink(RwLock::new(tsfn)));
    let sink = Arc::downgrade(&js_sink);
    let launched = cordon_launcher::launch_reading(&options_json, js_sink, reader.owner());
    let handle = match launched {
        Ok(handle) => handle,
        Err(e) => {
            reader.settle();
            return Err(napi::Error::new(
                e.code().as_str().to_string(),
                e.to_string(),
            ));
        }
    };
    // Not registering only loses the worker-teardown stop; the run is live.
    let _ = live_executions::register(&env, &handle.control, &reader);
    Ok(NativeExecution {
        handle,
        reader,
        sink,
    })
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
    cordon_launcher::host::control_root::base_path()
        .to_string_lossy()
        .into_owned()
}

/// The launcher's policy presets (`cordon_launcher::request::presets`), as JSON text
/// `[{"name", "policy"}, …]`: lib/isolated-policy.js builds `readOnly()`,
/// `workspaceWrite()` and `profile(name)` from it, so JS restates nothing.
#[napi]
pub fn policy_presets() -> String {
    cordon_launcher::request::presets::all_json().to_string()
}

/// Checks a policy document (JSON text) exactly as a launch would, without
/// launching: throws the launcher's coded error (`ERR_CORDON_POLICY_INVALID`,
/// `ERR_CORDON_UNSUPPORTED`), else returns its network mode (`"none"` or
/// `"mediated"`). `createCodeMode` calls it, so a bad policy fails at creation
/// rather than at the first run.
#[napi]
pub fn check_policy(policy_json: String) -> napi::Result<String, String> {
    let invalid = |message: String| {
        napi::Error::new(
            cordon_launcher::ErrorCode::PolicyInvalid
                .as_str()
                .to_string(),
            message,
        )
    };
    let value: Value =
        serde_json::from_str(&policy_json).map_err(|e| invalid(format!("policy: {e}")))?;
    let policy = cordon_launcher::request::policy::Policy::from_json(&value)
        .map_err(|e| napi::Error::new(e.code().as_str().to_string(), e.to_string()))?;
    let network = policy.network_json();
    Ok(network
        .get("mode")
        .and_then(Value::as_str)
        .unwrap_or("none")
        .to_string())
}
