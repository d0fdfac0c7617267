//! The runtimes the egress engines of a process's mediated runs share: a few
//! current-thread tokio runtimes ("shards"), each driven by one thread of
//! its own (`cordon-egress`), all started on the first mediated run and
//! never ended. Each run's engine is placed on one shard, the one with the
//! fewest live tasks (listeners, streams, the fd-4 server: a run's load),
//! ties taken in turn, so all of a run's streams share a thread, different
//! runs spread over cores, and a run that keeps many streams busy draws new
//! runs away from its shard (round 24's B2: one run's 32 ping-ponging
//! tunnels slowed a run placed beside it ~4×; nothing bounds one run's share
//! of its own shard yet, see docs/network.md).
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

use tokio::runtime::{Builder, Handle};

/// At most this many shards: one per core up to it. A shard is one thread
/// and three descriptors (its reactor's epoll and waker among them: 6 more
/// in a 2-core provider after its first mediated run); a run's streams are
/// bounded by its quota, so a few cores of relay suffice for a provider.
const MAX_SHARDS: usize = 4;

/// How long an idle lookup thread is kept (as the launcher's supervision
/// runtime keeps its blocking threads): lookups come in bursts.
const BLOCKING_KEEP_ALIVE: std::time::Duration = std::time::Duration::from_secs(1);

static SHARDS: Mutex<Vec<Handle>> = Mutex::new(Vec::new());
static NEXT: AtomicUsize = AtomicUsize::new(0);

/// The shard for the next run's engine: the least loaded by live tasks,
/// ties in turn. Every shard is started on first use
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
            Ok(handle) => shards.push(handle),
            Err(why) => failed = Some(why),
        }
    }
    if shards.is_empty() {
        let why = failed.unwrap_or_default();
        return Err(std::io::Error::other(format!(
            "start the egress runtime: {why}"
        )));
    }
    let first = NEXT.fetch_add(1, Ordering::Relaxed);
    let load = |i: &usize| shards[*i].metrics().num_alive_tasks();
    let chosen = (0..shards.len())
        .map(|k| (first + k) % shards.len())
        .min_by_key(load)
        .unwrap_or(0);
    Ok(shards[chosen].clone())
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
        let (release, released) = tokio::sync::watch::channel(false);
        for _ in 0..64 {
            let mut released = released.clone();
            busy.spawn(async move {
                while !*released.borrow_and_update() && released.changed().await.is_ok() {}
            });
        }
        for _ in 0..4 * shards {
            assert_ne!(
                thread_of(&get().unwrap()),
                busy_thread,
                "a run placed on the loaded shard"
            );
        }
        release.send(true).unwrap();
    }
}
