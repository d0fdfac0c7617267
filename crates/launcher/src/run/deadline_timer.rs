//! A run's deadline on a timerfd: armed from any thread without waking one.
//!
//! Why: a tokio timer armed from the owner's thread (a pooled run's
//! deadline, armed by `take()` on the JS thread) is a task handed to the
//! supervision runtime, and handing it over wakes a parked worker — on a VM
//! an IPI to a halted vCPU, on the pooled run's critical path
//! (docs/performance.md › "Change: the audit digest from the launcher, the
//! take's deadline on a timerfd"). A
//! timerfd's timer is the kernel's: `timerfd_settime` wakes nobody, and the
//! runtime's reactor, which watches the descriptor from the run's start, sees
//! it readable only when the deadline passes.
//!
//! One timer per run; several deadlines keep the earliest (arming later than
//! the one already armed is a no-op), as several tokio timers racing to the
//! same idempotent stop did.

use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nix::sys::time::TimeSpec;
use nix::sys::timerfd::{ClockId, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};
use nix::time::ClockId as Clock;
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

/// The timer and when it is armed to fire (`None`: not armed), as a
/// `CLOCK_MONOTONIC` reading: the timer is set to that absolute time, so the
/// recorded expiry is the kernel's, not a moment before the syscall.
#[derive(Debug)]
pub struct DeadlineTimer {
    fd: TimerFd,
    armed_until: Mutex<Option<Duration>>,
}

/// A timer registered with the current runtime's reactor: resolve
/// [`WatchedTimer::expired`] on that runtime.
pub struct WatchedTimer(AsyncFd<Watched>);

impl DeadlineTimer {
    /// A disarmed timer on `CLOCK_MONOTONIC` (the clock tokio's timers and
    /// `Instant` use), non-blocking for the reactor, close-on-exec, already
    /// registered with the current runtime's reactor (so a failure to watch
    /// it is known here, not after a deadline was armed on it). Must be
    /// called on a runtime with I/O enabled (the supervision runtime).
    pub fn watched() -> std::io::Result<(Arc<Self>, WatchedTimer)> {
        let fd = TimerFd::new(
            ClockId::CLOCK_MONOTONIC,
            TimerFlags::TFD_NONBLOCK | TimerFlags::TFD_CLOEXEC,
        )?;
        let timer = Arc::new(DeadlineTimer {
            fd,
            armed_until: Mutex::new(None),
        });
        // SAFETY: `Watched` owns a reference to the timer, so its descriptor
        // stays open and the same for as long as the `AsyncFd` (which owns
        // the `Watched`) lives; `as_raw_fd` always returns it.
        let watched = unsafe {
            AsyncFd::register_with_interest(Watched(Arc::clone(&timer)), Interest::READABLE)
        }
        .map_err(std::io::Error::from)?;
        Ok((timer, WatchedTimer(watched)))
    }

    /// Fires `after` from now unless already armed to fire no later: one
    /// syscall, no thread woken.
    pub fn arm(&self, after: Duration) -> nix::Result<()> {
        let now = Duration::from(nix::time::clock_gettime(Clock::CLOCK_MONOTONIC)?);
        // A zero `it_value` would disarm the timer: a deadline of 0 fires at
        // the next nanosecond instead.
        let until = now + after.max(Duration::from_nanos(1));
        let mut armed = self
            .armed_until
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if armed.is_some_and(|at| at <= until) {
            return Ok(());
        }
        self.fd.set(
            Expiration::OneShot(TimeSpec::from_duration(until)),
            TimerSetTimeFlags::TFD_TIMER_ABSTIME,
        )?;
        *armed = Some(until);
        Ok(())
    }

    /// How long until the armed deadline (zero if it has passed), or `None`
    /// when nothing is armed: for moving a deadline to another timer.
    pub fn remaining(&self) -> Option<Duration> {
        let until = (*self
            .armed_until
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()))?;
        let now = nix::time::clock_gettime(Clock::CLOCK_MONOTONIC)
            .map(Duration::from)
            .unwrap_or(until);
        Some(until.saturating_sub(now))
    }
}

