//! A run's receipts. Every attempt that reached an upstream is kept —
//! those are bounded by the run's stream quota, and the receipt is how the
//! provider learns where the sandbox's bytes went. Refusals are kept up to
//! [`MAX_REFUSAL_RECEIPTS`] and counted past it, so a sandbox hammering the
//! engine with junk cannot grow provider memory without bound, nor push a
//! real stream's receipt out (issue 19, finding 3).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use crate::network_receipt::NetworkReceipt;

/// Refusal receipts kept per run; refusals past it are counted, not stored.
pub const MAX_REFUSAL_RECEIPTS: usize = 4096;

#[derive(Debug, Default)]
pub struct ReceiptLog {
    next_id: AtomicU64,
    kept: Mutex<Kept>,
    refusals_dropped: AtomicU64,
}

#[derive(Debug, Default)]
struct Kept {
    receipts: Vec<NetworkReceipt>,
    refusals: usize,
}

impl ReceiptLog {
    pub fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::AcqRel) + 1
    }

    /// `connected`: the attempt reached an upstream (always kept).
    pub fn push(&self, receipt: NetworkReceipt, connected: bool) {
        if let Ok(mut kept) = self.kept.lock() {
            if connected {
                kept.receipts.push(receipt);
                return;
            }
            if kept.refusals < MAX_REFUSAL_RECEIPTS {
                kept.refusals += 1;
                kept.receipts.push(receipt);
                return;
            }
        }
        self.refusals_dropped.fetch_add(1, Ordering::AcqRel);
    }

    /// The receipts in id order and how many refusals were dropped past the cap.
    pub fn take(&self) -> (Vec<NetworkReceipt>, u64) {
        let mut kept = self
            .kept
            .lock()
            .map(|mut k| std::mem::take(&mut k.receipts))
            .unwrap_or_default();
        kept.sort_by_key(|r| r.id);
        (kept, self.refusals_dropped.load(Ordering::Acquire))
    }
}
