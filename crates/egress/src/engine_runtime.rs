//! The runtimes the egress engines of a process's mediated runs share: a few
//! current-thread tokio runtimes ("shards"), each driven by one thread of
//! its own (`cordon-egress`), all started on the first mediated run and
//! never ended. Each run's engine is placed on one shard ([`get`]): the one
//! whose thread its engine tasks kept least busy lately, then the one with
//! the fewest runs, ties taken in turn. So all of a run's streams share a
//! thread, different runs spread over cores, runs started together spread
//! too, and a run that keeps a shard busy draws new runs away from it
//! (round 24's B2: one run's 32 ping-ponging tunnels slowed a run placed
//! beside it ~4×).
//!
//! The load is what the shard's own engine tasks report as they are polled
//! (busy_time.rs, on the shard's thread): their busy time, decayed with a
//! time constant of 250 ms, plus the poll running now, so a thread held
//! inside a poll reads busy (tokio's own busy metric is published only when
//! the thread parks: a thread stuck in a poll read idle and drew every new
//! run, round 25w's F2). Busy time comes first because it cannot be faked:
//! idle streams cost none, so a run cannot steer others onto a shard another
//! run keeps busy by holding idle ones elsewhere. The run count second,
//! because a run that has just started has no busy time yet: counted from
//! its placement, it keeps the next runs off its shard (round 25's F1: a
//! victim started within ~100 ms of a busy run landed beside it). Nothing
//! bounds one run's share of its own shard (docs/network.md).
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
//! thread), and the launcher's supervision runtime's timers and pidfd waits
//! no longer share workers with the relay.

use std::cell::Cell;
use std::ops::Deref;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use tokio::runtime::{Builder, Handle};

/// At most this many shards: one per core up to it. A shard is one thread
/// and three descriptors (its reactor's epoll and waker among them: 6 more
/// in a 2-core provider after its first mediated run); a run's streams are
/// bounded by its quota, so a few cores of relay suffice for a provider.
const MAX_SHARDS: usize = 4;

/// How long an idle lookup thread is kept (as the launcher's supervision
/// runtime keeps its blocking threads): lookups come in bursts.
const BLOCKING_KEEP_ALIVE: Duration = Duration::from_secs(1);

/// The time constant of a shard's decayed busy time.
const DECAY: Duration = Duration::from_millis(250);

/// Busy shares closer than this (a tenth of a core) are equal for
/// placement: the run count decides between them, not a few µs of noise.
const BUSY_STEP: f64 = 0.1;

static SHARDS: Mutex<Vec<Placed>> = Mutex::new(Vec::new());
static NEXT: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// The load of the shard whose thread this is (`None` elsewhere).
    static CURRENT: Cell<Option<&'static ShardLoad>> = const { Cell::new(None) };
}

/// A started shard: its runtime and its load (never freed: shards live as
/// long as the process).
#[derive(Debug, Clone)]
struct Placed {
    handle: Handle,
    load: &'static ShardLoad,
}

/// What a shard's engine tasks report of its load, and its runs.
#[derive(Debug)]
pub struct ShardLoad {
    /// Busy nanoseconds decayed with [`DECAY`], and when last brought up to date.
    decayed: Mutex<(f64, Instant)>,
    /// When the poll now running began (ns after [`base`], plus 1), 0 if none.
    polling_since: AtomicU64,
    /// Runs placed on the shard whose [`Shard`] is still held.
    runs: AtomicUsize,
}

impl ShardLoad {
    fn new() -> Self {
        ShardLoad {
            decayed: Mutex::new((0.0, Instant::now())),
            polling_since: AtomicU64::new(0),
            runs: AtomicUsize::new(0),
        }
    }

    /// A poll of one of its tasks begins on the shard's thread.
    pub(crate) fn poll_began(&self, at: Instant) {
        let since = u64::try_from(at.saturating_duration_since(base()).as_nanos());
        self.polling_since
            .store(since.unwrap_or(u64::MAX - 1) + 1, Ordering::Relaxed);
    }

