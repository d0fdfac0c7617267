//! What every stream attempt does once its frontend has named a host and
//! port, whichever frontend it came from: admit, connect with a deadline,
//! verify SNI when required, relay, and leave exactly one receipt.

use std::io::Read;
use std::net::{SocketAddr, TcpStream};
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use crate::admission::{Admitted, Allowlist};
use crate::byte_relay::relay;
use crate::cancel::{deadline_after, CancelWatch, Wake};
use crate::connect::ConnectError;
use crate::destination::Host;
use crate::network_receipt::{Frontend, NetworkReceipt, StreamProtocol};
use crate::quota::QuotaState;
use crate::refusal::Refusal;
use crate::resolver::Resolve;
use crate::sni::{parse_client_hello, SniVerdict, MAX_CLIENT_HELLO_BYTES};
use crate::timestamp::rfc3339;

/// Receipts kept per run; attempts past it are counted, not stored, so a
/// sandbox hammering the proxy cannot grow host memory without bound.
pub const MAX_RECEIPTS_PER_RUN: usize = 4096;

/// Everything a run's frontends share (one per run, behind an Arc).
pub struct RunContext {
    pub allowlist: Allowlist,
    pub resolver: Arc<dyn Resolve>,
    pub quota: Arc<QuotaState>,
    pub policy_digest: String,
    pub invocation_id: String,
    pub connect_timeout: Duration,
    /// How long a client may take to send its proxy request or ClientHello.
    pub handshake_timeout: Duration,
    pub cancel: CancelWatch,
    pub receipts: ReceiptLog,
}

#[derive(Debug, Default)]
pub struct ReceiptLog {
    next_id: AtomicU64,
    kept: Mutex<Vec<NetworkReceipt>>,
    dropped: AtomicU64,
}

impl ReceiptLog {
    fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::AcqRel) + 1
    }

    fn push(&self, receipt: NetworkReceipt) {
        if let Ok(mut kept) = self.kept.lock() {
            if kept.len() < MAX_RECEIPTS_PER_RUN {
                kept.push(receipt);
                return;
            }
        }
        self.dropped.fetch_add(1, Ordering::AcqRel);
    }

    /// The receipts in id order and how many were dropped past the cap.
    pub fn take(&self) -> (Vec<NetworkReceipt>, u64) {
        let mut kept = self
            .kept
            .lock()
            .map(|mut k| std::mem::take(&mut *k))
            .unwrap_or_default();
        kept.sort_by_key(|r| r.id);
        (kept, self.dropped.load(Ordering::Acquire))
    }
}

/// One attempt's receipt under construction.
pub struct Attempt {
    pub receipt: NetworkReceipt,
    started: Instant,
}

impl Attempt {
    pub fn begin(ctx: &RunContext, frontend: Frontend, protocol: StreamProtocol) -> Self {
        Self {
            receipt: NetworkReceipt {
                id: ctx.receipts.next_id(),
                frontend,
                protocol,
                host: None,
                host_truncated: false,
                port: None,
                pinned_address: None,
                result: NetworkReceipt::result_for(None),
                end: None,
                started_at: rfc3339(SystemTime::now()),
                duration_ms: 0,
                bytes_from_client: 0,
                bytes_to_client: 0,
                sni_verified: false,
                policy_digest: ctx.policy_digest.clone(),
                invocation_id: ctx.invocation_id.clone(),
            },
            started: Instant::now(),
        }
    }

    pub fn refuse(mut self, ctx: &RunContext, refusal: Refusal) {
        self.receipt.result = NetworkReceipt::result_for(Some(refusal));
        self.finish(ctx);
    }

    pub fn finish(mut self, ctx: &RunContext) {
        self.receipt.duration_ms =
            u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        ctx.receipts.push(self.receipt);
    }
}

/// An admitted, connected upstream.
pub struct Connected {
    pub admitted: Admitted,
    pub upstream: TcpStream,
}

