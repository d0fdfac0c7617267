//! One execution from the first byte to the terminal frame.
//!
//! Steps: open the bridge → build the JS world without `tools` and start the
//! reader thread, parked (exit 1 on failure; both done before the blocking
//! read, so a runner waiting in a pool is already warm) → read `execute`
//! (exit 2 on failure) → validate it (exit 1) → clamp limits → install
//! `tools` → hand the frame reader to the reader thread → send `ready`
//! and start the deadline → run the code → decide the outcome from the
//! latches first → send `execution.result` → half-close → exit 0.

use std::os::fd::FromRawFd;
use std::os::unix::net::UnixStream;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::cli::Config;
use crate::console::{Console, FrameSink};
use crate::evaluation::{self, Completion, Waits};
use crate::execute::{self, ExecuteRequest, PROTOCOL_VERSION};
use crate::extensions::Extensions;
use crate::frame_reader::FrameReader;
use crate::frame_writer::FrameWriter;
use crate::js_world::{Ceilings, JsWorld};
use crate::latches::Latches;
use crate::limits::EffectiveLimits;
use crate::mailbox::Mailbox;
use crate::model_errors;
use crate::outcome::{self, Metrics, Wording};
use crate::promised_calls::PromisedCalls;
use crate::readable_wait::ReadableWait;
use crate::reader_thread;
use crate::timers::Timers;
use crate::tool_bridge::{CallMode, ToolBridge};

