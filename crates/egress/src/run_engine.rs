//! One run's engine: a listener on a Unix socket in the run's control root
//! (bound into the sandbox for the in-sandbox relay) and, optionally, the
//! engine end of the run's fd-4 channel (a seqpacket pair: fd4_channel.rs) — served by tasks on the
//! runtime the caller hands in (the launcher gives a shard of
//! `engine_runtime`), never by threads of its own.
//!
//! Lifecycle: `start` binds the socket (mode 0600) and spawns the accept
//! task and the fd-4 task; each accepted connection or admitted fd-4 stream
//! is one more task. `finish` (or drop) cancels — every task races each of
//! its awaits against that cancellation, so each ends at its next wake-up —
//! waits (bounded) for the last task to end, removes the socket and returns
//! the receipts. Nothing of a run's engine is reachable from another run:
//! each listener is a socket file in its own run's 0700 control root.

use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::unix::AsyncFd;
use tokio::net::UnixListener;

use crate::admission::Allowlist;
use crate::cancel::{Alive, Cancel, Tasks};
use crate::network_receipt::{Frontend, NetworkReceipt, StreamProtocol};
use crate::proxy_session;
use crate::quota::{QuotaState, Quotas};
use crate::receipt_log::ReceiptLog;
use crate::refusal::Refusal;
use crate::resolver::Resolve;
use crate::sandbox_socket::{SandboxListener, SandboxStream};
use crate::stream_attempt::{Attempt, RunContext, MAX_CONCURRENT_RESOLVES};

/// Default upstream connect deadline (the 5 s).
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a client may take to send its proxy request or ClientHello.
pub const DEFAULT_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// Pause after a failed accept (EMFILE and friends): the listener stays
/// readable while the queue holds a connection, so retrying at once would spin.
pub(crate) const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

pub struct RunEngineConfig {
    /// Where to bind the run's proxy socket (inside the run's control root).
    pub socket_path: PathBuf,
    /// The engine end of the fd-4 datagram pair, when that frontend is on.
    pub fd4_channel: Option<OwnedFd>,
    /// The sandbox's proxy port, when the relay hands its listener over:
    /// the first connection to the engine socket must carry it
    /// (proxy_listener.rs), and the engine accepts on it from then on.
    pub proxy_port: Option<u16>,
    pub allowlist: Allowlist,
    pub quotas: Quotas,
    pub policy_digest: String,
    pub invocation_id: String,
    pub resolver: Arc<dyn Resolve>,
    pub connect_timeout: Duration,
    pub handshake_timeout: Duration,
    /// How long `finish` waits for the run's tasks after cancelling them.
    /// Each ends at its next poll, so this is only reached when the
    /// runtime's threads are all held elsewhere; the receipts of tasks
    /// still running then are missing, and nothing else of the run is held.
    /// The launcher derives it from the run's stop ladder (its forced rung),
    /// so a stopped run settles within the ladder's bound.
    pub teardown_bound: Duration,
    /// The shard whose thread runs the engine's tasks (needs IO and time);
    /// held by the engine, so the shard counts the run until it ends.
    pub runtime: crate::engine_runtime::Shard,
}

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("cannot bind the egress engine socket {path}: {source}")]
    Bind { path: PathBuf, source: io::Error },
    #[error("cannot restrict the egress engine socket {path} to its owner: {source}")]
    Chmod { path: PathBuf, source: io::Error },
    #[error("cannot register the egress engine's sockets with the runtime: {0}")]
    Register(#[source] io::Error),
}

/// Receipts of a finished run, in attempt order.
#[derive(Debug, Default, Clone)]
pub struct NetworkReceipts {
    /// Every attempt that reached an upstream, and refusals up to the cap.
    pub receipts: Vec<NetworkReceipt>,
    /// Refusals past the per-run cap (counted, not stored).
    pub dropped: u64,
    /// The time the run's tasks spent being polled on the engine's threads.
    pub engine_busy: Duration,
}

pub struct RunEngine {
    ctx: Arc<RunContext>,
    socket_path: PathBuf,
    finished: Option<NetworkReceipts>,
    /// A copy of the sandbox's end of the fd-4 channel (see `hold_fd4_peer`),
    /// shared with the task serving it (fd4_channel.rs).
    fd4_peer: crate::fd4_channel::PeerCopy,
    /// The run's place on its shard, given up when it finishes.
    shard: Option<crate::engine_runtime::Shard>,
}