/// Admission then a TCP connect to the pinned address with the run's deadline.
pub fn admit_and_connect(
    ctx: &RunContext,
    attempt: &mut Attempt,
    host: &str,
    port: u16,
) -> Result<Connected, Refusal> {
    attempt.receipt.record_host(host);
    attempt.receipt.port = Some(port);
    let mut admitted = ctx.allowlist.admit(host, port, ctx.resolver.as_ref())?;
    attempt
        .receipt
        .record_host(&admitted.destination.host.as_text());
    // Each admissible address in turn; the stream is pinned to the one that answers.
    let mut failure = Refusal::ConnectFailed;
    let mut connected = None;
    for ip in admitted.candidates.clone() {
        match crate::connect::connect(SocketAddr::new(ip, port), ctx.connect_timeout, &ctx.cancel) {
            Ok(stream) => {
                admitted.pinned = ip;
                connected = Some(stream);
                break;
            }
            Err(ConnectError::TimedOut) => failure = Refusal::ConnectTimeout,
            Err(ConnectError::Cancelled) => {
                failure = Refusal::Cancelled;
                break;
            }
            // The kernel gave up (SYN retries spent) before our deadline.
            Err(ConnectError::Failed(e)) if e.kind() == std::io::ErrorKind::TimedOut => {
                failure = Refusal::ConnectTimeout
            }
            Err(ConnectError::Failed(_)) => {}
        }
    }
    attempt.receipt.pinned_address = Some(admitted.pinned.to_string());
    let upstream = connected.ok_or(failure)?;
    let _ = upstream.set_nodelay(true);
    Ok(Connected { admitted, upstream })
}

/// With `requireTlsSni`, reads the client's first bytes until the
/// ClientHello's SNI is known and compares it with the allowed name — before
/// any byte goes upstream. Returns the bytes read, to be forwarded first.
pub fn verify_sni(
    ctx: &RunContext,
    attempt: &mut Attempt,
    admitted: &Admitted,
    client: &UnixStream,
    mut prefix: Vec<u8>,
) -> Result<Vec<u8>, Refusal> {
    if !admitted.destination.require_tls_sni {
        return Ok(prefix);
    }
    let Host::Name(expected) = &admitted.destination.host else {
        return Err(Refusal::SniAbsent); // unreachable by validation: literals cannot require SNI
    };
    let deadline = deadline_after(ctx.handshake_timeout);
    let mut chunk = [0u8; 4096];
    loop {
        match parse_client_hello(&prefix) {
            SniVerdict::Incomplete if prefix.len() < MAX_CLIENT_HELLO_BYTES => {}
            SniVerdict::Sni(name) if &name == expected => {
                attempt.receipt.sni_verified = true;
                return Ok(prefix);
            }
            SniVerdict::Sni(_) => return Err(Refusal::SniMismatch),
            _ => return Err(Refusal::SniAbsent),
        }
        match ctx.cancel.readable(client.as_fd(), deadline) {
            Ok(Wake::Ready) => {}
            _ => return Err(Refusal::SniAbsent),
        }
        let room = (MAX_CLIENT_HELLO_BYTES - prefix.len()).min(chunk.len());
        match (&*client).read(&mut chunk[..room]) {
            Ok(0) | Err(_) => return Err(Refusal::SniAbsent),
            Ok(n) => prefix.extend_from_slice(&chunk[..n]),
        }
    }
}

/// SNI check (if required), relay, receipt: the tail every admitted stream shares.
pub fn run_admitted(
    ctx: &RunContext,
    mut attempt: Attempt,
    connected: Connected,
    client: UnixStream,
    prefix: Vec<u8>,
) {
    let prefill = match verify_sni(ctx, &mut attempt, &connected.admitted, &client, prefix) {
        Ok(bytes) => bytes,
        Err(refusal) => return attempt.refuse(ctx, refusal),
    };
    let outcome = relay(
        &client,
        &connected.upstream,
        &prefill,
        &ctx.quota,
        &ctx.cancel,
    );
    attempt.receipt.bytes_from_client = outcome.bytes_from_client;
    attempt.receipt.bytes_to_client = outcome.bytes_to_client;
    attempt.receipt.end = Some(outcome.end);
    attempt.finish(ctx);
}
