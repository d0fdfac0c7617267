//! A remote run's receipt: the launcher's, plus `remote: {hostId,
//! hostVersion, transport, auth, tenant, clamped}`; kept on the host under
//! `stateDir/receipts/` (receipt_index.rs: per tenant and invocation id,
//! written atomically, 0600: the operator's record, whatever became of the
//! client) and sent in `exit` as what a local `wait()` resolves.

use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use cordon_launcher::events::{Completion, LaunchFailure};
use serde_json::{json, Value};

use super::peer::Peer;
use super::session::TenantAuth;
use super::Host;
use super::{receipt_index, recovery};

/// Who and what the `remote` section records.
pub struct Remote<'a> {
    pub host: &'a Host,
    pub peer: &'a Peer,
    pub who: &'a TenantAuth,
    pub clamped: &'a Value,
}

impl Remote<'_> {
    /// The receipt's `remote` section.
    pub fn section(&self) -> Value {
        json!({
            "hostId": self.host.config.host_id,
            "hostVersion": env!("CARGO_PKG_VERSION"),
            "transport": self.peer.transport.as_str(),
            "auth": self.who.auth.as_str(),
            "tenant": self.who.tenant,
            "clamped": self.clamped,
        })
    }
}

/// The `exit` frame and the stop reason (for the metrics).
pub struct Exit {
    pub frame: Value,
    pub stop_reason: Option<String>,
    /// The receipt to keep ([`keep_then_release`]) before `exit` is sent.
    pub receipt: Option<Value>,
}

/// `stateDir/receipts` (0700).
pub fn receipts_dir(state_dir: &Path) -> std::io::Result<PathBuf> {
    let dir = state_dir.join("receipts");
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)?;
    Ok(dir)
}

pub fn settle(outcome: Result<Completion, LaunchFailure>, remote: &Remote) -> Exit {
    let section = remote.section();
    let decorate = |mut receipt: Value| {
        if let Value::Object(map) = &mut receipt {
            map.insert("remote".into(), section.clone());
        }
        receipt
    };
    let (frame, receipt) = match outcome {
        Ok(done) => {
            let receipt = decorate(done.receipt);
            let frame = json!({
                "returncode": done.returncode,
                "signal": done.signal,
                "networkReceipts": network_receipts(&receipt),
                "receipt": receipt,
            });
            (frame, Some(receipt))
        }
        // What a local wait() rejects with: its code, message and receipt.
        Err(failure) => {
            let receipt = failure.receipt.map(decorate);
            let frame = json!({
                "error": {"code": failure.code.as_str(), "message": failure.message},
                "receipt": receipt.clone().unwrap_or_else(|| json!({})),
            });
            (frame, receipt)
        }
    };
    let stop_reason = receipt
        .as_ref()
        .and_then(|r| r.pointer("/stop/reason"))
        .and_then(Value::as_str)
        .map(str::to_string);
    Exit {
        frame,
        stop_reason,
        receipt,
    }
}

/// Keeps the run's receipt (fsyncs: on the blocking pool, never on a
/// runtime worker), then drops `marker` (recovery.rs): in that order, so a
/// host killed in between leaves a marker whose receipt is found kept, and
/// never a run with neither. Returns once both are done: the caller sends
/// `exit` after, so a client never holds a receipt the host did not keep.
pub async fn keep_then_release(
    dir: PathBuf,
    invocation_id: String,
    receipt: Option<Value>,
    marker: recovery::Marker,
) {
    let kept = tokio::task::spawn_blocking(move || {
        if let Some(receipt) = &receipt {
            keep(&dir, &invocation_id, receipt);
        }
        marker.remove();
    })
    .await;
    if let Err(e) = kept {
        let _ = writeln_stderr(&format!("keep a receipt: the task failed: {e}"));
    }
}

/// A line on stderr from a blocking-pool thread (never panics, as
/// `eprintln!` does when stderr is gone).
fn writeln_stderr(text: &str) -> std::io::Result<()> {
    use std::io::Write;
    writeln!(std::io::stderr(), "cordon host: {text}")
}

/// As lib/isolated-execution.js reads them: the receipt's array, or none.
fn network_receipts(receipt: &Value) -> Value {
    match receipt.get("networkReceipts") {
        Some(list @ Value::Array(_)) => list.clone(),
        _ => json!([]),
    }
}

/// Keeps `receipt` (receipt_index.rs); a failure is said on stderr: the
/// client still gets its `exit`.
pub fn keep(dir: &Path, invocation_id: &str, receipt: &Value) {
    // What the tenant's arguments and allowlist take of the host's disk is
    // bounded (kept_receipt.rs); the client's `exit` has them whole when
    // they fit its frame (exit_bound.rs).
    let cut = super::kept_receipt::bounded(receipt);
    let receipt = cut.as_ref().unwrap_or(receipt);
    if let Err(e) = receipt_index::keep(dir, invocation_id, receipt) {
        let _ = writeln_stderr(&format!(
            "keep the receipt of {invocation_id} in {}: {e}",
            dir.display()
        ));
    }
}
