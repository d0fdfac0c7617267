//! `cordon host --config FILE`: the sandbox host of remote providers
//! (docs/remote.md). Steps:
//! 1. read and validate the configuration (plain TCP refused);
//! 2. prepare `stateDir` (workspaces/, receipts/, runs/), receipts past
//!    their retention removed (then every `receipts.pruneIntervalSeconds`);
//! 3. open `logFile` and take SIGHUP to reopen it (logrotate), before the
//!    listener exists: a SIGHUP never kills a host that serves;
//! 4. place the listener (unix_listener.rs: never reachable half set up);
//! 5. accept → transport check → `session::serve` per connection;
//! 6. on SIGTERM/SIGINT: stop accepting, remove the socket, stop every
//!    sandbox through its ladder (reason `signal`), wait for the sessions
//!    (bounded), exit 0.

mod admission;
mod auth;
mod config;
mod config_sections;
#[cfg(test)]
mod config_tests;
mod events;
mod exit_bound;
mod failure_lines;
mod frame;
pub mod handshake_slots;
mod host_signals;
mod kept_receipt;
mod launch_bridge;
mod log_file;
mod log_writer;
mod peer;
mod receipt_index;
mod receipt_retention;
mod receipt_store;
mod recovery;
mod relay;
mod relay_writer;
mod session;
mod session_log;
mod session_tasks;
mod spawn_request;
mod unix_listener;
mod upload;
mod write_stall;
// TLS transport, metrics, receipt signing and probe (rtls).
pub mod metrics;
mod probe;
pub mod signing;
pub mod tls;
pub mod tls_client;
mod tls_listener;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

pub use config::{Config, Listen};
pub use events::{HostEvents, NoEvents};

use crate::exit_status;

pub const SYNOPSIS: &str = "cordon host --config FILE\n       cordon host --probe --config FILE [--ca FILE] [--cert FILE --key FILE] [--token-file FILE] [--server-name NAME]\n";

/// How long a stopping host waits for its sessions' sandboxes to settle.
const SHUTDOWN_BOUND: Duration = Duration::from_secs(30);
/// How long a stopping host lets its sessions end on their own once their
/// sandboxes are stopped (session_tasks.rs), before it ends them.
const SESSIONS_END_GRACE: Duration = Duration::from_secs(1);
/// How long a stopping host waits for its log lines to be written.
const LOG_CLOSE_BOUND: Duration = Duration::from_secs(10);
/// How often suppressed `handshake-failed` lines are summarized.
const FAILURE_SUMMARY_EVERY: Duration = Duration::from_secs(60);
/// Runtime worker threads: sessions are I/O bound; the launcher has its own.
const WORKER_THREADS: usize = 2;

/// What every session shares.
pub struct Host {
    pub config: Config,
    pub admissions: admission::Admissions,
    pub handshakes: Arc<handshake_slots::HandshakeSlots>,
    pub events: Arc<dyn HostEvents>,
    pub workspaces: PathBuf,
    pub receipts: PathBuf,
    /// `stateDir/runs`: a marker per run in progress (recovery.rs).
    pub runs: PathBuf,
    /// The receipt signing key (`signingKey`), if any.
    pub signer: Option<signing::ReceiptSigner>,
    /// `true` until the receipts of the flat layout are moved into the
    /// index (after an upgrade; [`move_flat_receipts`]): queries then read
    /// both (receipt_index.rs).
    pub flat_move: std::sync::atomic::AtomicBool,
    /// The per-session log lines (session_log.rs).
    pub log: Arc<session_log::SessionLog>,
    /// `true` once the host is stopping: every relay stops its sandbox.
    pub shutdown: watch::Sender<bool>,
    /// Every connection's task, ended before the log closes
    /// (session_tasks.rs).
    pub sessions: session_tasks::SessionTasks,
}

fn fail(status: i32, message: &str) -> i32 {
    eprintln!("cordon host: {message}");
    status
}

fn parse_args(args: &[String]) -> Result<PathBuf, String> {
    match args {
        [flag, file] if flag == "--config" => Ok(PathBuf::from(file)),
        [flag] if flag == "--help" || flag == "-h" => Err(String::new()),
        _ => Err(format!("usage: {SYNOPSIS}")),
    }
}

