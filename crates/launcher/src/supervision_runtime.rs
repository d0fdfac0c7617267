//! The one tokio runtime that supervises every run of the process: it waits
//! for each bwrap's exit on its pidfd (`AsyncFd`), runs the stop ladder's
//! and the deadline's timers, and hands blocking work (joining the cgroup,
//! reading bwrap's info fd, observing, teardown) to its blocking pool.
//!
//! Why this shape: a run spends almost all its life waiting — for bwrap to
//! exit, for a grace window to pass — and a thread per wait (a supervisor
//! thread per run, a `cordon-stop` thread per stop) cost 1–2 threads per run
//! for nothing. The three pump threads stay: they move the bytes with
//! blocking reads/writes and credits (docs/architecture.md).
//!
//! Built lazily on the first launch; [`WORKER_THREADS`] named workers,
//! never shut down (a static is not dropped at exit). bwrap is forked on a
//! worker: bwrap's parent-death signal is tied to the thread that forked it,
//! and workers live as long as the process (blocking-pool threads do not:
//! they exit when idle, so nothing is ever forked there).

use std::sync::OnceLock;
use std::time::Duration;

use tokio::runtime::{Builder, Runtime};

/// Workers of the supervision runtime: the waits and timers are cheap, two
/// keep one slow fork from delaying every other run's timers.
pub const WORKER_THREADS: usize = 2;
/// How long an idle blocking-pool thread is kept. The pool is used in
/// bursts (a run's set-up, its teardown, a forced rung's cgroup kill): a
/// thread is cheap to start next to a bwrap fork, and tokio's default
/// (10 s) would keep one idle thread per recent concurrent run.
pub const BLOCKING_KEEP_ALIVE: Duration = Duration::from_secs(1);

static RUNTIME: OnceLock<Result<Runtime, String>> = OnceLock::new();

/// The process-wide runtime, built on first use. `Err` (why) only when the
/// threads could not be created; the build is not retried.
pub fn get() -> Result<&'static Runtime, std::io::Error> {
    RUNTIME
        .get_or_init(|| {
            Builder::new_multi_thread()
                .worker_threads(WORKER_THREADS)
                .thread_name("cordon-supervision")
                .thread_keep_alive(BLOCKING_KEEP_ALIVE)
                .enable_io()
                .enable_time()
                .build()
                .map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|why| std::io::Error::other(format!("start the supervision runtime: {why}")))
}
