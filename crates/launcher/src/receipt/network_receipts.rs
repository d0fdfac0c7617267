//! Network receipts in the run receipt: a top-level `networkReceipts`
//! array (empty without mediation), `networkReceiptsDropped` when the
//! engine's per-run cap on refusal receipts was passed (a stream that
//! reached an upstream always has its receipt), and, for a mediated run,
//! `networkEngineMs`: the time the provider's egress engine spent on the
//! run's tasks (cordon_egress::busy_time). Finishing the engine here —
//! after the sandbox is gone, before the receipt is written, on a blocking
//! thread — cancels every engine task and waits for them, so the list is
//! complete.

use serde_json::{json, Value};

pub fn attach(document: &mut Value, engine: Option<&mut cordon_egress::RunEngine>) {
    socket_families(document, engine.is_some());
    let mediated = engine.is_some();
    let finished = engine.map(|e| e.finish()).unwrap_or_default();
    if let Value::Object(map) = document {
        map.insert("networkReceipts".into(), json!(finished.receipts));
        if finished.dropped > 0 {
            map.insert("networkReceiptsDropped".into(), json!(finished.dropped));
        }
        if mediated {
            map.insert(
                "networkEngineMs".into(),
                json!(engine_ms(finished.engine_busy)),
            );
        }
    }
}

/// Milliseconds to the microsecond.
fn engine_ms(busy: std::time::Duration) -> f64 {
    // Exact below 2^53 µs (285 years).
    busy.as_micros() as f64 / 1000.0
}

/// `confinement.planned.seccomp.socketFamilies`: the seccomp profile of a
/// mediated run also admits AF_INET/AF_INET6 sockets (for the relay on
/// 127.0.0.1); the receipt (and its head) says which it was.
pub fn socket_families(document: &mut Value, mediated: bool) {
    let families: &[&str] = if mediated {
        &["AF_UNIX", "AF_INET", "AF_INET6"]
    } else {
        &["AF_UNIX"]
    };
    if let Some(seccomp) = document
        .pointer_mut("/confinement/planned/seccomp")
        .and_then(Value::as_object_mut)
    {
        seccomp.insert("socketFamilies".into(), json!(families));
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_run_without_mediation_gets_an_empty_list_and_unix_only_sockets() {
        let mut doc = json!({"confinement": {"planned": {"seccomp": {"profile": "p"}}}});
        attach(&mut doc, None);
        assert_eq!(doc["networkReceipts"], json!([]));
        assert_eq!(
            doc["confinement"]["planned"]["seccomp"]["socketFamilies"],
            json!(["AF_UNIX"])
        );
        assert!(doc.get("networkReceiptsDropped").is_none());
        assert!(doc.get("networkEngineMs").is_none());
    }

    #[test]
    fn engine_time_is_in_milliseconds_to_the_microsecond() {
        assert_eq!(engine_ms(std::time::Duration::from_nanos(1_234_567)), 1.234);
        assert_eq!(engine_ms(std::time::Duration::ZERO), 0.0);
    }
}
