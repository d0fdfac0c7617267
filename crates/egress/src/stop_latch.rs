//! A run's stop, as the engine learns it: latched by the launcher when the
//! stop ladder starts — before the sandbox is signalled — so that a stream
//! the stop ends is recorded `cancelled` whatever phase it was in (issue 19,
//! round 5 R5N-2).
//!
//! Why a latch beside the cancel: the ladder kills the sandbox first and the
//! engine is cancelled only when the run is reaped. In between, the dying
//! sandbox's sockets close, and a task that wakes on that close would record
//! what it sees — an incomplete handshake (`protocol-error`), no ClientHello
//! (`sni-absent`), a relay error or close — as if the client had done it.
//! With the latch set first, every outcome a dying client can cause is read
//! as the stop it is. Verdicts the client's bytes decided (a denial, an SNI
//! mismatch, a quota) stay what they are.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::network_receipt::StreamEnd;
use crate::refusal::Refusal;
use crate::stream_attempt::Outcome;

/// Shared between the run's engine and its owner's stop ladder.
#[derive(Debug, Clone, Default)]
pub struct StopLatch(Arc<AtomicBool>);

impl StopLatch {
    /// The run is being stopped (idempotent; never unset).
    pub fn latch(&self) {
        self.0.store(true, Ordering::Release);
    }

    pub fn is_latched(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }

    /// The outcome to record (`None`: stopped). After the latch, what a
    /// client that is being killed produces is the stop's.
    pub(crate) fn attribute(&self, outcome: Option<Outcome>) -> Option<Outcome> {
        if !self.is_latched() {
            return outcome;
        }
        match outcome {
            Some(Outcome::Refused(Refusal::ProtocolError | Refusal::SniAbsent))
            | Some(Outcome::Relayed(StreamEnd::Error | StreamEnd::Closed)) => None,
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(latch: &StopLatch, outcome: Outcome) -> String {
        match latch.attribute(Some(outcome)) {
            None => "stopped".into(),
            Some(Outcome::Refused(r)) => r.as_str().into(),
            Some(Outcome::Relayed(end)) => format!("{end:?}"),
        }
    }

    #[test]
    fn after_the_latch_what_a_dying_client_causes_is_the_stop_and_verdicts_stay() {
        let latch = StopLatch::default();
        let dying = || {
            [
                Outcome::Refused(Refusal::ProtocolError),
                Outcome::Refused(Refusal::SniAbsent),
                Outcome::Relayed(StreamEnd::Error),
                Outcome::Relayed(StreamEnd::Closed),
            ]
        };
        for outcome in dying() {
            assert_ne!(
                read(&latch, outcome),
                "stopped",
                "no stop yet: as it happened"
            );
        }
        latch.latch();
        for outcome in dying() {
            assert_eq!(read(&latch, outcome), "stopped");
        }
        assert_eq!(
            read(&latch, Outcome::Refused(Refusal::SniMismatch)),
            "sni-mismatch"
        );
        assert_eq!(
            read(&latch, Outcome::Refused(Refusal::QuotaStreams)),
            "quota-streams"
        );
        assert_eq!(
            read(&latch, Outcome::Relayed(StreamEnd::QuotaBytesIn)),
            "QuotaBytesIn"
        );
    }
}
