//! The handle the owner keeps on a running execution: flow-control credits,
//! protocol writes, half-close and stop. Every method is safe to call at any
//! time, any number of times, including after the execution ended.

use std::sync::mpsc::{SyncSender, TrySendError};
use std::sync::{Arc, Mutex};

use crate::events::Stream;
use crate::launch_request::StopTimings;
use crate::pumps::{Gate, WriteCmd};
use crate::stop_ladder::{StopReason, Supervision};

/// Shared between the handle and the run's supervision. Its parts are the
/// launcher's own: an owner (the addon's registry of live executions)
/// holds it only to call [`Control::stop`] / [`Control::stop_now`].
#[derive(Debug)]
pub struct Control {
    pub(crate) writer: Mutex<Option<SyncSender<WriteCmd>>>,
    pub(crate) protocol_gate: Arc<Gate>,
    pub(crate) stderr_gate: Arc<Gate>,
    pub(crate) supervision: Arc<Supervision>,
    pub(crate) stop_timings: StopTimings,
}

impl Control {
    /// Starts the stop ladder with the run's own timings (idempotent; the
    /// first reason is recorded).
    pub fn stop(&self, reason: StopReason) {
        self.supervision.request_stop(reason, self.stop_timings);
    }

    /// Straight to the forced rung (no grace), still waiting the run's own
    /// `forceMs` for containment: for an owner that is going away now, or
    /// a sandbox that must get no time to act.
    pub fn stop_now(&self, reason: StopReason) {
        let timings = StopTimings {
            grace_ms: 0,
            ..self.stop_timings
        };
        self.supervision.request_stop(reason, timings);
    }

    /// Drops the writer's sender: the writer thread ends after its queue.
    pub fn close_writer(&self) {
        if let Ok(mut writer) = self.writer.lock() {
            writer.take();
        }
    }
}

#[derive(Debug)]
pub struct ExecutionHandle {
    pub control: Arc<Control>,
    /// bwrap's pid; `None` when the fork/exec failed (wait() then rejects).
    pub pid: Option<u32>,
}

impl ExecutionHandle {
    /// The consumer of `stream` wants one more chunk.
    pub fn grant(&self, stream: Stream) {
        match stream {
            Stream::Protocol => self.control.protocol_gate.grant(),
            Stream::Stderr => self.control.stderr_gate.grant(),
        }
    }

    /// Queues one chunk for fd 3. `false` means it was not queued (the
    /// execution ended or a write is already pending): the caller treats
    /// the bytes as discarded. `true` means a `WriteDone` event will follow.
    pub fn write(&self, bytes: Vec<u8>) -> bool {
        self.send(WriteCmd::Data(bytes))
    }

    /// Queues `SHUT_WR` after earlier writes; `true` means `ShutdownDone` follows.
    pub fn shutdown_write(&self) -> bool {
        self.send(WriteCmd::Shutdown)
    }

    fn send(&self, cmd: WriteCmd) -> bool {
        let Ok(writer) = self.control.writer.lock() else {
            return false;
        };
        match writer.as_ref().map(|w| w.try_send(cmd)) {
            Some(Ok(())) => true,
            Some(Err(TrySendError::Full(_) | TrySendError::Disconnected(_))) | None => false,
        }
    }

    /// Starts the stop ladder (idempotent; the first reason is recorded).
    pub fn stop(&self, reason: StopReason) {
        self.control.stop(reason);
    }
}
