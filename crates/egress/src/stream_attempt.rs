//! What every stream attempt does once its frontend has named a host and
//! port, whichever frontend it came from: admit, connect with a deadline,
//! verify SNI when required, relay — and how its one receipt is decided.
//!
//! Each attempt is one task that races its work against the run's
//! cancellation ([`until_cancelled`]); the end reason is decided once, by
//! [`Attempt::settle`]: a stop is `cancelled` in whatever phase it lands
//! (never a client fault), an admitted stream keeps `allowed` and ends
//! `cancelled`.

use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use tokio::net::TcpStream;

use crate::admission::{pin, Admitted, Allowlist};
use crate::byte_relay::{relay, Delivered};
use crate::cancel::{Cancel, Tasks};
use crate::client_stream::ClientStream;
use crate::connect::ConnectError;
use crate::destination::Host;
use crate::network_receipt::{Frontend, NetworkReceipt, StreamEnd, StreamProtocol};
use crate::quota::QuotaState;
use crate::receipt_log::ReceiptLog;
use crate::refusal::Refusal;
use crate::resolver::Resolve;
use crate::sni::{parse_client_hello, SniVerdict, MAX_CLIENT_HELLO_BYTES};
use crate::timestamp::rfc3339;

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
    /// How long `finish` waits for the tasks after cancelling them.
    pub teardown_bound: Duration,
    pub cancel: Cancel,
    /// Set when the run's stop begins, before the sandbox is signalled.
    pub stopping: crate::stop_latch::StopLatch,
    pub tasks: Tasks,
    /// Name lookups of this run in flight at once (each holds a blocking thread).
    pub resolving: tokio::sync::Semaphore,
    pub receipts: ReceiptLog,
    /// The time the run's tasks spent being polled (busy_time.rs).
    pub busy: Arc<crate::busy_time::BusyTime>,
}

impl RunContext {
    /// `task`, counted in the run's busy time: every task of a run is
    /// spawned through this.
    pub fn timed<F: std::future::Future>(&self, task: F) -> crate::busy_time::Timed<F> {
        crate::busy_time::timed(&self.busy, task)
    }
}

/// How an attempt's work ended (the stop is the third way, see `run`).
pub enum Outcome {
    Refused(Refusal),
    Relayed(StreamEnd),
}

/// One attempt's receipt under construction.
pub struct Attempt {
    pub receipt: NetworkReceipt,
    started: Instant,
    /// An upstream connection was made: the receipt is never dropped.
    connected: bool,
    /// Relayed bytes (counted as they are delivered, so a stop keeps them).
    pub delivered: Delivered,
}

impl Attempt {
    pub fn begin(ctx: &RunContext, frontend: Frontend, protocol: StreamProtocol) -> Self {
        Self {
            receipt: NetworkReceipt::new(
                ctx.receipts.next_id(),
                frontend,
                protocol,
                rfc3339(SystemTime::now()),
                ctx.policy_digest.clone(),
                ctx.invocation_id.clone(),
            ),
            started: Instant::now(),
            connected: false,
            delivered: Delivered::default(),
        }
    }

    /// An attempt refused before any work (quota at accept, a junk datagram).
    pub fn refuse(self, ctx: &RunContext, refusal: Refusal) {
        self.settle(ctx, Some(Outcome::Refused(refusal)));
    }

    /// The one place an attempt's result and end are decided (`None`: stopped).
    pub fn settle(mut self, ctx: &RunContext, outcome: Option<Outcome>) {
        let outcome = ctx.stopping.attribute(outcome);
        let r = &mut self.receipt;
        match outcome {
            Some(Outcome::Refused(refusal)) => r.result = NetworkReceipt::result_for(Some(refusal)),
            Some(Outcome::Relayed(end)) => r.end = Some(end),
            None if r.result == "allowed" && self.connected => r.end = Some(StreamEnd::Cancelled),
            None => r.result = NetworkReceipt::result_for(Some(Refusal::Cancelled)),
        }
        if r.end.is_some() {
            r.bytes_from_client = self.delivered.from_client.load(Ordering::Relaxed);
            r.bytes_to_client = self.delivered.to_client.load(Ordering::Relaxed);
        }
        r.duration_ms = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        ctx.receipts.push(self.receipt, self.connected);
    }
}

/// Runs an attempt's work against the run's cancellation: `None` when the
/// stop came first (the work is dropped, and with it every await it was in).
pub async fn until_cancelled<T>(ctx: &RunContext, work: impl Future<Output = T>) -> Option<T> {
    tokio::select! {
        biased;
        _ = ctx.cancel.cancelled() => None,
        outcome = work => Some(outcome),
    }
}