    /// That poll ended `now`, having taken `spent`.
    pub(crate) fn poll_ended(&self, spent: Duration, now: Instant) {
        self.polling_since.store(0, Ordering::Relaxed);
        if let Ok(mut decayed) = self.decayed.lock() {
            *decayed = (decay(*decayed, now) + spent.as_nanos() as f64, now);
        }
    }

    /// The share of one core its tasks used lately (about the last
    /// [`DECAY`]), the poll running now included: a thread held inside a
    /// poll reads busy, the more so the longer it is held.
    fn busy(&self, now: Instant) -> f64 {
        let decayed = self.decayed.lock().map_or(0.0, |d| decay(*d, now));
        let polling = match self.polling_since.load(Ordering::Relaxed) {
            0 => 0.0,
            since => {
                let began = base() + Duration::from_nanos(since - 1);
                now.saturating_duration_since(began).as_nanos() as f64
            }
        };
        (decayed + polling) / DECAY.as_nanos() as f64
    }
}

/// `(value, at)` decayed to `now`.
fn decay((value, at): (f64, Instant), now: Instant) -> f64 {
    let elapsed = now.saturating_duration_since(at).as_secs_f64();
    value * (-elapsed / DECAY.as_secs_f64()).exp()
}

/// The origin of [`ShardLoad::polling_since`].
fn base() -> Instant {
    static BASE: OnceLock<Instant> = OnceLock::new();
    *BASE.get_or_init(Instant::now)
}

/// The load of the shard this thread drives, for busy_time.rs.
pub(crate) fn current_load() -> Option<&'static ShardLoad> {
    CURRENT.with(Cell::get)
}

/// A run's place on a shard: the runtime its engine's tasks run on
/// (`Deref` to its [`Handle`]); the shard counts the run until this drops.
#[derive(Debug)]
pub struct Shard(Placed);

impl Deref for Shard {
    type Target = Handle;
    fn deref(&self) -> &Handle {
        &self.0.handle
    }
}