impl RunEngine {
    /// Binds the run's socket and starts serving (steps in the module doc).
    pub fn start(config: RunEngineConfig) -> Result<Self, EngineError> {
        let listener = bind_private(&config.socket_path)?;
        let ctx = Arc::new(RunContext {
            allowlist: config.allowlist,
            resolver: config.resolver,
            quota: Arc::new(QuotaState::new(config.quotas)),
            policy_digest: config.policy_digest,
            invocation_id: config.invocation_id,
            connect_timeout: config.connect_timeout,
            handshake_timeout: config.handshake_timeout,
            teardown_bound: config.teardown_bound,
            cancel: Cancel::default(),
            stopping: crate::stop_latch::StopLatch::default(),
            tasks: Tasks::new(),
            resolving: tokio::sync::Semaphore::new(MAX_CONCURRENT_RESOLVES),
            receipts: ReceiptLog::default(),
            busy: Arc::default(),
        });
        let proxy_port = config.proxy_port;
        let mut engine = Self {
            ctx: Arc::clone(&ctx),
            socket_path: config.socket_path,
            finished: None,
            fd4_peer: Arc::default(),
            shard: None,
        };
        // Registering with the reactor needs the runtime's context.
        let _entered = config.runtime.enter();
        let listener = UnixListener::from_std(listener).map_err(EngineError::Register)?;
        if proxy_port.is_none() {
            // No listener to take: none of its connections may pass one,
            // from before the sandbox exists.
            refuse_descriptors_from_now_on(&listener);
        }
        let channel = config
            .fd4_channel
            .map(|fd| {
                if !crate::fd4_channel::is_channel(&fd) {
                    // A datagram channel could reach host abstract sockets (R15w-6).
                    return Err(io::Error::other(
                        "the fd-4 channel is not a seqpacket socket",
                    ));
                }
                nix::fcntl::fcntl(
                    &fd,
                    nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::O_NONBLOCK),
                )?;
                // SAFETY: the AsyncFd owns this OwnedFd and neither closes
                // nor replaces it while registered; `SandboxChannel` takes
                // it back out (`into_inner`, deregistering) before its close.
                unsafe { AsyncFd::register(fd) }.map_err(io::Error::from)
            })
            .transpose()
            .map_err(EngineError::Register)?;
        let guard = || {
            ctx.tasks
                .guard()
                .ok_or_else(|| EngineError::Register(io::Error::other("the engine has ended")))
        };
        let alive = guard()?;
        config
            .runtime
            .spawn(ctx.timed(accept_loop(Arc::clone(&ctx), listener, proxy_port, alive)));
        if let Some(channel) = channel {
            let alive = guard()?;
            config.runtime.spawn(ctx.timed(crate::fd4_server::serve(
                Arc::clone(&ctx),
                channel,
                Arc::clone(&engine.fd4_peer),
                alive,
            )));
        }
        engine.shard = Some(config.runtime);
        Ok(engine)
    }

    /// The socket the in-sandbox relay connects to.
    pub fn socket_path(&self) -> &Path {
        &self.socket_path
    }

    /// Keeps `peer`, a copy of the sandbox's end of the fd-4 channel, open
    /// until `finish`. Why: a send on a datagram or seqpacket socket whose
    /// peer is gone purges the SENDER's receive queue in the sending thread (the kernel's
    /// `unix_dgram_disconnected`), so a reply sent after the program exited
    /// would drop the descriptors it left queued on a runtime worker
    /// (round 5, R5N-1). While this copy is open the peer is never gone.
    /// The copy also tells the channel's real end (`unreceived`: fd4_channel.rs,
    /// round 16n).
    pub fn hold_fd4_peer(&mut self, peer: OwnedFd) {
        if let Ok(mut copy) = self.fd4_peer.lock() {
            *copy = Some(peer);
        }
    }

    /// The latch the run's stop ladder sets before it signals the sandbox:
    /// from then on a stream that ends is recorded `cancelled` (stop_latch.rs).
    pub fn stop_latch(&self) -> crate::stop_latch::StopLatch {
        self.ctx.stopping.clone()
    }

    /// Streams open right now (for tests and observation).
    pub fn open_streams(&self) -> u64 {
        self.ctx.quota.open_streams()
    }

    /// Cancels every task, waits (at most the configured teardown bound) for them to
    /// end, removes the socket and returns the receipts. Idempotent. Blocks
    /// the calling thread: call it off the runtime's workers.
    pub fn finish(&mut self) -> NetworkReceipts {
        if let Some(done) = &self.finished {
            return done.clone();
        }
        self.ctx.cancel.cancel();
        self.ctx.tasks.wait_all(self.ctx.teardown_bound);
        // The serving task drained the channel with this copy before it ended.
        let peer = self.fd4_peer.lock().ok().and_then(|mut copy| copy.take());
        if let Some(peer) = peer {
            // The replies it holds carry stream ends. Only the engine's end
            // queues there, and no reply is empty, so a 0 read is the end.
            cordon_passed_fds::drain_own_records_and_close(peer);
        }
        let _ = std::fs::remove_file(&self.socket_path);
        let (receipts, dropped) = self.ctx.receipts.take();
        let done = NetworkReceipts {
            receipts,
            dropped,
            engine_busy: self.ctx.busy.total(),
        };
        self.shard = None; // the shard no longer counts the run
        self.finished = Some(done.clone());
        done
    }
}

