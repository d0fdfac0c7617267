//! Network receipts in the run receipt: a top-level `networkReceipts`
//! array (empty without mediation), and `networkReceiptsDropped` when the
//! engine's per-run cap was passed. Finishing the engine here — after the
//! sandbox is gone, before the receipt is written — closes every open stream
//! and joins every engine thread, so the list is complete.

use serde_json::{json, Value};

pub fn attach(document: &mut Value, engine: Option<&mut cordon_egress::RunEngine>) {
    let finished = engine.map(|e| e.finish()).unwrap_or_default();
    if let Value::Object(map) = document {
        map.insert("networkReceipts".into(), json!(finished.receipts));
        if finished.dropped > 0 {
            map.insert("networkReceiptsDropped".into(), json!(finished.dropped));
        }
    }
}