pub const RUNNER_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Process exit codes (§3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Exit {
    /// A terminal frame was sent (whatever its `ok`), or --help/--version.
    Terminal = 0,
    /// Invalid execute frame, peer gone while sending, or setup failure.
    Failed = 1,
    /// Command line refused, or the first frame unreadable.
    Unreadable = 2,
}

fn fail(exit: Exit, message: std::fmt::Arguments<'_>) -> Exit {
    eprintln!("cordon-runner: {message}");
    exit
}

/// The shared state of the process: latches and the host-frame queue.
pub struct Shared {
    pub latches: Arc<Latches>,
    pub mailbox: Arc<Mailbox>,
}

pub fn run(config: &Config, shared: &Shared) -> Exit {
    match prepare(config, shared) {
        Ok(prepared) => {
            let exit = prepared.execute(shared);
            // The process exits next: freeing the heap object by object
            // would only delay it.
            std::mem::forget(prepared);
            exit
        }
        Err(exit) => exit,
    }
}

/// Everything built before `ready`.
struct Prepared {
    request: ExecuteRequest,
    limits: EffectiveLimits,
    /// `None` for a plain v1 host (no `extensions` in `execute`).
    extensions: Option<Extensions>,
    started: Instant,
    writer: Rc<FrameWriter>,
    bridge: Rc<ToolBridge>,
    console: Rc<Console>,
    /// `Some` when the timers extension was confirmed.
    timers: Option<Rc<Timers>>,
    world: JsWorld,
}

/// Steps up to `ready`: bridge, world without `tools`, parked reader
/// thread, execute frame, validation, limits, `tools`, reader hand-over.
/// Each failure is reported here and becomes the exit code.
fn prepare(config: &Config, shared: &Shared) -> Result<Prepared, Exit> {
    let stream = open_bridge(config.fd).map_err(|e| fail(Exit::Unreadable, format_args!("{e}")))?;
    let write_side = stream
        .try_clone()
        .map_err(|e| fail(Exit::Failed, format_args!("cannot duplicate --fd: {e}")))?;
    let writer = Rc::new(FrameWriter::new(write_side, config.max_frame_bytes));
    let console = Rc::new(Console::new(config.max_log_bytes));
    let ceilings = Ceilings {
        memory_bytes: config.memory_bytes,
        stack_bytes: config.stack_bytes,
    };
    // Nothing here depends on `execute`: built while the host has not sent
    // it yet. A failure (a heap ceiling too small for the context) is a
    // setup failure before any frame is read: exit 1, nothing read or sent.
    let world = JsWorld::build(ceilings, &console, config.max_requests.is_some())
        .map_err(|e| fail(Exit::Failed, format_args!("{e}")))?;
    let parked_reader =
        reader_thread::spawn_parked(Arc::clone(&shared.mailbox), Arc::clone(&shared.latches))
            .map_err(|e| {
                fail(
                    Exit::Failed,
                    format_args!("cannot start the reader thread: {e}"),
                )
            })?;
    let mut reader = FrameReader::new(ReadableWait::new(stream), config.max_frame_bytes);
    let frame = reader.read_frame().map_err(|e| {
        fail(
            Exit::Unreadable,
            format_args!("cannot read the execute frame: {e}"),
        )
    })?;
    crate::signals::enter_execution();
    let started = Instant::now();
    let request = execute::validate(&frame)
        .map_err(|e| fail(Exit::Failed, format_args!("invalid execute frame: {e}")))?;
    let limits = EffectiveLimits::clamp(&request.limits, config);
    let extensions = request
        .extensions
        .map(|requested| Extensions::clamp(requested, config.max_log_bytes, config.max_requests));
    if extensions.and_then(|e| e.max_requests).is_none() {
        world.discard_fetch_script();
    }
    let mode = match extensions.and_then(|e| e.max_outstanding) {
        Some(k) => CallMode::Promised(PromisedCalls::new(k)),
        None => CallMode::Synchronous,
    };
    if extensions.is_some() {
        world
            .install_performance()
            .map_err(|e| fail(Exit::Failed, format_args!("{e}")))?;
    }
    let timers = extensions
        .and_then(|e| e.max_live_timers)
        .map(|live| Rc::new(Timers::new(live)));
    if let Some(timers) = &timers {
        world
            .install_timers(timers)
            .map_err(|e| fail(Exit::Failed, format_args!("{e}")))?;
    }
    if let Some(budget_bytes) = extensions.and_then(|e| e.max_log_bytes) {
        console.send_frames(FrameSink {
            writer: Rc::clone(&writer),
            execution_id: request.execution_id.clone(),
            budget_bytes,
            latches: Arc::clone(&shared.latches),
            mailbox: Arc::clone(&shared.mailbox),
        });
    }
    let mut bridge = ToolBridge::new(
        Rc::clone(&writer),
        Arc::clone(&shared.mailbox),
        Arc::clone(&shared.latches),
        limits.max_tool_calls,
        mode,
    );
    if let Some(requests) = extensions.and_then(|e| e.max_requests) {
        bridge = bridge.with_fetch(requests);
    }
    let bridge = Rc::new(bridge);
    world
        .install_tools(&request.tool_names, &bridge)
        .map_err(|e| fail(Exit::Failed, format_args!("{e}")))?;
    if extensions.is_some() {
        // With the fetch extension: the real globals; without: a `fetch`
        // that says how to enable it. A v1 world has no `fetch` at all.
        world
            .install_fetch(&bridge)
            .map_err(|e| fail(Exit::Failed, format_args!("{e}")))?;
    }
    parked_reader.start(reader).map_err(|_| {
        fail(
            Exit::Failed,
            format_args!("the reader thread ended before reading"),
        )
    })?;
    Ok(Prepared {
        request,
        limits,
        extensions,
        started,
        writer,
        bridge,
        console,
        timers,
        world,
    })
}

impl Prepared {
    /// Sends `ready` (the deadline starts), runs the code, decides the
    /// outcome from the latches first, sends the terminal frame, half-closes.
    fn execute(&self, shared: &Shared) -> Exit {
        let mut ready = json!({"effectiveLimits": self.limits.to_json(),
                               "executionId": self.request.execution_id,
                               "runnerVersion": RUNNER_VERSION, "type": "ready",
                               "version": PROTOCOL_VERSION});
        if let Some(extensions) = self.extensions {
            ready["extensions"] = extensions.to_json();
        }
        self.world.arm_interrupts(Arc::clone(&shared.latches));
        if let Err(error) = self.writer.send(&ready) {
            return fail(Exit::Failed, format_args!("cannot send ready: {error}"));
        }
        let ready_at = Instant::now();
        self.console.mark_ready(ready_at);
        self.world.mark_ready(ready_at);
        shared
            .latches
            .start_deadline(Duration::from_millis(self.limits.timeout_ms));
        let waits = Waits {
            latches: &shared.latches,
            bridge: &self.bridge,
            mailbox: &shared.mailbox,
            timers: self.timers.as_deref(),
        };
        let max_result_bytes = self.limits.max_result_bytes;
        let completion = self
            .world
            .context()
            .with(|ctx| evaluation::run(&ctx, &waits, &self.request.code, max_result_bytes));
        let wording = match self.extensions {
            Some(_) => Wording::Extended,
            None => Wording::V1,
        };
        let completion = match completion {
            Completion::Threw(message) if wording == Wording::Extended => Completion::Threw(
                model_errors::name_ungranted_tool(
                    &message,
                    &self.request.code,
                    &self.request.tool_names,
                )
                .or_else(|| model_errors::name_callee(&message, &self.request.code))
                .unwrap_or(message),
            ),
            other => other,
        };
        let decision = outcome::decide(
            shared.latches.snapshot(),
            completion,
            self.limits.max_result_bytes,
            wording,
        );
        self.console.finish();
        let metrics = Metrics {
            elapsed_ms: u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX),
            tool_calls: self.bridge.calls_sent(),
            console_dropped_lines: self
                .extensions
                .and_then(|e| e.max_log_bytes)
                .map(|_| self.console.dropped_lines()),
        };
        let id = self.request.execution_id.as_deref();
        let frame = outcome::terminal_frame(id, decision, metrics);
        let encoded = self.writer.encode(&frame).or_else(|_| {
            let fitted = outcome::shrink_to_fit(frame, self.writer.max_frame_bytes());
            self.writer.encode(&fitted)
        });
        if let Err(error) = encoded.and_then(|bytes| self.writer.write_encoded(&bytes)) {
            return fail(
                Exit::Failed,
                format_args!("cannot send execution.result: {error}"),
            );
        }
        self.writer.close();
        Exit::Terminal
    }
}

/// Takes ownership of the bridge descriptor after checking that it is open.
fn open_bridge(fd: i32) -> Result<UnixStream, String> {
    // SAFETY: F_GETFD only queries the descriptor's flags (any integer is
    // safe to pass). When it succeeds the descriptor is open, and nothing
    // else in this process uses it (the host passed its number on our
    // command line for us to take), so the stream becomes its only owner.
    let adopted = unsafe {
        match libc::fcntl(fd, libc::F_GETFD) {
            -1 => Err(std::io::Error::last_os_error()),
            _ => Ok(UnixStream::from_raw_fd(fd)),
        }
    };
    adopted
        .map_err(|error| format!("cannot read the execute frame: --fd {fd} is not open: {error}"))
}
