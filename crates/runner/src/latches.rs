//! Write-once termination causes, kept outside JavaScript (spec §10).
//!
//! Whatever generated code catches or returns, a set latch decides the
//! outcome. The reader thread and the tool bridge set them;
//! the QuickJS interrupt handler and the tool wait read them. (The signal
//! handler keeps its own flag in `signals`, read through [`Latches::is_cancelled`].)

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

#[derive(Debug, Default)]
pub struct Latches {
    cancelled: AtomicBool,
    protocol_failed: AtomicBool,
    timed_out: AtomicBool,
    /// 0 while unset; else the effective `maxToolCalls` + 1 (the attempt).
    /// One atomic, so that a reader never sees "set" without the number.
    limit_attempted: AtomicU64,
    deadline: OnceLock<Option<Instant>>,
}

/// The latches as read once, when the outcome is decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LatchSnapshot {
    /// `Some(limit)` when the tool-call limit latch is set.
    pub limit: Option<u64>,
    pub cancelled: bool,
    pub timed_out: bool,
    pub protocol_failed: bool,
}

impl Latches {
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::SeqCst);
    }

    pub fn fail_protocol(&self) {
        self.protocol_failed.store(true, Ordering::SeqCst);
    }

    /// Sets the tool-call limit latch for a ceiling of `limit` calls.
    pub fn exceed_limit(&self, limit: u64) {
        // First cause wins; limits stop at 2^63−1, so the attempt is never 0.
        let attempted = limit.saturating_add(1);
        let _ =
            self.limit_attempted
                .compare_exchange(0, attempted, Ordering::SeqCst, Ordering::SeqCst);
    }

    /// Starts the execution deadline; called once, when `ready` is sent.
    /// A timeout too large for the clock means no deadline.
    pub fn start_deadline(&self, timeout: Duration) {
        let _ = self.deadline.set(Instant::now().checked_add(timeout));
    }

    pub fn deadline(&self) -> Option<Instant> {
        self.deadline.get().copied().flatten()
    }

    /// Latches the timeout if the deadline has passed; returns whether it has.
    pub fn check_deadline(&self) -> bool {
        if self.timed_out.load(Ordering::SeqCst) {
            return true;
        }
        let passed = self
            .deadline()
            .is_some_and(|deadline| Instant::now() >= deadline);
        if passed {
            self.timed_out.store(true, Ordering::SeqCst);
        }
        passed
    }

    /// True once any latch is set (checking the deadline on the way): the
    /// interrupt handler stops JavaScript and tool calls stop being sent.
    pub fn should_stop(&self) -> bool {
        let any = self.is_cancelled()
            || self.protocol_failed.load(Ordering::SeqCst)
            || self.limit_attempted.load(Ordering::SeqCst) != 0;
        any || self.check_deadline()
    }

    /// By a cancel frame or by SIGINT/SIGTERM.
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst) || crate::signals::cancel_requested()
    }

    pub fn is_protocol_failed(&self) -> bool {
        self.protocol_failed.load(Ordering::SeqCst)
    }

    pub fn snapshot(&self) -> LatchSnapshot {
        self.check_deadline();
        let limit = match self.limit_attempted.load(Ordering::SeqCst) {
            0 => None,
            attempted => Some(attempted - 1),
        };
        LatchSnapshot {
            limit,
            cancelled: self.is_cancelled(),
            timed_out: self.timed_out.load(Ordering::SeqCst),
            protocol_failed: self.is_protocol_failed(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_limit_wins_and_reports_limit_plus_one_attempted() {
        let latches = Latches::default();
        latches.exceed_limit(3);
        latches.exceed_limit(7);
        assert_eq!(latches.snapshot().limit, Some(3));
        assert!(latches.should_stop());
    }

    #[test]
    fn a_passed_deadline_latches_the_timeout() {
        let latches = Latches::default();
        assert!(!latches.should_stop(), "no deadline before ready");
        latches.start_deadline(Duration::ZERO);
        assert!(latches.should_stop());
        assert!(latches.snapshot().timed_out);
    }

    #[test]
    fn a_timeout_beyond_the_clock_means_no_deadline() {
        let latches = Latches::default();
        latches.start_deadline(Duration::from_millis(u64::MAX));
        assert!(!latches.should_stop());
    }
}
