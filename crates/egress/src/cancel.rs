//! A run's cancellation, seen by every task of its engine: the owner flips
//! it once, and every `cancelled().await` — in the accept loop, the fd-4
//! server, a handshake, a connect, a resolve, a relay's read or write —
//! wakes at once. Every task awaits it beside its work (`select!`), so no
//! await of the engine can outlive the run.
//!
//! Beside it, [`Alive`]: a guard each task holds, so the owner can wait —
//! from any thread, without a runtime — until every task has ended.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

/// The run's cancel flag (cheap to clone into tasks).
#[derive(Debug, Clone, Default)]
pub struct Cancel {
    inner: Arc<CancelInner>,
}

#[derive(Debug, Default)]
struct CancelInner {
    cancelled: AtomicBool,
    notify: Notify,
}

impl Cancel {
    /// Idempotent: wakes every current and future waiter.
    pub fn cancel(&self) {
        self.inner.cancelled.store(true, Ordering::Release);
        self.inner.notify.notify_waiters();
    }

    pub fn is_cancelled(&self) -> bool {
        self.inner.cancelled.load(Ordering::Acquire)
    }

    /// Resolves once the run is cancelled.
    pub async fn cancelled(&self) {
        // The Notified future is created before the flag is read, so a
        // cancel between the two still wakes it (notify_waiters counts it).
        let notified = self.inner.notify.notified();
        if self.is_cancelled() {
            return;
        }
        notified.await;
    }
}

/// Held by every task of a run; the run's [`Tasks`] sees when the last drops.
#[derive(Debug, Clone)]
pub struct Alive(#[allow(dead_code)] Sender<()>);

/// The owner's side of the task guards.
#[derive(Debug)]
pub struct Tasks {
    seed: Mutex<Option<Sender<()>>>,
    all_ended: Mutex<Receiver<()>>,
}

impl Tasks {
    pub fn new() -> Self {
        let (seed, all_ended) = channel();
        Self {
            seed: Mutex::new(Some(seed)),
            all_ended: Mutex::new(all_ended),
        }
    }

    /// A guard for a new task (None once the owner stopped handing them out).
    pub fn guard(&self) -> Option<Alive> {
        self.seed.lock().ok()?.as_ref().map(|s| Alive(s.clone()))
    }

    /// Stops handing out guards and waits up to `bound` for every holder to
    /// drop its guard; true when all did. A blocking wait on purpose: it is
    /// called from teardown, off the runtime's workers.
    pub fn wait_all(&self, bound: Duration) -> bool {
        if let Ok(mut seed) = self.seed.lock() {
            seed.take();
        }
        let Ok(all_ended) = self.all_ended.lock() else {
            return false;
        };
        let deadline = Instant::now() + bound;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match all_ended.recv_timeout(left) {
                Err(RecvTimeoutError::Disconnected) => return true,
                Err(RecvTimeoutError::Timeout) => return false,
                Ok(()) => {} // nobody sends; only the disconnect counts
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap()
    }

    #[test]
    fn cancelling_wakes_a_waiter_and_every_later_one() {
        let rt = runtime();
        let cancel = Cancel::default();
        let waiter = rt.spawn({
            let c = cancel.clone();
            async move { c.cancelled().await }
        });
        std::thread::sleep(Duration::from_millis(20));
        assert!(!waiter.is_finished());
        cancel.cancel();
        rt.block_on(waiter).unwrap();
        rt.block_on(cancel.cancelled()); // already cancelled: at once
    }

    #[test]
    fn wait_all_returns_when_the_last_guard_drops_and_times_out_while_one_is_held() {
        let tasks = Tasks::new();
        let held = tasks.guard().unwrap();
        let released = tasks.guard().unwrap();
        drop(released);
        assert!(!tasks.wait_all(Duration::from_millis(20)));
        assert!(tasks.guard().is_none(), "no guards after the wait began");
        drop(held);
        assert!(tasks.wait_all(Duration::from_millis(20)));
    }
}
