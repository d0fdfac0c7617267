//! The host's structured log (docs/remote.md § Logging): one JSON line per
//! connection when it ends (`"event": "session"`) and one per run when its
//! receipt is kept (`"event": "run"`), on stderr or appended to `logFile`
//! (reopened at SIGHUP, for logrotate). The lines are written on a thread
//! of their own (log_writer.rs), and `handshake-failed` ones within a
//! bound (failure_lines.rs).
//!
//! What a line may carry is fixed here, field by field: identities the host
//! established (tenant, auth, the peer's uid or address), the program's
//! allowlist *name*, counts, durations, outcomes and codes. Never a token,
//! never the program's arguments or fd 3 bytes (model-written code travels
//! there), never an environment value, never a refusal's message (it may
//! quote the request).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::failure_lines::{FailureLines, Verdict};
use super::log_file::{self, LogFileError};
use super::log_writer::{LogWriter, Sink};

/// Where the lines go.
pub struct SessionLog {
    /// The file or stderr, written by the writer thread only (and swapped
    /// at SIGHUP).
    sink: Sink,
    writer: LogWriter,
    /// `logFile`, reopened at each SIGHUP ([`SessionLog::reopen`]).
    path: Option<PathBuf>,
    /// The bound on `handshake-failed` lines (failure_lines.rs).
    failures: FailureLines,
    /// The same bound, its own bucket, on the lines of authenticated
    /// sessions that ran nothing (`closed`, `refused`, `receipt-query`):
    /// a peer that connects, reads `welcome` and closes in a loop wrote one
    /// line each, ~2 MB/s (round 11, R11-2).
    runless: FailureLines,
}

/// `handshake.failureLogBurst` / `failureLogPerMinute` (failure_lines.rs).
#[derive(Debug, Clone, Copy)]
pub struct FailureBound {
    pub burst: u64,
    pub per_minute: u64,
}

impl SessionLog {
    /// `logFile` (appended, created 0600, never through a symlink:
    /// log_file.rs) or stderr, and the writer thread (log_writer.rs).
    pub fn open(file: Option<&Path>, failures: FailureBound) -> Result<SessionLog, String> {
        let sink: Box<dyn Write + Send> = match file {
            Some(path) => Box::new(log_file::open(path).map_err(|e| e.to_string())?),
            None => Box::new(std::io::stderr()),
        };
        let sink: Sink = Arc::new(Mutex::new(sink));
        let writer = LogWriter::start(Arc::clone(&sink))
            .map_err(|e| format!("start the log's writer thread: {e}"))?;
        Ok(SessionLog {
            sink,
            writer,
            path: file.map(Path::to_path_buf),
            failures: FailureLines::new(failures.burst, failures.per_minute),
            runless: FailureLines::new(failures.burst, failures.per_minute),
        })
    }

    /// SIGHUP: `logFile` opened afresh at its path (logrotate renamed the
    /// old one away), and the lines from now on go there. The open happens
    /// outside the lock and the swap under it (the writer thread writes
    /// each line under it), so every line lands whole in exactly one of the
    /// two files: none lost, none written twice. If the path cannot be
    /// opened safely the lines keep going to the old file. Blocking (it
    /// waits for a line being written): call it off the runtime's workers.
    /// `Ok(false)`: the log is stderr, nothing to reopen.
    pub fn reopen(&self) -> Result<bool, LogFileError> {
        let Some(path) = &self.path else {
            return Ok(false);
        };
        let fresh: Box<dyn Write + Send> = Box::new(log_file::open(path)?);
        if let Ok(mut sink) = self.sink.lock() {
            *sink = fresh;
        }
        Ok(true)
    }

    /// One line, queued whole for the writer thread: never blocks.
    pub fn line(&self, mut fields: Value) {
        fields["ts"] = json!(cordon_egress::timestamp::rfc3339(
            std::time::SystemTime::now()
        ));
        let mut text = fields.to_string();
        text.push('\n');
        self.writer.push(text);
    }

    /// A `handshake-failed` session line, or one of a session that ran
    /// nothing, within its bucket's bound.
    fn bounded_line(&self, bucket: Bucket, fields: Value) {
        match self.bucket(bucket).admit(Instant::now()) {
            Verdict::Suppress => {}
            Verdict::Write { suppressed_before } => {
                self.suppressed_line(bucket, suppressed_before);
                self.line(fields);
            }
        }
    }

    fn bucket(&self, bucket: Bucket) -> &FailureLines {
        match bucket {
            Bucket::HandshakeFailed => &self.failures,
            Bucket::Runless => &self.runless,
        }
    }

    /// Says how many bounded lines were held back since the last time
    /// (nothing when none): periodically and at the host's stop.
    pub fn summarize_failures(&self) {
        for bucket in [Bucket::HandshakeFailed, Bucket::Runless] {
            self.suppressed_line(bucket, self.bucket(bucket).take_suppressed());
        }
    }

