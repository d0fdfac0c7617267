//! How many `handshake-failed` session lines the host writes (docs/remote.md
//! § Logging): a client that opens and fails handshakes in a loop would
//! otherwise make the host write a line per attempt, until the disk fills.
//!
//! One token bucket for the whole host, not one per source address: the
//! bound is on what reaches the disk, and a flood from many addresses (any
//! TLS client can pick its source port; IPv6 gives it many addresses) must
//! not multiply it; a per-source map would itself need a bound. The bucket
//! holds `burst` lines and gains `per_minute` a minute; a line past it is
//! counted, and the count is written as one
//! `"event": "handshake-failed-suppressed"` line before the next line the
//! bucket lets through, at the host's periodic summary, and when it stops.

use std::sync::Mutex;
use std::time::Instant;

/// The bucket: lines it may still write now, and what it held back.
pub struct FailureLines {
    burst: f64,
    per_second: f64,
    state: Mutex<State>,
}

struct State {
    tokens: f64,
    refilled: Instant,
    suppressed: u64,
}

/// What to do with one `handshake-failed` line.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Write it, after a summary of this many suppressed lines (if > 0).
    Write { suppressed_before: u64 },
    /// Drop it (counted).
    Suppress,
}

impl FailureLines {
    pub fn new(burst: u64, per_minute: u64) -> FailureLines {
        FailureLines {
            burst: burst as f64,
            per_second: per_minute as f64 / 60.0,
            state: Mutex::new(State {
                tokens: burst as f64,
                refilled: Instant::now(),
                suppressed: 0,
            }),
        }
    }

    /// One more failed handshake at `now`.
    pub fn admit(&self, now: Instant) -> Verdict {
        let Ok(mut st) = self.state.lock() else {
            return Verdict::Suppress;
        };
        let gained = now.saturating_duration_since(st.refilled).as_secs_f64() * self.per_second;
        st.tokens = (st.tokens + gained).min(self.burst);
        st.refilled = now;
        if st.tokens < 1.0 {
            st.suppressed += 1;
            return Verdict::Suppress;
        }
        st.tokens -= 1.0;
        Verdict::Write {
            suppressed_before: std::mem::take(&mut st.suppressed),
        }
    }

    /// The count held back since the last summary (now reset).
    pub fn take_suppressed(&self) -> u64 {
        self.state
            .lock()
            .map(|mut st| std::mem::take(&mut st.suppressed))
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_burst_then_one_line_per_refill_and_every_suppressed_line_counted_once() {
        let lines = FailureLines::new(3, 60); // one a second
        let t0 = Instant::now();
        let verdicts: Vec<_> = (0..10).map(|_| lines.admit(t0)).collect();
        let written = verdicts.iter().filter(|v| **v != Verdict::Suppress).count();
        assert_eq!(written, 3);
        // A second later one more line, after the summary of the 7.
        assert_eq!(
            lines.admit(t0 + Duration::from_secs(1)),
            Verdict::Write {
                suppressed_before: 7
            }
        );
        assert_eq!(lines.admit(t0 + Duration::from_secs(1)), Verdict::Suppress);
        assert_eq!(lines.take_suppressed(), 1);
        assert_eq!(lines.take_suppressed(), 0);
        // Idle for long: the bucket refills to the burst, not beyond.
        let later = t0 + Duration::from_secs(3600);
        let refilled = (0..10)
            .filter(|_| lines.admit(later) != Verdict::Suppress)
            .count();
        assert_eq!(refilled, 3);
    }
}
