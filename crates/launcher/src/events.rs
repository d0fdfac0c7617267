//! What a running execution reports to its owner (the napi addon, or a test).
//! Events of one execution are emitted in causal order: every `Data` of a
//! stream precedes its `End`, and both `End`s precede `Finished`.

use serde_json::Value;

use crate::error_code::ErrorCode;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// fd 3 of the runner → host.
    Protocol,
    /// fd 1 and fd 2 of the runner (and bwrap's own diagnostics) → host.
    Stderr,
}

/// How `wait()` settles when the launch itself failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchFailure {
    pub code: ErrorCode,
    pub message: String,
    /// The receipt written for the failed launch (as read back from
    /// `receipt.json`), when there is one.
    pub receipt: Option<Value>,
}

/// How `wait()` settles when bwrap ran and was reaped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    pub returncode: Option<i32>,
    pub signal: Option<String>,
    /// The receipt as read back from `receipt.json`. Always present: a run
    /// without a readable receipt settles as a `LaunchFailure` instead.
    pub receipt: Value,
    /// `sha256:<hex>` of the receipt's canonical JSON (receipt/canonical.rs):
    /// the audit record's `receiptDigest`, so the owner need not compute it.
    pub receipt_digest: String,
}

#[derive(Debug)]
pub enum Event {
    Data {
        stream: Stream,
        bytes: Vec<u8>,
    },
    End {
        stream: Stream,
        error: Option<String>,
    },
    /// The oldest pending protocol write finished; `discarded` when the
    /// runner had already closed its side (the bytes were dropped, counted).
    WriteDone {
        discarded: bool,
    },
    /// `SHUT_WR` was applied after all earlier writes.
    ShutdownDone,
    /// The sandbox is set up and its program was observed: the receipt's
    /// fields that are known before the end (`receipt::head`; everything but
    /// `receipt::END_FIELDS` and `confinement.cgroupOutcome`). At most once,
    /// always before `Finished`; a run that never reached its observation
    /// (a failed launch) has none.
    Observed {
        receipt_head: Value,
    },
    Finished(Result<Completion, LaunchFailure>),
}

/// Receives an execution's events, from the launcher's threads.
pub trait EventSink: Send + Sync + 'static {
    fn emit(&self, event: Event);
}
