//! One run's engine: a listener on a Unix socket in the run's control root
//! (bound into the sandbox for the in-sandbox relay) and, optionally, the
//! engine end of the run's fd-4 datagram channel.
//!
//! Lifecycle: `start` binds the socket (mode 0600) and starts the accept and
//! fd-4 threads; `finish` (or drop) cancels — which wakes every wait and
//! closes every open stream — joins every thread, removes the socket and
//! returns the receipts. Nothing of a run's engine is reachable from another
//! run: each listener is a socket file in its own run's 0700 control root.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixDatagram, UnixListener};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::admission::Allowlist;
use crate::cancel::{Canceller, Wake};
use crate::network_receipt::{Frontend, NetworkReceipt, StreamProtocol};
use crate::proxy_session;
use crate::quota::{QuotaState, Quotas};
use crate::resolver::Resolve;
use crate::stream_attempt::{Attempt, ReceiptLog, RunContext};
use crate::thread_set::ThreadSet;

/// Default upstream connect deadline (the 5 s).
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a client may take to send its proxy request or ClientHello.
pub const DEFAULT_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

pub struct RunEngineConfig {
    /// Where to bind the run's proxy socket (inside the run's control root).
    pub socket_path: PathBuf,
    /// The engine end of the fd-4 datagram pair, when that frontend is on.
    pub fd4_channel: Option<OwnedFd>,
    pub allowlist: Allowlist,
    pub quotas: Quotas,
    pub policy_digest: String,
    pub invocation_id: String,
    pub resolver: Arc<dyn Resolve>,
    pub connect_timeout: Duration,
    pub handshake_timeout: Duration,
}

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("cannot create the egress engine's cancel pipe: {0}")]
    CancelPipe(#[source] io::Error),
    #[error("cannot bind the egress engine socket {path}: {source}")]
    Bind { path: PathBuf, source: io::Error },
    #[error("cannot restrict the egress engine socket {path} to its owner: {source}")]
    Chmod { path: PathBuf, source: io::Error },
    #[error("cannot start an egress engine thread: {0}")]
    Thread(#[source] io::Error),
}

/// Receipts of a finished run, in attempt order.
#[derive(Debug, Default, Clone)]
pub struct NetworkReceipts {
    pub receipts: Vec<NetworkReceipt>,
    /// Attempts past the per-run receipt cap (counted, not stored).
    pub dropped: u64,
}

pub struct RunEngine {
    ctx: Arc<RunContext>,
    canceller: Canceller,
    threads: Arc<ThreadSet>,
    socket_path: PathBuf,
    finished: Option<NetworkReceipts>,
}

impl RunEngine {
    /// Binds the run's socket and starts serving (steps in the module doc).
    pub fn start(config: RunEngineConfig) -> Result<Self, EngineError> {
        let canceller = Canceller::new().map_err(EngineError::CancelPipe)?;
        let listener = bind_private(&config.socket_path)?;
        let ctx = Arc::new(RunContext {
            allowlist: config.allowlist,
            resolver: config.resolver,
            quota: Arc::new(QuotaState::new(config.quotas)),
            policy_digest: config.policy_digest,
            invocation_id: config.invocation_id,
            connect_timeout: config.connect_timeout,
            handshake_timeout: config.handshake_timeout,
            cancel: canceller.watch(),
            receipts: ReceiptLog::default(),
        });
        let threads = Arc::new(ThreadSet::default());
        let engine = Self {
            ctx: Arc::clone(&ctx),
            canceller,
            threads: Arc::clone(&threads),
            socket_path: config.socket_path,
            finished: None,
        };
        let (accept_ctx, accept_threads) = (Arc::clone(&ctx), Arc::clone(&threads));
        spawn_or_fail(&threads, move || {
            accept_loop(&accept_ctx, &listener, &accept_threads)
        })?;
        if let Some(fd) = config.fd4_channel {
            let channel = UnixDatagram::from(fd);
            let (fd4_ctx, fd4_threads) = (Arc::clone(&ctx), Arc::clone(&threads));
            spawn_or_fail(&threads, move || {
                crate::fd4_server::serve(&fd4_ctx, &channel, &fd4_threads)
            })?;
        }
        Ok(engine)
    }

    /// The socket the in-sandbox relay connects to.
    pub fn socket_path(&self) -> &Path {
        &self.socket_path
    }

    /// Streams open right now (for tests and observation).
    pub fn open_streams(&self) -> u64 {
        self.ctx.quota.open_streams()
    }

    /// Cancels every wait and stream, joins every thread, removes the socket
    /// and returns the receipts. Idempotent.
    pub fn finish(&mut self) -> NetworkReceipts {
        if let Some(done) = &self.finished {
            return done.clone();
        }
        self.canceller.cancel();
        // Session threads are added by the accept and fd-4 threads; joining
        // twice catches any added while the first join ran.
        self.threads.join_all();
        self.threads.join_all();
        let _ = std::fs::remove_file(&self.socket_path);
        let (receipts, dropped) = self.ctx.receipts.take();
        let done = NetworkReceipts { receipts, dropped };
        self.finished = Some(done.clone());
        done
    }
}

impl Drop for RunEngine {
    fn drop(&mut self) {
        self.finish();
    }
}

fn spawn_or_fail(
    threads: &ThreadSet,
    work: impl FnOnce() + Send + 'static,
) -> Result<(), EngineError> {
    if threads.spawn(work) {
        Ok(())
    } else {
        Err(EngineError::Thread(io::Error::other(
            "thread spawn refused",
        )))
    }
}

/// Binds a Unix socket only its owner may connect to (the control root is
/// 0700 already; the mode is a second lock).
fn bind_private(path: &Path) -> Result<UnixListener, EngineError> {
    let listener = UnixListener::bind(path).map_err(|source| EngineError::Bind {
        path: path.to_owned(),
        source,
    })?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(|source| {
        EngineError::Chmod {
            path: path.to_owned(),
            source,
        }
    })?;
    listener
        .set_nonblocking(true)
        .map_err(|source| EngineError::Bind {
            path: path.to_owned(),
            source,
        })?;
    Ok(listener)
}

fn accept_loop(ctx: &Arc<RunContext>, listener: &UnixListener, threads: &ThreadSet) {
    loop {
        match ctx.cancel.readable(listener.as_fd(), None) {
            Ok(Wake::Ready) => {}
            _ => return,
        }
        let client = match listener.accept() {
            Ok((client, _)) => client,
            Err(e)
                if e.kind() == io::ErrorKind::WouldBlock
                    || e.kind() == io::ErrorKind::Interrupted =>
            {
                continue
            }
            Err(_) => continue, // EMFILE and friends: the client sees a reset; keep serving
        };
        if client.set_nonblocking(false).is_err() {
            continue;
        }
        // The slot is taken at accept, so the handshake threads are bounded too.
        let slot = match ctx.quota.open_stream() {
            Ok(slot) => slot,
            Err(refusal) => {
                Attempt::begin(ctx, Frontend::Proxy, StreamProtocol::Unknown).refuse(ctx, refusal);
                continue;
            }
        };
        let session_ctx = Arc::clone(ctx);
        threads.spawn(move || {
            let _slot = slot;
            proxy_session::serve(&session_ctx, client);
        });
    }
}
