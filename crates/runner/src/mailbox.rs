//! The bounded queue between the reader thread and the tool bridge (§8).
//!
//! Wake-ups cannot be lost: a waiter checks the queue and the latches while
//! holding the lock, and every producer changes them, then takes and releases
//! the lock, then notifies. Notifying after the unlock spares the woken
//! thread from blocking again on a lock still held (a measurable cost).

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::frame_reader::Frame;
use crate::latches::Latches;

/// Longest a tool wait sleeps before re-reading the latches: a signal
/// handler cannot notify a condition variable, so SIGINT/SIGTERM reach a
/// pending tool wait within this tick.
pub const SIGNAL_POLL: Duration = Duration::from_millis(10);

/// Frames that may wait unread; one more is a fatal protocol failure.
pub const QUEUE_CAPACITY: usize = 8;

/// The queue is full: the frame was not queued.
#[derive(Debug)]
pub struct Overflow;

/// What ended a wait for the host's next frame.
#[derive(Debug)]
pub enum Wake {
    Frame(Frame),
    Cancelled,
    ProtocolFailed,
    TimedOut,
    /// The `until` of [`Mailbox::wait_until`] came first (a timer is due).
    Elapsed,
}

#[derive(Default)]
pub struct Mailbox {
    frames: Mutex<VecDeque<Frame>>,
    wake: Condvar,
}

impl Mailbox {
    fn lock(&self) -> MutexGuard<'_, VecDeque<Frame>> {
        // A panic while holding this lock cannot leave the queue inconsistent.
        self.frames
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub fn push(&self, frame: Frame) -> Result<(), Overflow> {
        let mut frames = self.lock();
        if frames.len() >= QUEUE_CAPACITY {
            return Err(Overflow);
        }
        frames.push_back(frame);
        drop(frames);
        self.wake.notify_all();
        Ok(())
    }

    /// Wakes waiters after a latch was set.
    pub fn notify(&self) {
        drop(self.lock());
        self.wake.notify_all();
    }

    /// Waits for the next frame, cancel, protocol failure or the deadline,
    /// checked in that order.
    pub fn wait(&self, latches: &Latches) -> Wake {
        self.wait_until(latches, None)
    }

    /// [`Mailbox::wait`], also ending at `until` ([`Wake::Elapsed`]) when
    /// that comes before the deadline.
    pub fn wait_until(&self, latches: &Latches, until: Option<Instant>) -> Wake {
        self.wait_for(latches, until, true)
    }

    /// Sleeps until `until`, cancel, protocol failure or the deadline,
    /// leaving queued frames unread (nothing is outstanding: a frame the
    /// host sends now stays queued, as in v1).
    pub fn sleep_until(&self, latches: &Latches, until: Instant) -> Wake {
        self.wait_for(latches, Some(until), false)
    }

    fn wait_for(&self, latches: &Latches, until: Option<Instant>, take_frames: bool) -> Wake {
        let mut frames = self.lock();
        loop {
            if latches.is_cancelled() {
                return Wake::Cancelled;
            }
            if latches.is_protocol_failed() {
                return Wake::ProtocolFailed;
            }
            if take_frames {
                if let Some(frame) = frames.pop_front() {
                    return Wake::Frame(frame);
                }
            }
            if latches.check_deadline() {
                return Wake::TimedOut;
            }
            let now = Instant::now();
            if until.is_some_and(|until| now >= until) {
                return Wake::Elapsed;
            }
            let end = match (latches.deadline(), until) {
                (Some(deadline), Some(until)) => Some(deadline.min(until)),
                (deadline, until) => deadline.or(until),
            };
            let tick = end.map_or(SIGNAL_POLL, |end| {
                end.saturating_duration_since(now).min(SIGNAL_POLL)
            });
            let waited = self.wake.wait_timeout(frames, tick);
            frames = waited.unwrap_or_else(|poisoned| poisoned.into_inner()).0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_ninth_unread_frame_overflows() {
        let mailbox = Mailbox::default();
        for _ in 0..QUEUE_CAPACITY {
            mailbox.push(Frame::default()).expect("room");
        }
        assert!(mailbox.push(Frame::default()).is_err());
    }

    #[test]
    fn cancel_from_another_thread_wakes_a_wait_without_deadline() {
        let mailbox = Arc::new(Mailbox::default());
        let latches = Arc::new(Latches::default());
        let (m, l) = (mailbox.clone(), latches.clone());
        let canceller = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            l.cancel();
            m.notify();
        });
        assert!(matches!(mailbox.wait(&latches), Wake::Cancelled));
        canceller.join().expect("joined");
    }

    #[test]
    fn a_sleep_ends_at_its_time_and_leaves_frames_queued() {
        let mailbox = Mailbox::default();
        mailbox.push(Frame::default()).expect("room");
        let latches = Latches::default();
        let until = Instant::now() + Duration::from_millis(15);
        assert!(matches!(
            mailbox.sleep_until(&latches, until),
            Wake::Elapsed
        ));
        assert!(Instant::now() >= until);
        assert!(matches!(mailbox.wait(&latches), Wake::Frame(_)));
    }

    #[test]
    fn a_sleep_past_the_deadline_ends_at_the_deadline() {
        let latches = Latches::default();
        latches.start_deadline(Duration::from_millis(10));
        let far = Instant::now() + Duration::from_secs(60);
        assert!(matches!(
            Mailbox::default().sleep_until(&latches, far),
            Wake::TimedOut
        ));
    }

    #[test]
    fn a_wait_ends_at_the_deadline() {
        let latches = Latches::default();
        latches.start_deadline(Duration::from_millis(10));
        assert!(matches!(Mailbox::default().wait(&latches), Wake::TimedOut));
    }
}
