//! One execution from the first byte to the terminal frame.
//!
//! Steps: open the bridge → read `execute` (exit 2 on failure) → validate it
//! (exit 1) → clamp limits → build the JS world → start the reader thread →
//! send `ready` and start the deadline → run the code → decide the outcome
//! from the latches first → send `execution.result` → half-close → exit 0.

use std::os::fd::FromRawFd;
use std::os::unix::net::UnixStream;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::cli::Config;
use crate::console::Console;
use crate::evaluation;
use crate::execute::{self, ExecuteRequest, PROTOCOL_VERSION};
use crate::frame_reader::FrameReader;
use crate::frame_writer::FrameWriter;
use crate::js_world::{Ceilings, JsWorld};
use crate::latches::Latches;
use crate::limits::EffectiveLimits;
use crate::mailbox::Mailbox;
use crate::outcome::{self, Metrics};
use crate::reader_thread;
use crate::tool_bridge::ToolBridge;

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
    let stream = match open_bridge(config.fd) {
        Ok(stream) => stream,
        Err(error) => return fail(Exit::Unreadable, format_args!("{error}")),
    };
    let writer = match stream.try_clone() {
        Ok(write_side) => Rc::new(FrameWriter::new(write_side, config.max_frame_bytes)),
        Err(error) => return fail(Exit::Failed, format_args!("cannot duplicate --fd: {error}")),
    };
    let mut reader = FrameReader::new(stream, config.max_frame_bytes);
    let frame = match reader.read_frame() {
        Ok(frame) => frame,
        Err(error) => {
            return fail(
                Exit::Unreadable,
                format_args!("cannot read the execute frame: {error}"),
            )
        }
    };
    crate::signals::enter_execution();
    let started = Instant::now();
    let request = match execute::validate(&frame) {
        Ok(request) => request,
        Err(error) => return fail(Exit::Failed, format_args!("invalid execute frame: {error}")),
    };
    let limits = EffectiveLimits::clamp(&request.limits, config);
    let bridge = Rc::new(ToolBridge::new(
        Rc::clone(&writer),
        Arc::clone(&shared.mailbox),
        Arc::clone(&shared.latches),
        limits.max_tool_calls,
    ));
    let console = Rc::new(Console::new(config.max_log_bytes));
    let ceilings = Ceilings {
        memory_bytes: config.memory_bytes,
        stack_bytes: config.stack_bytes,
    };
    let world = match JsWorld::build(ceilings, &request.tool_names, &bridge, &console) {
        Ok(world) => world,
        Err(error) => return fail(Exit::Failed, format_args!("{error}")),
    };
    let spawned = reader_thread::spawn(
        reader,
        Arc::clone(&shared.mailbox),
        Arc::clone(&shared.latches),
    );
    if let Err(error) = spawned {
        return fail(
            Exit::Failed,
            format_args!("cannot start the reader thread: {error}"),
        );
    }
    let exit = execute(
        &request, limits, &world, &writer, shared, started, &bridge, &console,
    );
    // The process exits next: freeing the heap object by object would only
    // delay it.
    std::mem::forget(world);
    exit
}

/// Sends `ready`, runs the code and sends the terminal frame.
#[allow(clippy::too_many_arguments)]
fn execute(
    request: &ExecuteRequest,
    limits: EffectiveLimits,
    world: &JsWorld,
    writer: &FrameWriter,
    shared: &Shared,
    started: Instant,
    bridge: &ToolBridge,
    console: &Console,
) -> Exit {
    let ready = json!({"effectiveLimits": limits.to_json(), "executionId": request.execution_id,
                       "runnerVersion": RUNNER_VERSION, "type": "ready", "version": PROTOCOL_VERSION});
    world.arm_interrupts(Arc::clone(&shared.latches));
    if let Err(error) = writer.send(&ready) {
        return fail(Exit::Failed, format_args!("cannot send ready: {error}"));
    }
    shared
        .latches
        .start_deadline(Duration::from_millis(limits.timeout_ms));
    let completion = world
        .context()
        .with(|ctx| evaluation::run(&ctx, &shared.latches, &request.code));
    let decision = outcome::decide(
        shared.latches.snapshot(),
        completion,
        limits.max_result_bytes,
    );
    console.finish();
    let metrics = Metrics {
        elapsed_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        tool_calls: bridge.calls_sent(),
    };
    let id = request.execution_id.as_deref();
    let encoded = writer
        .encode(&outcome::terminal_frame(id, decision, metrics))
        .or_else(|_| {
            // An ok frame over --max-frame-bytes becomes a result_limit failure.
            writer.encode(&outcome::terminal_frame(
                id,
                Err(outcome::result_limit_error()),
                metrics,
            ))
        });
    let sent = encoded.and_then(|bytes| writer.write_encoded(&bytes));
    if let Err(error) = sent {
        return fail(
            Exit::Failed,
            format_args!("cannot send execution.result: {error}"),
        );
    }
    writer.close();
    Exit::Terminal
}

/// Takes ownership of the bridge descriptor after checking that it is open.
fn open_bridge(fd: i32) -> Result<UnixStream, String> {
    // SAFETY: F_GETFD only queries the descriptor's flags; any integer is safe.
    if unsafe { libc::fcntl(fd, libc::F_GETFD) } == -1 {
        let error = std::io::Error::last_os_error();
        return Err(format!(
            "cannot read the execute frame: --fd {fd} is not open: {error}"
        ));
    }
    // SAFETY: the descriptor is open (checked above) and nothing else in this
    // process uses it; the stream becomes its only owner.
    Ok(unsafe { UnixStream::from_raw_fd(fd) })
}
