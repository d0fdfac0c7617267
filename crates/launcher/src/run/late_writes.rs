//! Bytes the owner wrote for fd 3 after the run's writer closed: the program
//! has exited or was stopped, and the owner does not know it yet (its
//! `Finished` event is still on the way). None of them reaches the program.
//! Until the receipt is composed they are counted there, in
//! `protocolInDiscarded`; the receipt is then final, so later ones are
//! counted here for the owner alone (round 16b, R16b-1: they were in
//! neither, while their writes reported success).
//!
//! A rest the owner kept for fd 3's room when the writer closed was counted
//! then (`Control::close_writer`): handed on afterwards (the owner says it
//! is that rest), it is not counted a second time.

use std::sync::{Mutex, PoisonError};

#[derive(Debug, Default)]
pub struct LateWrites(Mutex<Account>);

#[derive(Debug, Default)]
struct Account {
    /// The kept rest counted at the close, until the owner hands it on.
    counted_rest: usize,
    for_receipt: u64,
    receipt_taken: bool,
    after_receipt: u64,
}

impl LateWrites {
    /// `bytes` of one write were dropped because the run had ended; `rest`:
    /// they are the rest the owner kept when the writer closed.
    pub fn add(&self, bytes: usize, rest: bool) {
        // A panic elsewhere cannot leave the counters half-updated: each
        // update is one assignment, so a poisoned account is still whole.
        let mut account = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let counted = if rest {
            std::mem::take(&mut account.counted_rest)
        } else {
            0
        };
        let bytes = bytes.saturating_sub(counted) as u64;
        if account.receipt_taken {
            account.after_receipt += bytes;
        } else {
            account.for_receipt += bytes;
        }
    }

    /// The writer closed while the owner kept `rest` bytes for fd 3's room:
    /// they are counted as discarded already (a second close adds 0).
    pub fn rest_counted(&self, rest: usize) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .counted_rest += rest;
    }

    /// The bytes the receipt counts, once: from now on a late write is
    /// counted in [`LateWrites::after_receipt`]. Every byte is counted in
    /// exactly one of the two (both are decided under the same lock).
    pub fn take_for_receipt(&self) -> u64 {
        let mut account = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        account.receipt_taken = true;
        std::mem::take(&mut account.for_receipt)
    }

    /// Bytes dropped after the receipt was composed (not in it).
    pub fn after_receipt(&self) -> u64 {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .after_receipt
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_late_byte_is_in_the_receipt_or_after_it_never_both() {
        let late = LateWrites::default();
        late.add(3, false);
        late.add(4, false);
        assert_eq!(late.take_for_receipt(), 7);
        late.add(5, false);
        assert_eq!(late.take_for_receipt(), 0, "the receipt takes them once");
        assert_eq!(late.after_receipt(), 5);
    }

    #[test]
    fn the_rest_counted_at_the_close_is_not_counted_again_when_handed_on() {
        let late = LateWrites::default();
        late.rest_counted(10);
        late.add(4, false); // not the rest: counted whole, the rest still known
        late.add(10, true);
        late.add(10, true); // a second hand-on is not the counted rest
        assert_eq!(late.take_for_receipt(), 14);
    }
}
