//! A remote run's receipt: the launcher's, plus `remote: {hostId,
//! hostVersion, transport, auth, tenant, clamped}`; kept on the host in
//! `stateDir/receipts/<invocationId>.<random>.json` (written atomically,
//! 0600: the operator's record, whatever became of the client) and sent
//! in `exit` as what a local `wait()` resolves.

use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use cordon_launcher::events::{Completion, LaunchFailure};
use cordon_launcher::host::atomic_file::{self, Durability};
use serde_json::{json, Value};

use super::peer::Peer;
use super::session::TenantAuth;
use super::Host;

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

pub fn settle(
    outcome: Result<Completion, LaunchFailure>,
    invocation_id: &str,
    remote: &Remote,
) -> Exit {
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
    if let Some(receipt) = &receipt {
        keep(&remote.host.receipts, invocation_id, receipt);
    }
    Exit { frame, stop_reason }
}

/// As lib/isolated-execution.js reads them: the receipt's array, or none.
fn network_receipts(receipt: &Value) -> Value {
    match receipt.get("networkReceipts") {
        Some(list @ Value::Array(_)) => list.clone(),
        _ => json!([]),
    }
}

pub fn keep(dir: &Path, invocation_id: &str, receipt: &Value) {
    let suffix = cordon_launcher::host::process_identity::random_hex(4).unwrap_or_default();
    let path = dir.join(format!("{invocation_id}.{suffix}.json"));
    if let Err(e) = atomic_file::write(
        &path,
        receipt.to_string().as_bytes(),
        0o600,
        Durability::Synced,
    ) {
        eprintln!("cordon host: keep the receipt {}: {e}", path.display());
    }
}

/// Most receipts one query answers (an invocation id is the client's to
/// choose, so it may name many runs): the newest first.
pub const MAX_FOUND: usize = 16;

/// The receipts kept for `invocation_id` whose `remote.tenant` is
/// `tenant` (another tenant's runs are not there, as far as it can tell),
/// newest first, at most [`MAX_FOUND`].
pub fn find(dir: &Path, invocation_id: &str, tenant: &str) -> Vec<Value> {
    let mut found = owned(dir, invocation_id, tenant);
    found.sort_by_key(|(modified, _)| std::cmp::Reverse(*modified));
    found.into_iter().take(MAX_FOUND).map(|(_, r)| r).collect()
}

/// Whether a receipt for `invocation_id` of `tenant` was kept at or after `since`.
pub fn kept_since(
    dir: &Path,
    invocation_id: &str,
    tenant: &str,
    since: std::time::SystemTime,
) -> bool {
    owned(dir, invocation_id, tenant)
        .iter()
        .any(|(modified, _)| *modified >= since)
}

/// Every readable receipt of `invocation_id` owned by `tenant`, with when it was kept.
fn owned(dir: &Path, invocation_id: &str, tenant: &str) -> Vec<(std::time::SystemTime, Value)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| names_run(&e.file_name().to_string_lossy(), invocation_id))
        .filter_map(|e| {
            let modified = e.metadata().and_then(|m| m.modified()).ok()?;
            let text = std::fs::read_to_string(e.path()).ok()?;
            let receipt: Value = serde_json::from_str(&text).ok()?;
            let owner = receipt.pointer("/remote/tenant").and_then(Value::as_str);
            (owner == Some(tenant)).then_some((modified, receipt))
        })
        .collect()
}

/// `<invocationId>.<8 hex>.json` exactly: an id may itself hold dots, so a
/// prefix match would find another run's receipts.
fn names_run(name: &str, invocation_id: &str) -> bool {
    let Some(stem) = name.strip_suffix(".json") else {
        return false;
    };
    match stem.rsplit_once('.') {
        Some((id, suffix)) => {
            id == invocation_id
                && suffix.len() == 8
                && suffix.bytes().all(|b| b.is_ascii_hexdigit())
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::names_run;

    #[test]
    fn a_receipt_file_names_its_run_exactly_not_by_prefix() {
        assert!(names_run("a.b.0123abcd.json", "a.b"));
        assert!(!names_run("a.b.0123abcd.json", "a"));
        assert!(!names_run(".a.0123abcd.json.x.tmp", "a"));
        assert!(!names_run("a.0123abcd.jsonx", "a"));
    }
}