/// An admitted, connected upstream.
pub struct Connected {
    pub admitted: Admitted,
    pub upstream: TcpStream,
}

/// Admission, then a TCP connect to each admissible address in turn with
/// the run's deadline; the stream is pinned to the one that answers.
pub async fn admit_and_connect(
    ctx: &Arc<RunContext>,
    attempt: &mut Attempt,
    host: &str,
    port: u16,
) -> Result<Connected, Refusal> {
    attempt.receipt.record_host(host);
    attempt.receipt.port = Some(port);
    let destination = ctx.allowlist.matched(host, port)?.clone();
    attempt.receipt.record_host(&destination.host.as_text());
    let candidates = match &destination.host {
        Host::Ipv4(ip) => vec![IpAddr::V4(*ip)],
        Host::Name(name) => resolve(ctx, name.clone(), port).await?,
    };
    let mut admitted = pin(&destination, candidates)?;
    let mut failure = Refusal::ConnectFailed;
    let mut connected = None;
    for ip in admitted.candidates.clone() {
        match crate::connect::connect(SocketAddr::new(ip, port), ctx.connect_timeout).await {
            Ok(stream) => {
                admitted.pinned = ip;
                connected = Some(stream);
                break;
            }
            Err(ConnectError::TimedOut) => failure = Refusal::ConnectTimeout,
            // The kernel gave up (SYN retries spent) before our deadline.
            Err(ConnectError::Failed(e)) if e.kind() == std::io::ErrorKind::TimedOut => {
                failure = Refusal::ConnectTimeout
            }
            Err(ConnectError::Failed(_)) => {}
        }
    }
    attempt.receipt.pinned_address = Some(admitted.pinned.to_string());
    // TCP_NODELAY was set before the connect (connect.rs).
    let upstream = connected.ok_or(failure)?;
    attempt.connected = true;
    Ok(Connected { admitted, upstream })
}

/// Lookups of one run in flight at once: each holds a blocking-pool thread
/// for as long as the host's resolver takes, so a sandbox opening many
/// streams to a slow name costs the provider at most this many threads.
pub const MAX_CONCURRENT_RESOLVES: usize = 4;

/// The host's resolver blocks (getaddrinfo): it runs on a blocking thread,
/// at most [`MAX_CONCURRENT_RESOLVES`] per run, and the attempt's task
/// awaits it (a stop drops the wait; the lookup ends on its own and its
/// answer is discarded).
async fn resolve(ctx: &Arc<RunContext>, name: String, port: u16) -> Result<Vec<IpAddr>, Refusal> {
    let _permit = ctx
        .resolving
        .acquire()
        .await
        .map_err(|_| Refusal::ResolveFailed)?;
    let resolver = Arc::clone(&ctx.resolver);
    tokio::task::spawn_blocking(move || resolver.resolve(&name, port))
        .await
        .map_err(|_| Refusal::ResolveFailed)?
        .map_err(|_| Refusal::ResolveFailed)
}

/// With `requireTlsSni`, reads the client's first bytes until the
/// ClientHello's SNI is known and compares it with the allowed name — before
/// any byte goes upstream. Returns the bytes read, to be forwarded first.
async fn verify_sni(
    ctx: &RunContext,
    attempt: &mut Attempt,
    admitted: &Admitted,
    client: &ClientStream,
    mut prefix: Vec<u8>,
) -> Result<Vec<u8>, Refusal> {
    if !admitted.destination.require_tls_sni {
        return Ok(prefix);
    }
    let Host::Name(expected) = &admitted.destination.host else {
        return Err(Refusal::SniAbsent); // unreachable by validation: literals cannot require SNI
    };
    let deadline = tokio::time::Instant::now() + ctx.handshake_timeout;
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
        let room = MAX_CLIENT_HELLO_BYTES - prefix.len();
        let read = crate::client_io::read_more(client, &mut prefix, room);
        match tokio::time::timeout_at(deadline, read).await {
            Ok(Ok(())) => {}
            _ => return Err(Refusal::SniAbsent),
        }
    }
}

/// SNI check (if required) and relay: the tail every admitted stream shares.
pub async fn run_admitted(
    ctx: &RunContext,
    attempt: &mut Attempt,
    connected: Connected,
    client: ClientStream,
    prefix: Vec<u8>,
) -> Outcome {
    let prefill = match verify_sni(ctx, attempt, &connected.admitted, &client, prefix).await {
        Ok(bytes) => bytes,
        Err(refusal) => return Outcome::Refused(refusal),
    };
    let end = relay(
        &client,
        &connected.upstream,
        &prefill,
        &ctx.quota,
        &attempt.delivered,
    )
    .await;
    Outcome::Relayed(end)
}
