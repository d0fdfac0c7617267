//! The runtimes the egress engines of a process's mediated runs share: a few
//! current-thread tokio runtimes ("shards"), each driven by one thread of
//! its own (`cordon-egress`), all started on the first mediated run and
//! never ended. Each run's engine is placed on one shard: the one whose
//! thread was least busy lately (the last 0.25–0.5 s of tokio's busy time),
//! then the one with the fewest live tasks, ties taken in turn. So all of a
//! run's streams share a thread, different runs spread over cores, and a run
//! that keeps a shard busy draws new runs away from it (round 24's B2: one
//! run's 32 ping-ponging tunnels slowed a run placed beside it ~4×). Busy
//! time comes first because it cannot be faked: a run's idle streams make
//! its shard look loaded by tasks, never by time, so they cannot steer new
//! runs onto a shard another run keeps busy. Nothing bounds one run's share
//! of its own shard yet (docs/network.md).
//!
//! Why not the supervision runtime: a multi-thread scheduler wakes a
//! sibling worker whenever its reactor hands out work, so a hop of a
//! proxied stream (a client's byte, the upstream's answer) often woke two
//! threads instead of one. A current-thread runtime runs each task where its
//! reactor woke it: `bench/connect-hops.js` counted 2.9–3.4 engine sleeps
//! per connect against 3.3–4.3 before, and `bench/compare.js --rows connect`
//! 0.83–0.92× the connect + echo time (docs/performance.md). The engine's
//! tasks never block (name lookups and the fd-4 channel's pair maker go to
//! the shard's blocking pool, and `RunEngine::finish` runs on the caller's
//! thread), and the launcher's
//! supervision runtime's timers and pidfd waits no longer share workers
//! with the relay.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tokio::runtime::{Builder, Handle};

/// At most this many shards: one per core up to it. A shard is one thread
/// and three descriptors (its reactor's epoll and waker among them: 6 more
/// in a 2-core provider after its first mediated run); a run's streams are
/// bounded by its quota, so a few cores of relay suffice for a provider.
const MAX_SHARDS: usize = 4;

/// How long an idle lookup thread is kept (as the launcher's supervision
/// runtime keeps its blocking threads): lookups come in bursts.
const BLOCKING_KEEP_ALIVE: std::time::Duration = std::time::Duration::from_secs(1);

/// Busy time is compared over at least this long and at most twice it.
const BUSY_WINDOW: Duration = Duration::from_millis(250);

static SHARDS: Mutex<Vec<Shard>> = Mutex::new(Vec::new());
static NEXT: AtomicUsize = AtomicUsize::new(0);

struct Shard {
    handle: Handle,
    /// (when, busy so far) at the start of the last two windows.
    earlier: (Instant, Duration),
    later: (Instant, Duration),
}

impl Shard {
    fn new(handle: Handle) -> Self {
        let now = (Instant::now(), busy(&handle));
        Shard {
            handle,
            earlier: now,
            later: now,
        }
    }

    /// Per cent of the time since the earlier window's start (counted as at
    /// least one window, so a shard just started is not judged on a few
    /// µs) that the shard's thread spent running tasks. Whole per cent: the
    /// noise of a few placements does not break a tie between idle shards.
    fn recent_busy(&mut self, now: Instant) -> u128 {
        let total = busy(&self.handle);
        if now.duration_since(self.later.0) >= BUSY_WINDOW {
            self.earlier = self.later;
            self.later = (now, total);
        }
        let spent = total.saturating_sub(self.earlier.1).as_micros();
        let elapsed = now.duration_since(self.earlier.0).max(BUSY_WINDOW);
        spent * 100 / elapsed.as_micros()
    }
}

/// The busy time of a current-thread runtime's one worker.
fn busy(handle: &Handle) -> Duration {
    handle.metrics().worker_total_busy_duration(0)
}