    fn suppressed_line(&self, bucket: Bucket, count: u64) {
        let event = match bucket {
            Bucket::HandshakeFailed => "handshake-failed-suppressed",
            Bucket::Runless => "session-without-run-suppressed",
        };
        if count > 0 {
            self.line(json!({"event": event, "lines": count}));
        }
    }

    /// The host stops: the suppressed count said, the queued lines written
    /// (within `bound`). Blocking: call it off the runtime's workers.
    pub fn close(&self, bound: Duration) {
        self.summarize_failures();
        self.writer.close(bound);
    }
}

/// Which bound a session line passes.
#[derive(Debug, Clone, Copy)]
enum Bucket {
    HandshakeFailed,
    Runless,
}

/// Bytes through a connection, both ways (frame headers included).
#[derive(Default)]
pub struct Bytes {
    pub read: AtomicU64,
    pub written: AtomicU64,
}

/// A connection's stream, counting into [`Bytes`].
pub struct Counted<S> {
    inner: S,
    bytes: Arc<Bytes>,
}

impl<S> Counted<S> {
    pub fn new(inner: S, bytes: Arc<Bytes>) -> Counted<S> {
        Counted { inner, bytes }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Counted<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        let n = buf.filled().len().saturating_sub(before) as u64;
        self.bytes.read.fetch_add(n, Ordering::Relaxed);
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Counted<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = &polled {
            self.bytes.written.fetch_add(*n as u64, Ordering::Relaxed);
        }
        polled
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// How a connection ended, as its line says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Closed before `welcome` (credentials, bounds, the cap): silently.
    HandshakeFailed,
    /// Closed after `welcome` without a run (the upload-phase bound, a
    /// frame out of order, the client went away).
    Closed,
    /// `refused` was sent (its code is on the line).
    Refused,
    /// A sandbox ran (the `run` line has its receipt's facts).
    Ran,
    /// A `receipt-query` was answered.
    ReceiptQuery,
}

impl Outcome {
    fn as_str(self) -> &'static str {
        match self {
            Outcome::HandshakeFailed => "handshake-failed",
            Outcome::Closed => "closed",
            Outcome::Refused => "refused",
            Outcome::Ran => "ran",
            Outcome::ReceiptQuery => "receipt-query",
        }
    }
}

/// One connection's line, filled in as the session goes and written when
/// dropped (so every way out of a session logs it).
pub struct SessionRecord {
    log: Arc<SessionLog>,
    pub id: String,
    began: Instant,
    transport: &'static str,
    peer: String,
    pub tenant: Option<String>,
    pub auth: Option<&'static str>,
    pub outcome: Outcome,
    pub refused: Option<String>,
    pub runs: u32,
    pub bytes: Arc<Bytes>,
}

impl SessionRecord {
    pub fn new(log: Arc<SessionLog>, transport: &'static str, peer: String) -> SessionRecord {
        SessionRecord {
            log,
            id: cordon_launcher::host::process_identity::random_hex(8).unwrap_or_default(),
            began: Instant::now(),
            transport,
            peer,
            tenant: None,
            auth: None,
            outcome: Outcome::HandshakeFailed,
            refused: None,
            runs: 0,
            bytes: Arc::default(),
        }
    }

    /// The `run` line: `receipt` is the kept receipt (or `{}`), `error` the
    /// code of a run that failed as a local `wait()` would reject.
    pub fn run_line(&self, program: &str, receipt: &Value, error: Option<&str>) {
        self.log.line(json!({
            "event": "run",
            "session": self.id,
            "tenant": self.tenant,
            "program": program,
            "invocationId": receipt.get("invocationId"),
            "outcome": receipt.pointer("/outcome/status"),
            "exitCode": receipt.pointer("/outcome/exitCode"),
            "signal": receipt.pointer("/outcome/signal"),
            "stopReason": receipt.pointer("/stop/reason"),
            "error": error,
            "clamped": receipt.pointer("/remote/clamped").and_then(Value::as_object).map(|c| c.keys().collect::<Vec<_>>()),
            "bytes": receipt.get("bytes"),
            "durationMs": receipt.get("durationMs"),
        }));
    }
}

impl Drop for SessionRecord {
    fn drop(&mut self) {
        let line = json!({
            "event": "session",
            "session": self.id,
            "transport": self.transport,
            "peer": self.peer,
            "tenant": self.tenant,
            "auth": self.auth,
            "outcome": self.outcome.as_str(),
            "refused": self.refused,
            "runs": self.runs,
            "bytesIn": self.bytes.read.load(Ordering::Relaxed),
            "bytesOut": self.bytes.written.load(Ordering::Relaxed),
            "durationMs": self.began.elapsed().as_millis() as u64,
        });
        match self.outcome {
            Outcome::HandshakeFailed => self.log.bounded_line(Bucket::HandshakeFailed, line),
            _ if self.runs == 0 => self.log.bounded_line(Bucket::Runless, line),
            _ => self.log.line(line),
        }
    }
}
