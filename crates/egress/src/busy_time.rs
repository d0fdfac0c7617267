//! The time a run's engine tasks spend being polled on the engine's
//! threads: the run's share of the egress shards' CPU, which runs in the
//! provider, outside the sandbox's cgroup and its CPU limit (docs/network.md
//! › Known limits). The receipt reports it (`networkEngineMs`), so a
//! provider can see which run kept the engine busy (round 24, B2: one run's
//! ping-ponging tunnels held a shard's thread at ~0.9 core).
//!
//! What it counts: the wall time inside each poll of each of the run's
//! tasks — the relay's reads and writes, handshakes, accepts, the fd-4
//! server. A poll is short (every socket call is non-blocking), so this is
//! the thread's CPU for the run, plus any time the kernel took the core
//! away mid-poll. Not counted: name lookups (on the shard's blocking pool),
//! the kernel's loopback work done in the peer's context, and `finish`.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

/// A run's accumulated poll time, in nanoseconds.
#[derive(Debug, Default)]
pub struct BusyTime(AtomicU64);

impl BusyTime {
    pub fn total(&self) -> Duration {
        Duration::from_nanos(self.0.load(Ordering::Relaxed))
    }

    fn add(&self, spent: Duration) {
        let nanos = u64::try_from(spent.as_nanos()).unwrap_or(u64::MAX);
        self.0.fetch_add(nanos, Ordering::Relaxed);
    }
}

pin_project_lite::pin_project! {
    /// `inner`, with the time of each of its polls added to `busy`.
    pub struct Timed<F> {
        #[pin]
        inner: F,
        busy: Arc<BusyTime>,
    }
}

/// Wraps a task's future so its polls count towards `busy`.
pub fn timed<F: Future>(busy: &Arc<BusyTime>, inner: F) -> Timed<F> {
    Timed {
        inner,
        busy: Arc::clone(busy),
    }
}

impl<F: Future> Future for Timed<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        // The shard's load too, where this runs on a shard (engine_runtime.rs).
        let shard = crate::engine_runtime::current_load();
        let began = Instant::now();
        if let Some(shard) = shard {
            shard.poll_began(began);
        }
        let polled = this.inner.poll(cx);
        let ended = Instant::now();
        let spent = ended.saturating_duration_since(began);
        this.busy.add(spent);
        if let Some(shard) = shard {
            shard.poll_ended(spent, ended);
        }
        polled
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn only_the_time_inside_polls_counts_not_the_time_spent_waiting() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let busy = Arc::new(BusyTime::default());
        runtime.block_on(timed(&busy, async {
            // 20 ms of work in one poll, then 200 ms asleep (pending).
            let until = Instant::now() + Duration::from_millis(20);
            while Instant::now() < until {}
            tokio::time::sleep(Duration::from_millis(200)).await;
        }));
        let total = busy.total();
        assert!(total >= Duration::from_millis(20), "{total:?}");
        assert!(
            total < Duration::from_millis(200),
            "{total:?}: the sleep was counted"
        );
    }
}
