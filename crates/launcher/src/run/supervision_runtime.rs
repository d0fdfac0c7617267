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
//! never shut down (a static is not dropped at exit). bwrap is forked on
//! neither the workers nor the blocking pool but on one thread of its own,
//! `cordon-fork` ([`on_fork_thread`]): bwrap's parent-death signal is tied
//! to the thread that forked it, so that thread must live as long as the
//! process (blocking-pool threads exit when idle), and a fork blocks its
//! thread until bwrap has exec'd, which on a worker stalled the timers and
//! pidfd waits of every run that worker carried.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
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

/// Runs `f` on the runtime's blocking pool; where no thread can be started
/// for it, on the calling worker instead. `None` only if `f` panicked.
///
/// Why: tokio's `spawn_blocking` panics when the pool has no thread and the
/// OS refuses a new one (a provider at its thread limit, `RLIMIT_NPROC`).
/// The steps handed here are ones a run cannot skip — its set-up, its
/// teardown and receipt, the forced rung's cgroup kill — so where no
/// thread is to be had they hold a worker for their (bounded) time rather
/// than not happen. The panic is caught; its message still goes to stderr
/// through the process's panic hook.
pub async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    // Shared, not moved into the task: a spawn that fails keeps the task
    // queued (tokio pushes before it starts a thread), and `f` must run once.
    let job = Arc::new(Mutex::new(Some(f)));
    let theirs = Arc::clone(&job);
    let queued = catch_unwind(AssertUnwindSafe(|| {
        tokio::task::spawn_blocking(move || take(&theirs).map(|f| f()))
    }));
    match queued {
        Ok(handle) => handle.await.ok().flatten(),
        Err(_) => {
            let f = take(&job)?;
            catch_unwind(AssertUnwindSafe(f)).ok()
        }
    }
}

/// The job, if nobody has taken it yet.
fn take<F>(job: &Mutex<Option<F>>) -> Option<F> {
    job.lock().unwrap_or_else(PoisonError::into_inner).take()
}

/// One fork, run on the fork thread.
type ForkJob = Box<dyn FnOnce() + Send>;

static FORK_THREAD: OnceLock<Result<mpsc::Sender<ForkJob>, String>> = OnceLock::new();

/// Runs `fork` on the `cordon-fork` thread (started on first use, never
/// ended) and waits for its result without holding a worker.
pub async fn on_fork_thread<T: Send + 'static>(
    fork: impl FnOnce() -> T + Send + 'static,
) -> Result<T, std::io::Error> {
    let jobs = FORK_THREAD
        .get_or_init(start_fork_thread)
        .as_ref()
        .map_err(|why| std::io::Error::other(format!("start the fork thread: {why}")))?;
    let (done, result) = tokio::sync::oneshot::channel();
    let job: ForkJob = Box::new(move || {
        let _ = done.send(fork());
    });
    jobs.send(job)
        .map_err(|_| std::io::Error::other("the fork thread is gone"))?;
    result
        .await
        .map_err(|_| std::io::Error::other("the fork panicked"))
}

/// The thread's loop. A panicking job is caught: the thread must outlive
/// every bwrap it forked, or their parent-death signal kills them all.
fn start_fork_thread() -> Result<mpsc::Sender<ForkJob>, String> {
    let (jobs, queue) = mpsc::channel::<ForkJob>();
    std::thread::Builder::new()
        .name("cordon-fork".into())
        .spawn(move || {
            for job in queue {
                let _ = catch_unwind(AssertUnwindSafe(job));
            }
        })
        .map_err(|e| e.to_string())?;
    Ok(jobs)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn thread_name() -> (Option<String>, std::thread::ThreadId) {
        let current = std::thread::current();
        (current.name().map(str::to_owned), current.id())
    }

    /// Makes every new thread of this process fail to start with `EAGAIN`
    /// (as at a thread limit): `clone3` is refused with `ENOSYS` so glibc
    /// falls back to `clone`, and `clone` with `CLONE_THREAD` gets `EAGAIN`.
    fn refuse_new_threads() {
        use seccompiler::{
            BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition,
            SeccompFilter, SeccompRule,
        };
        let arch = std::env::consts::ARCH.try_into().unwrap();
        let thread = libc::CLONE_THREAD as u64;
        let is_thread = SeccompRule::new(vec![SeccompCondition::new(
            0,
            SeccompCmpArgLen::Qword,
            SeccompCmpOp::MaskedEq(thread),
            thread,
        )
        .unwrap()])
        .unwrap();
        let filters = [
            (libc::SYS_clone3, vec![], libc::ENOSYS),
            (libc::SYS_clone, vec![is_thread], libc::EAGAIN),
        ];
        for (syscall, rules, errno) in filters {
            let filter = SeccompFilter::new(
                [(syscall, rules)].into_iter().collect(),
                SeccompAction::Allow,
                SeccompAction::Errno(errno as u32),
                arch,
            )
            .unwrap();
            let program: BpfProgram = filter.try_into().unwrap();
            seccompiler::apply_filter_all_threads(&program).unwrap();
        }
    }

    #[test]
    fn a_blocking_step_runs_on_the_worker_when_no_thread_can_start() {
        if std::env::var_os("CORDON_TEST_NO_THREADS").is_none() {
            crate::live_support::run_inner_test(
                "run::supervision_runtime::tests::a_blocking_step_runs_on_the_worker_when_no_thread_can_start",
                "CORDON_TEST_NO_THREADS",
            );
            return;
        }
        // A runtime of its own, whose blocking pool has no thread yet.
        let runtime = Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(tokio::task::yield_now());
        refuse_new_threads();
        assert!(
            std::thread::Builder::new().spawn(|| ()).is_err(),
            "control: no thread can start"
        );
        // tokio's own spawn_blocking panics here ("OS can't spawn worker
        // thread"); the step still runs, once, on the calling thread.
        let ran = runtime.block_on(blocking(thread_name));
        assert_eq!(ran.map(|(_, id)| id), Some(std::thread::current().id()));
        assert_eq!(runtime.block_on(blocking(|| 7)), Some(7), "and again");
    }

    #[test]
    fn forks_run_on_one_long_lived_thread_that_outlives_a_panicking_job() {
        let runtime = get().unwrap();
        let (first, second) = runtime.block_on(async {
            let first = on_fork_thread(thread_name).await.unwrap();
            let panicked = on_fork_thread(|| panic!("test: a fork that panics")).await;
            assert!(panicked.is_err(), "the panic is reported to the caller");
            (first, on_fork_thread(thread_name).await.unwrap())
        });
        assert_eq!(first.0.as_deref(), Some("cordon-fork"));
        assert_eq!(first.1, second.1, "the same thread, alive after the panic");
    }
}