impl Drop for Shard {
    fn drop(&mut self) {
        self.0.load.runs.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The shard for the next run's engine: the least busy lately (in steps of
/// a tenth of a core), then the one with the fewest runs, ties in turn.
/// Every shard is started on first use (so the process's threads do not
/// grow run by run); one that could not be started (no thread or
/// descriptor to spare at that moment) is tried again at the next call, and
/// the runs meanwhile use the shards there are. `Err` (why) only when there
/// is none.
pub fn get() -> Result<Shard, std::io::Error> {
    let mut shards = SHARDS
        .lock()
        .map_err(|_| std::io::Error::other("the egress runtime's lock is poisoned"))?;
    let wanted = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .clamp(1, MAX_SHARDS);
    let mut failed = None;
    while shards.len() < wanted && failed.is_none() {
        match start_one() {
            Ok(placed) => shards.push(placed),
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
    let key = |placed: &Placed| {
        let steps = (placed.load.busy(now) / BUSY_STEP).floor();
        // Saturating: a thread held for minutes is as busy as can be.
        let steps = if steps >= 1e9 {
            1_000_000_000
        } else {
            steps as u64
        };
        (steps, placed.load.runs.load(Ordering::Relaxed))
    };
    let first = NEXT.fetch_add(1, Ordering::Relaxed);
    let chosen = (0..shards.len())
        .map(|k| (first + k) % shards.len())
        .min_by_key(|&i| key(&shards[i]))
        .unwrap_or(0);
    let placed = shards[chosen].clone();
    placed.load.runs.fetch_add(1, Ordering::Relaxed);
    Ok(Shard(placed))
}

fn start_one() -> Result<Placed, String> {
    let runtime = Builder::new_current_thread()
        .thread_name("cordon-egress-blocking")
        .thread_keep_alive(BLOCKING_KEEP_ALIVE)
        .enable_io()
        .enable_time()
        .build()
        .map_err(|e| e.to_string())?;
    let handle = runtime.handle().clone();
    let load: &'static ShardLoad = Box::leak(Box::new(ShardLoad::new()));
    std::thread::Builder::new()
        .name("cordon-egress".into())
        // The runtime's tasks are driven only while this thread blocks in
        // it, for the process's life.
        .spawn(move || {
            CURRENT.with(|current| current.set(Some(load)));
            runtime.block_on(std::future::pending::<()>())
        })
        .map_err(|e| e.to_string())?;
    Ok(Placed { handle, load })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// The thread that drives `handle`'s tasks.
    fn thread_of(handle: &Handle) -> std::thread::ThreadId {
        let (tx, rx) = std::sync::mpsc::channel();
        handle.spawn(async move {
            tokio::task::yield_now().await;
            let _ = tx.send(std::thread::current().id());
        });
        rx.recv_timeout(Duration::from_secs(5)).unwrap()
    }

    /// Every one of `n` placements (released at once) lands off `thread`.
    fn placed_off(thread: std::thread::ThreadId, n: usize, what: &str) {
        for _ in 0..n {
            assert_ne!(thread_of(&get().unwrap()), thread, "a run placed on {what}");
        }
    }

    /// Two idle runs placed on shards other than `thread`'s, held.
    fn two_runs_off(thread: std::thread::ThreadId, shards: usize) -> Vec<Shard> {
        let runs: Vec<Shard> = (0..2 * shards)
            .map(|_| get().unwrap())
            .filter(|s| thread_of(s) != thread)
            .take(2)
            .collect();
        assert_eq!(runs.len(), 2);
        runs
    }

    /// A counted engine task on `shard` that runs `work` in each poll until told to stop.
    fn busy_task(
        shard: &Handle,
        work: impl Fn() + Send + 'static,
    ) -> tokio::sync::watch::Sender<bool> {
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let busy = Arc::new(crate::busy_time::BusyTime::default());
        shard.spawn(crate::busy_time::timed(&busy, async move {
            while !*stopped.borrow() {
                work();
                tokio::task::yield_now().await;
            }
        }));
        stop
    }

    // One test: the later parts load one shard on purpose, which would
    // steer the first part's placements if both ran at once.
    #[test]
    fn runs_spread_over_the_shards_and_avoid_a_busy_or_held_one() {
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
        // Runs started together, before any is busy: spread by their count.
        let burst: Vec<Shard> = (0..4 * shards).map(|_| get().unwrap()).collect();
        let mut per_thread = std::collections::HashMap::new();
        for shard in &burst {
            *per_thread.entry(thread_of(shard)).or_insert(0) += 1;
        }
        assert!(
            per_thread.values().all(|&n| n == 4),
            "a burst of runs spread evenly: {per_thread:?}"
        );
        drop(burst);
        // A run just placed, not busy yet: the next run goes elsewhere even
        // when its turn comes round to that shard.
        let placed = get().unwrap();
        let placed_thread = thread_of(&placed);
        for _ in 0..shards - 1 {
            drop(get().unwrap());
        }
        assert_ne!(
            thread_of(&get().unwrap()),
            placed_thread,
            "a run placed beside one just started"
        );
        drop(placed);
        // A run that keeps one shard busy while another shard holds two
        // idle runs: busy time decides.
        let spinning = get().unwrap();
        let spinning_thread = thread_of(&spinning);
        let idle_runs = two_runs_off(spinning_thread, shards);
        let stop = busy_task(&spinning, || {
            let until = Instant::now() + Duration::from_millis(1);
            while Instant::now() < until {}
        });
        std::thread::sleep(DECAY + Duration::from_millis(50));
        placed_off(spinning_thread, 4 * shards, "the busy shard");
        stop.send(true).unwrap();
        drop((spinning, idle_runs));
        // A shard whose thread is held inside one poll (it never parks, so
        // tokio's own busy time would not move): later runs go elsewhere.
        std::thread::sleep(3 * DECAY); // the spin decays
        let held = get().unwrap();
        let held_thread = thread_of(&held);
        let idle_runs = two_runs_off(held_thread, shards);
        let stop = busy_task(&held, || std::thread::sleep(Duration::from_millis(400)));
        std::thread::sleep(Duration::from_millis(100)); // inside the first poll
        placed_off(held_thread, 2 * shards, "a shard held inside a poll");
        stop.send(true).unwrap();
        drop((held, idle_runs));
    }
}