impl Drop for RunEngine {
    fn drop(&mut self) {
        self.finish();
    }
}

/// Binds a Unix socket only its owner may connect to (the control root is
/// 0700 already; the mode is a second lock).
fn bind_private(path: &Path) -> Result<std::os::unix::net::UnixListener, EngineError> {
    let bind_error = |source| EngineError::Bind {
        path: path.to_owned(),
        source,
    };
    let listener = std::os::unix::net::UnixListener::bind(path).map_err(bind_error)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(|source| {
        EngineError::Chmod {
            path: path.to_owned(),
            source,
        }
    })?;
    listener.set_nonblocking(true).map_err(bind_error)?;
    Ok(listener)
}

/// The relay's connection is the first the engine socket ever gets (the
/// relay sends before it execs the program): it is served before any other.
/// Once it is accepted, the listener refuses passed descriptors on every
/// later connection ([`refuse_descriptors_from_now_on`]).
async fn take_proxy_listener(ctx: &Arc<RunContext>, listener: &UnixListener, port: u16) {
    let accepted = tokio::select! {
        biased;
        _ = ctx.cancel.cancelled() => return,
        accepted = listener.accept() => accepted,
    };
    refuse_descriptors_from_now_on(listener);
    let Ok((relay, _)) = accepted else { return };
    let relay = SandboxStream::new(relay);
    let Some(proxy) = crate::proxy_listener::receive(ctx, relay, port).await else {
        return;
    };
    if let Some(alive) = ctx.tasks.guard() {
        tokio::spawn(ctx.timed(crate::proxy_listener::serve(Arc::clone(ctx), proxy, alive)));
    }
}

/// Turns passed descriptors away at the sender on every connection made to
/// the engine socket from now on (`SO_PASSRIGHTS` off on the listener,
/// inherited at connect: Linux 6.16+). Only the relay's listener needs to
/// pass one, on the first connection, made before the program exists; a
/// program's `sendmsg` with `SCM_RIGHTS` then fails with `EPERM`. Before,
/// whatever the program passed was received into the provider's table and
/// closed there: with a file carrying tens of thousands of POSIX locks each
/// close walks them all, the closer fell behind and one run filled the
/// provider's table (white-box round of 2026-12-06, W26-1); a pipe whose
/// lock a sandbox thread held in `splice` kept the closing thread in
/// `pipe_release` (W26-2). Older kernels still take them, and neutralise
/// them (cordon-passed-fds).
fn refuse_descriptors_from_now_on(listener: &UnixListener) {
    let _ = cordon_passed_fds::refuse_passed_descriptors(std::os::fd::AsFd::as_fd(listener));
}

async fn accept_loop(
    ctx: Arc<RunContext>,
    listener: UnixListener,
    proxy_port: Option<u16>,
    _alive: Alive,
) {
    let listener = SandboxListener(listener); // drains its backlog when this task ends
    if let Some(port) = proxy_port {
        take_proxy_listener(&ctx, &listener.0, port).await;
    }
    loop {
        let accepted = tokio::select! {
            biased;
            _ = ctx.cancel.cancelled() => return,
            accepted = listener.0.accept() => accepted,
        };
        let client = match accepted {
            Ok((client, _)) => SandboxStream::new(client), // drained on every close
            Err(_) => {
                tokio::select! {
                    _ = ctx.cancel.cancelled() => return,
                    _ = tokio::time::sleep(ACCEPT_BACKOFF) => continue,
                }
            }
        };
        // The slot is taken at accept, so handshakes in progress are bounded too.
        let slot = match ctx.quota.open_stream() {
            Ok(slot) => slot,
            Err(refusal) => {
                Attempt::begin(&ctx, Frontend::Proxy, StreamProtocol::Unknown)
                    .refuse(&ctx, refusal);
                // Closed now, not when its first message comes (it may
                // never come): a refused connection holds nothing of the
                // provider, so the slots bound the connections held (R11-8:
                // each refused one was held up to the handshake deadline,
                // and idle ones then piled up to `networkStreams`). The
                // close drains its queue: a descriptor sent on it (a kernel
                // before 6.16, which cannot refuse them) is neutralised.
                crate::client_stream::release_connection(client);
                if refusal == Refusal::QuotaStreams {
                    // Spent for good: stop listening, so later connects are
                    // refused by the kernel at no cost to the provider.
                    return;
                }
                continue;
            }
        };
        let Some(alive) = ctx.tasks.guard() else {
            return;
        };
        let session_ctx = Arc::clone(&ctx);
        tokio::spawn(ctx.timed(async move {
            let _held = (slot, alive);
            proxy_session::serve(session_ctx, proxy_session::Source::Connection(client)).await;
        }));
    }
}