/// Runs the host; returns the exit status (docs/cli.md).
pub fn main(args: &[String]) -> i32 {
    if let Some(("--probe", rest)) = args.split_first().map(|(a, r)| (a.as_str(), r)) {
        return probe::main(rest);
    }
    let path = match parse_args(args) {
        Ok(path) => path,
        Err(usage) if usage.is_empty() => {
            print!("usage: {SYNOPSIS}");
            return 0;
        }
        Err(usage) => return fail(exit_status::USAGE, usage.trim_end()),
    };
    let config = match Config::load(&path) {
        Ok(config) => config,
        Err(e) => return fail(exit_status::HOST_ERROR, &e.to_string()),
    };
    // Before the runtime's threads exist (host_signals.rs).
    if let Err(e) = host_signals::take() {
        return fail(exit_status::HOST_ERROR, &e.to_string());
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(WORKER_THREADS)
        .enable_all()
        .build();
    match runtime {
        Ok(runtime) => runtime.block_on(run(config, Arc::new(NoEvents))),
        Err(e) => fail(exit_status::HOST_ERROR, &format!("start the runtime: {e}")),
    }
}

/// Steps 2–6 with an observer (metrics hooks).
pub async fn run(config: Config, events: Arc<dyn HostEvents>) -> i32 {
    let events = match start_metrics(&config, events).await {
        Ok(events) => events,
        Err(e) => return fail(exit_status::HOST_ERROR, &e),
    };
    let signer = match config
        .signing_key
        .as_deref()
        .map(signing::ReceiptSigner::load)
    {
        None => None,
        Some(Ok(signer)) => Some(signer),
        Some(Err(e)) => return fail(exit_status::HOST_ERROR, &e.to_string()),
    };
    let (state_lock, (workspaces, receipts, runs)) = match prepare_state(&config) {
        Ok(prepared) => prepared,
        Err(e) => return fail(exit_status::HOST_ERROR, &e),
    };
    let bound = session_log::FailureBound {
        burst: config.handshake.failure_log_burst,
        per_minute: config.handshake.failure_log_per_minute,
    };
    let log = match session_log::SessionLog::open(config.log_file.as_deref(), bound) {
        Ok(log) => Arc::new(log),
        Err(e) => return fail(exit_status::HOST_ERROR, &format!("config.logFile: {e}")),
    };
    summarize_failures_periodically(Arc::clone(&log));
    reopen_log_on_hangup(Arc::clone(&log));
    let host = Arc::new(Host {
        log,
        admissions: admission::Admissions::new(config.admission),
        handshakes: Arc::new(handshake_slots::HandshakeSlots::new(
            usize::try_from(config.handshake.max_concurrent).unwrap_or(usize::MAX),
            usize::try_from(config.handshake.per_source).unwrap_or(usize::MAX),
        )),
        events,
        workspaces,
        receipts,
        runs,
        shutdown: watch::Sender::new(false),
        sessions: session_tasks::SessionTasks::default(),
        flat_move: std::sync::atomic::AtomicBool::new(true),
        signer,
        config,
    });
    receipt_retention::start(Arc::from(host.receipts.as_path()), host.config.receipts);
    let socket_path = match host.config.listen.clone() {
        Listen::Unix(path) => path,
        Listen::Tcp(address) => {
            let status = serve_tls(&address, Arc::clone(&host)).await;
            close_log(&host).await;
            drop(state_lock);
            return status;
        }
    };
    // Before the socket exists (stop_signal).
    let stop = stop_signal();
    let placed = match unix_listener::place(&socket_path) {
        Ok(placed) => placed,
        Err(e) => return fail(exit_status::HOST_ERROR, &e.to_string()),
    };
    eprintln!("cordon host: listening on {}", socket_path.display());
    move_flat_receipts(Arc::clone(&host));
    unix_listener::serve(&placed, Arc::clone(&host), stop).await;
    drop(placed);
    let status = shut_down(&host).await;
    close_log(&host).await;
    drop(state_lock);
    status
}

/// After an upgrade, the receipts of the flat layout moved into the index
/// (receipt_index.rs) once the host listens, on the blocking pool: the
/// first start of an upgraded host no longer waits for one rename per
/// receipt kept (7.7 s for 40 000, docs/remote.md § Receipt lookup).
/// Queries read the flat files of their id until it is done.
fn move_flat_receipts(host: Arc<Host>) {
    use std::io::Write;
    use std::sync::atomic::Ordering;
    tokio::task::spawn_blocking(move || {
        let moved = receipt_index::migrate_flat(&host.receipts);
        if moved.is_ok() {
            host.flat_move.store(false, Ordering::Release);
        }
        // Not eprintln!: it panics when stderr is gone.
        let _ = match moved {
            Ok(0) => Ok(()),
            Ok(n) => writeln!(
                std::io::stderr(),
                "cordon host: moved {n} receipt(s) of the flat layout into the index"
            ),
            Err(e) => writeln!(
                std::io::stderr(),
                "cordon host: move the receipts of the flat layout into the index: {e}; queries keep reading them where they are until a restart moves them"
            ),
        };
    });
}

/// The log's queued lines written (bounded), off the runtime's workers.
async fn close_log(host: &Host) {
    let log = Arc::clone(&host.log);
    let _ = tokio::task::spawn_blocking(move || log.close(LOG_CLOSE_BOUND)).await;
}

/// Every [`FAILURE_SUMMARY_EVERY`], the count of `handshake-failed` lines
/// held back (failure_lines.rs), if any: a flood that stops is still said.
fn summarize_failures_periodically(log: Arc<session_log::SessionLog>) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(FAILURE_SUMMARY_EVERY);
        tick.tick().await;
        loop {
            tick.tick().await;
            log.summarize_failures();
        }
    });
}

