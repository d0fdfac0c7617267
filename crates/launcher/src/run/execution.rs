//! The handle the owner keeps on a running execution: flow-control credits,
//! protocol writes, half-close and stop. Every method is safe to call at any
//! time, any number of times, including after the execution ended.

use std::sync::mpsc::{SyncSender, TrySendError};
use std::sync::{Arc, Mutex};

use crate::events::Stream;
use crate::request::launch_request::StopTimings;
use crate::run::pumps::{Gate, WriteCmd};
use crate::run::stop_ladder::{StopReason, Supervision};

/// Host → fd 3 queue depth (commands): two data chunks, or one plus a pending
/// shutdown, so the writer thread never idles between chunks. The addon
/// exports it; lib/isolated-execution.js keeps at most this many writes in
/// flight, so its stream never meets a full queue.
pub const WRITE_QUEUE_DEPTH: usize = 2;

/// What became of one `write` or `shutdown_write`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteOutcome {
    /// Queued: a `WriteDone` (or `ShutdownDone`) event follows.
    Queued,
    /// The execution's writer is gone (the run ended): nothing was queued and
    /// nothing will follow; the caller counts the bytes as discarded.
    Ended,
    /// `WRITE_QUEUE_DEPTH` commands are already waiting: nothing was queued.
    /// The caller wrote past the window; its bytes must not be dropped
    /// silently, so it reports an error.
    Full,
}

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

    fn send(&self, cmd: WriteCmd) -> WriteOutcome {
        let Ok(writer) = self.writer.lock() else {
            return WriteOutcome::Ended;
        };
        match writer.as_ref().map(|w| w.try_send(cmd)) {
            Some(Ok(())) => WriteOutcome::Queued,
            Some(Err(TrySendError::Full(_))) => WriteOutcome::Full,
            Some(Err(TrySendError::Disconnected(_))) | None => WriteOutcome::Ended,
        }
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

    /// Queues one chunk for fd 3 (never blocks; see `WriteOutcome`).
    pub fn write(&self, bytes: Vec<u8>) -> WriteOutcome {
        self.control.send(WriteCmd::Data(bytes))
    }

    /// Queues `SHUT_WR` after earlier writes (never blocks; see `WriteOutcome`).
    pub fn shutdown_write(&self) -> WriteOutcome {
        self.control.send(WriteCmd::Shutdown)
    }

    /// Starts the stop ladder (idempotent; the first reason is recorded).
    pub fn stop(&self, reason: StopReason) {
        self.control.stop(reason);
    }

    /// Arms a deadline `after` from now on the launcher's own timer (reason
    /// `deadline`); a no-op once the run has ended.
    pub fn stop_after(&self, after: std::time::Duration) {
        self.control
            .supervision
            .arm_deadline(after, self.control.stop_timings);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use std::sync::mpsc::{sync_channel, Receiver};

    use super::*;

    fn new_handle() -> (ExecutionHandle, Receiver<WriteCmd>) {
        let (tx, rx) = sync_channel(WRITE_QUEUE_DEPTH);
        let control = Arc::new(Control {
            writer: Mutex::new(Some(tx)),
            protocol_gate: Arc::new(Gate::new()),
            stderr_gate: Arc::new(Gate::new()),
            supervision: Arc::new(Supervision::default()),
            stop_timings: StopTimings {
                grace_ms: 0,
                force_ms: 0,
            },
        });
        (ExecutionHandle { control, pid: None }, rx)
    }

    #[test]
    fn a_write_past_the_queue_depth_is_full_not_ended() {
        let (handle, _writer) = new_handle();
        for _ in 0..WRITE_QUEUE_DEPTH {
            assert_eq!(handle.write(vec![1]), WriteOutcome::Queued);
        }
        assert_eq!(handle.write(vec![2]), WriteOutcome::Full);
        assert_eq!(handle.shutdown_write(), WriteOutcome::Full);
    }

    #[test]
    fn a_write_after_the_writer_went_away_is_ended() {
        let (handle, writer) = new_handle();
        assert_eq!(handle.write(vec![1]), WriteOutcome::Queued);
        drop(writer);
        assert_eq!(handle.write(vec![2]), WriteOutcome::Ended);
        let (handle, _writer) = new_handle();
        handle.control.close_writer();
        assert_eq!(handle.shutdown_write(), WriteOutcome::Ended);
    }
}