/// The shard for the next run's engine: the least busy lately, then the
/// one with the fewest live tasks, ties in turn. Every shard is started on first use
/// (so the process's threads do not grow run by run); one that could not be
/// started (no thread or descriptor to spare at that moment) is tried again
/// at the next call, and the runs meanwhile use the shards there are. `Err`
/// (why) only when there is none.
pub fn get() -> Result<Handle, std::io::Error> {
    let mut shards = SHARDS
        .lock()
        .map_err(|_| std::io::Error::other("the egress runtime's lock is poisoned"))?;
    let wanted = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .clamp(1, MAX_SHARDS);
    let mut failed = None;
    while shards.len() < wanted && failed.is_none() {
        match start_one() {
            Ok(handle) => shards.push(Shard::new(handle)),
            Err(why) => failed = Some(why),
        }
    }
    if shards.is_empty() {
        let why = failed.unwrap_or_default();
        return Err(std::io::Error::other(format!(
            "start the egress runtime: {why}"
        )));
    }
    let now = Instant::now();
    let loads: Vec<(u128, usize)> = shards
        .iter_mut()
        .map(|shard| {
            (
                shard.recent_busy(now),
                shard.handle.metrics().num_alive_tasks(),
            )
        })
        .collect();
    let first = NEXT.fetch_add(1, Ordering::Relaxed);
    let chosen = (0..shards.len())
        .map(|k| (first + k) % shards.len())
        .min_by_key(|&i| loads[i])
        .unwrap_or(0);
    Ok(shards[chosen].handle.clone())
}

fn start_one() -> Result<Handle, String> {
    let runtime = Builder::new_current_thread()
        .thread_name("cordon-egress-blocking")
        .thread_keep_alive(BLOCKING_KEEP_ALIVE)
        .enable_io()
        .enable_time()
        .build()
        .map_err(|e| e.to_string())?;
    let handle = runtime.handle().clone();
    std::thread::Builder::new()
        .name("cordon-egress".into())
        // The runtime's tasks are driven only while this thread blocks in
        // it, for the process's life.
        .spawn(move || runtime.block_on(std::future::pending::<()>()))
        .map_err(|e| e.to_string())?;
    Ok(handle)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    /// The thread that drives `handle`'s tasks.
    fn thread_of(handle: &Handle) -> std::thread::ThreadId {
        let (tx, rx) = std::sync::mpsc::channel();
        handle.spawn(async move {
            tokio::task::yield_now().await;
            let _ = tx.send(std::thread::current().id());
        });
        rx.recv_timeout(std::time::Duration::from_secs(5)).unwrap()
    }

    /// `n` idle tasks on `handle`'s shard, ended by the sender's `true`.
    fn idle_tasks(handle: &Handle, n: usize) -> tokio::sync::watch::Sender<bool> {
        let (release, released) = tokio::sync::watch::channel(false);
        for _ in 0..n {
            let mut released = released.clone();
            handle.spawn(async move {
                while !*released.borrow_and_update() && released.changed().await.is_ok() {}
            });
        }
        release
    }

    /// Every one of `n` placements lands off `thread`.
    fn placed_off(thread: std::thread::ThreadId, n: usize, what: &str) {
        for _ in 0..n {
            assert_ne!(thread_of(&get().unwrap()), thread, "a run placed on {what}");
        }
    }

    // One test: the second half loads one shard on purpose, which would
    // steer the first half's placements if both ran at once.
    #[test]
    fn runs_are_spread_over_every_shard_and_a_loaded_shard_gets_no_new_run() {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        let shards = cores.clamp(1, MAX_SHARDS);
        let mut threads = std::collections::HashSet::new();
        for _ in 0..16 * shards {
            threads.insert(thread_of(&get().unwrap()));
        }
        assert_eq!(threads.len(), shards, "idle shards are taken in turn");
        if shards < 2 {
            return;
        }
        // A run with 64 live streams on one shard: every later run goes elsewhere.
        let busy = get().unwrap();
        let busy_thread = thread_of(&busy);
        let release = idle_tasks(&busy, 64);
        placed_off(busy_thread, 4 * shards, "the loaded shard");
        release.send(true).unwrap();
        // A run that keeps one shard busy with one task, while another shard
        // holds 64 idle ones: busy time decides, so later runs avoid the
        // busy shard whatever the task counts say.
        let spinning = get().unwrap();
        let spinning_thread = thread_of(&spinning);
        let idle = (0..4 * shards)
            .map(|_| get().unwrap())
            .find(|h| thread_of(h) != spinning_thread)
            .unwrap();
        let stop = idle_tasks(&idle, 64);
        let stopped = stop.subscribe();
        spinning.spawn(async move {
            while !*stopped.borrow() {
                let until = Instant::now() + Duration::from_millis(1);
                while Instant::now() < until {}
                tokio::task::yield_now().await;
            }
        });
        std::thread::sleep(2 * BUSY_WINDOW + Duration::from_millis(50));
        placed_off(spinning_thread, 4 * shards, "the busy shard");
        stop.send(true).unwrap();
    }
}