/// Held for the host's life (recovery.rs).
type StateLock = nix::fcntl::Flock<std::fs::File>;
/// `workspaces/`, `receipts/`, `runs/`.
type StateDirs = (PathBuf, PathBuf, PathBuf);

/// Step 2: `stateDir` locked to this host, its directories made, and what
/// a killed predecessor left accounted for (recovery.rs) — all before
/// anything listens.
fn prepare_state(config: &Config) -> Result<(StateLock, StateDirs), String> {
    let state = &config.state_dir;
    std::fs::create_dir_all(state).map_err(|e| format!("{}: {e}", state.display()))?;
    let lock = recovery::lock_state(state)?;
    let workspaces = upload::workspaces_dir(state).map_err(|e| e.to_string())?;
    let receipts = receipt_store::receipts_dir(state)
        .map_err(|e| format!("{}/receipts: {e}", state.display()))?;
    let runs = recovery::runs_dir(state).map_err(|e| format!("{}/runs: {e}", state.display()))?;
    let swept = recovery::sweep(&workspaces, &receipts, &runs).map_err(|e| {
        format!(
            "{}: recover what a previous host left: {e}",
            state.display()
        )
    })?;
    if swept != recovery::Swept::default() {
        eprintln!(
            "cordon host: recovered {} run(s) a previous host lost (receipts kept, outcome host-lost); removed {} workspace(s), {} unfinished file(s); moved {} receipt(s) of the flat layout into the index (before the lost runs were accounted); {} entr(y/ies) could not be removed",
            swept.lost_runs, swept.workspaces, swept.temp_files, swept.migrated_receipts, swept.left
        );
    }
    // The sandboxes of runs a killed predecessor lost, when it was killed
    // while bwrap set them up (orphan_init.rs): at once, not at this host's
    // first launch.
    let bwrap = config.bwrap_path.as_deref().map(std::path::Path::new);
    if let Ok(bwrap) = cordon_launcher::run::backend::locate(bwrap) {
        let killed = cordon_launcher::host::orphan_init::sweep(&bwrap);
        if killed > 0 {
            eprintln!("cordon host: killed {killed} sandbox(es) whose provider died while bwrap set them up");
        }
    }
    // Before anything listens; later passes run on a blocking thread.
    receipt_retention::report(
        &receipts,
        receipt_retention::prune(&receipts, &config.receipts, std::time::SystemTime::now()),
    );
    Ok((lock, (workspaces, receipts, runs)))
}