impl WatchedTimer {
    /// Resolves once an armed deadline has passed (never if none is armed);
    /// `Err` if the descriptor cannot be read (the caller then moves the
    /// deadline to another timer).
    pub async fn expired(&self) -> std::io::Result<()> {
        loop {
            let mut ready = self.0.readable().await?;
            // Reading the expiration count clears the readiness; `EAGAIN`
            // means it was a spurious wake-up, and the reactor is asked again.
            match ready.get_inner().0.fd.wait() {
                Ok(()) => return Ok(()),
                Err(nix::errno::Errno::EAGAIN) => ready.clear_ready(),
                Err(e) => return Err(e.into()),
            }
        }
    }
}

/// The timer as the reactor sees it: its descriptor, shared with the arming side.
struct Watched(Arc<DeadlineTimer>);

impl AsRawFd for Watched {
    fn as_raw_fd(&self) -> RawFd {
        self.0.fd.as_fd().as_raw_fd()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use std::time::Instant;

    use super::*;

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()
            .unwrap()
    }

    /// A timer registered with `rt`'s reactor, as the supervision makes one.
    fn new_watched(rt: &tokio::runtime::Runtime) -> (Arc<DeadlineTimer>, WatchedTimer) {
        rt.block_on(async { DeadlineTimer::watched() }).unwrap()
    }

    #[test]
    fn an_armed_timer_fires_after_its_deadline_and_not_before() {
        let rt = runtime();
        let (timer, watched) = new_watched(&rt);
        let started = Instant::now();
        timer.arm(Duration::from_millis(30)).unwrap();
        rt.block_on(watched.expired()).unwrap();
        assert!(started.elapsed() >= Duration::from_millis(30));
        assert_eq!(timer.remaining(), Some(Duration::ZERO));
    }

    fn fires_within(rt: &tokio::runtime::Runtime, watched: &WatchedTimer, bound: Duration) -> bool {
        rt.block_on(async { tokio::time::timeout(bound, watched.expired()).await })
            .is_ok()
    }

    #[test]
    fn the_earliest_deadline_wins() {
        let rt = runtime();
        let (timer, watched) = new_watched(&rt);
        let started = Instant::now();
        timer.arm(Duration::from_millis(20)).unwrap();
        // A later deadline does not postpone the earlier one.
        timer.arm(Duration::from_secs(30)).unwrap();
        assert!(remaining_at_most(&timer, Duration::from_millis(20)));
        assert!(
            fires_within(&rt, &watched, Duration::from_secs(5)),
            "the 20 ms deadline was postponed"
        );
        assert!(started.elapsed() >= Duration::from_millis(20));
        // An earlier one replaces a later one.
        let (timer, watched) = new_watched(&rt);
        timer.arm(Duration::from_secs(30)).unwrap();
        timer.arm(Duration::from_millis(10)).unwrap();
        assert!(
            fires_within(&rt, &watched, Duration::from_secs(5)),
            "the earlier deadline did not replace the later one"
        );
    }

    fn remaining_at_most(timer: &DeadlineTimer, bound: Duration) -> bool {
        timer.remaining().is_some_and(|left| left <= bound)
    }

    #[test]
    fn an_unarmed_timer_never_fires_and_a_zero_deadline_does() {
        let rt = runtime();
        let (timer, watched) = new_watched(&rt);
        assert_eq!(timer.remaining(), None);
        assert!(
            !fires_within(&rt, &watched, Duration::from_millis(50)),
            "an unarmed timer fired"
        );
        timer.arm(Duration::ZERO).unwrap();
        assert!(
            fires_within(&rt, &watched, Duration::from_secs(5)),
            "a zero deadline never fired"
        );
    }
}
