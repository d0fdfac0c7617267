//! The `exit` frame within the protocol's control-frame bound. Past the
//! budget, first the tenant's own text in the receipt is cut as in the kept
//! receipt (kept_receipt.rs: argv and allowlist, with `argvTruncated` and
//! `allowTruncated`; R12-3: an argv just under the spawn frame's 1 MiB made
//! a 1.05 MB `exit`), since the client sent it and the digests let it check
//! its own copy; then the run's network receipts (R11-9: its streams,
//! bounded by the host's ceilings, and up to the engine's 4096 refusals),
//! carried twice, in `networkReceipts` and in the receipt: the last ones are
//! cut from both lists and counted in the receipt's
//! `networkReceiptsOmitted`. The receipt is signed after (session.rs), so
//! the signature covers what was sent; the kept receipt on the host keeps
//! every network receipt. Either way the client gets its result, never a
//! frame it must reject.

use serde_json::{json, Value};

use super::frame::MAX_CONTROL_BYTES;
use super::kept_receipt;

/// What `exit` may take: the frame bound less room for the signature and
/// the count added here.
pub const EXIT_BUDGET: usize = MAX_CONTROL_BYTES - 16 * 1024;

/// Cuts `frame`'s receipt's argv and allowlist, then its network receipts
/// from the end, until it fits `budget` bytes; returns how many network
/// receipts were cut (0: none).
pub fn fit(frame: &mut Value, budget: usize) -> usize {
    let mut size = frame.to_string().len();
    if size <= budget {
        return 0;
    }
    if let Some(cut) = frame.get("receipt").and_then(kept_receipt::bounded) {
        frame["receipt"] = cut;
        size = frame.to_string().len();
    }
    if size <= budget {
        return 0;
    }
    let Some(list) = frame
        .pointer("/receipt/networkReceipts")
        .and_then(Value::as_array)
    else {
        return 0;
    };
    let copies = if frame.get("networkReceipts").is_some() {
        2
    } else {
        1
    };
    let mut over = size - budget;
    let mut keep = list.len();
    while keep > 0 && over > 0 {
        keep -= 1;
        // The receipt and its comma, in each list that carries it.
        let freed = copies * (list[keep].to_string().len() + 1);
        over = over.saturating_sub(freed);
    }
    let omitted = list.len() - keep;
    for pointer in ["/networkReceipts", "/receipt/networkReceipts"] {
        if let Some(Value::Array(list)) = frame.pointer_mut(pointer) {
            list.truncate(keep);
        }
    }
    if let Some(Value::Object(receipt)) = frame.get_mut("receipt") {
        receipt.insert("networkReceiptsOmitted".into(), json!(omitted));
    }
    omitted
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn frame(n: usize) -> Value {
        let list: Vec<Value> = (0..n)
            .map(|i| json!({"id": i, "host": "x".repeat(90)}))
            .collect();
        json!({"returncode": 0, "networkReceipts": list, "receipt": {"networkReceipts": list}})
    }

    #[test]
    fn a_frame_within_the_budget_is_left_as_it_is() {
        let mut f = frame(10);
        let before = f.clone();
        assert_eq!(fit(&mut f, EXIT_BUDGET), 0);
        assert_eq!(f, before);
    }

    #[test]
    fn past_the_budget_the_last_receipts_are_cut_from_both_lists_and_counted() {
        let mut f = frame(20_000);
        let omitted = fit(&mut f, EXIT_BUDGET);
        assert!(omitted > 0);
        let kept = f["networkReceipts"].as_array().unwrap();
        assert_eq!(kept.len(), 20_000 - omitted);
        assert_eq!(
            f["receipt"]["networkReceipts"].as_array().unwrap().len(),
            kept.len()
        );
        assert_eq!(kept.last().unwrap()["id"], json!(kept.len() - 1));
        assert_eq!(f["receipt"]["networkReceiptsOmitted"], json!(omitted));
        assert!(f.to_string().len() <= EXIT_BUDGET);
    }

    #[test]
    fn an_argv_near_the_frame_bound_is_cut_as_in_the_kept_receipt_before_any_network_receipt() {
        let mut f = frame(10);
        f["receipt"]["command"] = json!({"argv": ["/bin/true", "a".repeat(1_045_000)]});
        assert_eq!(fit(&mut f, EXIT_BUDGET), 0);
        assert_eq!(f["networkReceipts"].as_array().unwrap().len(), 10);
        assert_eq!(
            f["receipt"]["networkReceipts"].as_array().unwrap().len(),
            10
        );
        assert_eq!(f["receipt"]["command"]["argvTruncated"]["args"], json!(2));
        assert!(f.to_string().len() <= EXIT_BUDGET);
    }
}