/// `metrics` (off without the section): binds its address, serves it, and
/// makes the registry the host's observer.
async fn start_metrics(
    config: &Config,
    events: Arc<dyn HostEvents>,
) -> Result<Arc<dyn HostEvents>, String> {
    let wanted =
        metrics::MetricsConfig::parse(config.metrics.as_ref()).map_err(|e| e.to_string())?;
    let Some(wanted) = wanted else {
        return Ok(events);
    };
    let listener = metrics::bind(wanted).await?;
    let local = listener
        .local_addr()
        .map_err(|e| format!("config.metrics: {e}"))?;
    eprintln!("cordon host: metrics on http://{local}/metrics");
    let registry = Arc::new(metrics::Metrics::default());
    tokio::spawn(metrics::serve(listener, Arc::clone(&registry)));
    Ok(registry)
}

/// `listen.tcp`: the TLS transport (tls_listener.rs), then the same shutdown.
async fn serve_tls(address: &str, host: Arc<Host>) -> i32 {
    let Some(tls) = host.config.tls.clone() else {
        return fail(
            exit_status::HOST_ERROR,
            "config.listen.tcp needs config.tls",
        );
    };
    let tokens = !host.config.tokens.is_empty();
    // Before the port is bound (stop_signal).
    let stop = stop_signal();
    let (listener, transport) = match tls_listener::bind(address, &tls, tokens).await {
        Ok(bound) => bound,
        Err(e) => return fail(exit_status::HOST_ERROR, &e),
    };
    match listener.local_addr() {
        Ok(local) => eprintln!("cordon host: listening on tls://{local}"),
        Err(e) => return fail(exit_status::HOST_ERROR, &format!("bound address: {e}")),
    }
    move_flat_receipts(Arc::clone(&host));
    tls_listener::serve(listener, transport, Arc::clone(&host), stop).await;
    shut_down(&host).await
}

/// Step 6 after the listener stopped: every sandbox stopped, bounded, then
/// every session ended.
async fn shut_down(host: &Host) -> i32 {
    host.shutdown.send_replace(true);
    let drained = tokio::time::timeout(SHUTDOWN_BOUND, async {
        while host.admissions.active() > 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    // Every session's line queued or counted before the log's summary and
    // close (close_log), whatever the drain's outcome.
    host.sessions.end(SESSIONS_END_GRACE).await;
    if drained.is_err() {
        return fail(
            exit_status::HOST_ERROR,
            "sessions still running at shutdown",
        );
    }
    0
}

/// SIGHUP reopens `logFile` (session_log.rs), as logrotate's `postrotate`
/// expects of a daemon; it no longer stops the host (host_signals.rs takes
/// it from the start). A path that cannot be opened safely leaves the lines
/// going to the old file, and says so.
fn reopen_log_on_hangup(log: Arc<session_log::SessionLog>) {
    use std::io::Write;
    let Some(mut hangups) = host_signals::hangups() else {
        return;
    };
    tokio::spawn(async move {
        while hangups.changed().await.is_ok() {
            let log = Arc::clone(&log);
            // File-system work (and a stderr that may block), off the
            // network threads.
            let _ = tokio::task::spawn_blocking(move || {
                let failed = match log.reopen() {
                    Ok(_) => return,
                    Err(e) => e.to_string(),
                };
                // Not eprintln!: it panics when stderr is gone (a closed
                // terminal).
                let _ = writeln!(
                    std::io::stderr(),
                    "cordon host: SIGHUP: reopen config.logFile: {failed}; the log lines still go to the file opened before"
                );
            })
            .await;
        }
    });
}

/// Resolves at SIGTERM or SIGINT, one that came before this call included
/// (host_signals.rs counts them from the start of `main`): a SIGTERM
/// between the socket's creation and its accept loop still stops the host
/// through its shutdown (socket removed, sandboxes stopped through their
/// ladder).
fn stop_signal() -> impl std::future::Future<Output = ()> {
    host_signals::stopped()
}
