//! The host's structured log (docs/remote.md § Logging): one JSON line per
//! connection when it ends (`"event": "session"`) and one per run when its
//! receipt is kept (`"event": "run"`), on stderr or appended to `logFile`
//! (reopened at SIGHUP, for logrotate).
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
use std::time::Instant;

use serde_json::{json, Value};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::log_file::{self, LogFileError};

/// Where the lines go.
pub struct SessionLog {
    sink: Mutex<Box<dyn Write + Send>>,
    /// `logFile`, reopened at each SIGHUP ([`SessionLog::reopen`]).
    path: Option<PathBuf>,
}

impl SessionLog {
    /// `logFile` (appended, created 0600, never through a symlink:
    /// log_file.rs) or stderr.
    pub fn open(file: Option<&Path>) -> Result<SessionLog, LogFileError> {
        let sink: Box<dyn Write + Send> = match file {
            Some(path) => Box::new(log_file::open(path)?),
            None => Box::new(std::io::stderr()),
        };
        Ok(SessionLog {
            sink: Mutex::new(sink),
            path: file.map(Path::to_path_buf),
        })
    }

    /// SIGHUP: `logFile` opened afresh at its path (logrotate renamed the
    /// old one away), and the lines from now on go there. The open happens
    /// outside the lock and the swap under it, so every line lands whole in
    /// exactly one of the two files: none lost, none written twice. If the
    /// path cannot be opened safely the lines keep going to the old file.
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

    /// One line, written whole (one `write_all` of line and newline).
    pub fn line(&self, mut fields: Value) {
        fields["ts"] = json!(cordon_egress::timestamp::rfc3339(
            std::time::SystemTime::now()
        ));
        let mut text = fields.to_string();
        text.push('\n');
        if let Ok(mut sink) = self.sink.lock() {
            let _ = sink.write_all(text.as_bytes());
            let _ = sink.flush();
        }
    }
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
        self.log.line(json!({
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
        }));
    }
}
