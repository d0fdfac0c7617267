//! The receipt: what was planned, what was observed of the running
//! sandbox (observe/), and how the run ended — written atomically to
//! `receipt.json` in the control root and read back by `wait()`. A claim
//! that was not observed is never reported as applied: `confinement.planned`
//! is what the launcher asked for, `confinement.observed` what the kernel
//! showed. Format documented in docs/receipts.md.

pub mod canonical;
pub mod js_number;
pub mod network_receipts;
pub mod run_result;

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::time::SystemTime;

use serde_json::{json, Value};

use crate::host::control_root::{ControlRoot, ControlRootError};
use crate::plan::{BindRole, Plan};
use crate::request::policy::Policy;
use crate::run::stop_ladder::StopRecord;
use cordon_egress::timestamp::rfc3339;

/// Bumped on any incompatible change of the receipt's shape.
/// 2: `confinement` split into `planned`, `observed`, `mismatches` and
/// `cgroupOutcome`.
pub const RECEIPT_VERSION: u64 = 2;
pub const RECEIPT_FILE: &str = "receipt.json";
/// Namespaces every plan unshares (bwrap also always makes a mount
/// namespace, observed as `mnt`).
pub use crate::plan::bwrap_argv::NAMESPACES;

/// How the sandbox ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Exited { code: i32 },
    Signaled { signal: String },
    SpawnFailed { message: String },
}

/// Everything the receipt records besides the plan and policy.
#[derive(Debug, Clone)]
pub struct RunFacts {
    pub invocation_id: String,
    pub backend_version: String,
    pub executable_sha256: String,
    pub sandbox_uid: u32,
    pub started_at: SystemTime,
    pub ended_at: SystemTime,
    pub outcome: Outcome,
    pub stop: StopRecord,
    pub containment_confirmed: bool,
    pub bytes: ByteCounts,
    /// seccomp profile, cgroup and temp as planned (None: not planned).
    pub confinement: Option<crate::plan::confinement::ConfinementReceipt>,
    /// `confinement.observed` (observe::report_json); None: no sandbox ran.
    pub observed: Option<Value>,
    /// Where the observation differed from the plan; non-empty fails the run.
    pub mismatches: Vec<crate::observe::compare::Mismatch>,
    /// Caller-named host paths bound into the sandbox, as opened.
    pub host_binds: Vec<HostBind>,
    /// `confinement.channels.namespace`: where fd 3's socket pair was made
    /// (`"empty"`, `"provider"`); None: bwrap was never started.
    pub channel_namespace: Option<&'static str>,
    /// `confinement.channels.fd4Namespace`: where the fd-4 channel's pair
    /// was made; None without one (no mediated network with fd 4).
    pub fd4_namespace: Option<&'static str>,
}

/// A caller-named host path (workspace, extra) as the launcher opened it
/// (no symlink followed) and bwrap bound it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HostBind {
    pub source: std::path::PathBuf,
    pub dest: std::path::PathBuf,
    pub writable: bool,
    pub device: u64,
    pub inode: u64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ByteCounts {
    pub protocol_in: u64,
    pub protocol_in_discarded: u64,
    pub protocol_out: u64,
    pub stderr: u64,
}

/// The receipt document.
pub fn build(plan: &Plan, policy: &Policy, facts: &RunFacts) -> Value {
    let duration_ms = facts
        .ended_at
        .duration_since(facts.started_at)
        .unwrap_or_default()
        .as_millis() as u64;
    json!({
        "receiptVersion": RECEIPT_VERSION,
        "invocationId": facts.invocation_id,
        "backend": {"name": "bubblewrap", "version": facts.backend_version, "path": plan.bwrap},
        "command": {
            "argv": plan.argv,
            "executable": plan
                .binds
                .iter()
                .find(|b| b.role == BindRole::Executable)
                .map(|b| &b.dest),
            "executableSha256": facts.executable_sha256,
        },
        "policy": {
            "digest": policy.digest(),
            "network": policy.network_json(),
            "filesystem": policy.filesystem_json(),
            "resources": policy.resources_json(),
        },
        "confinement": confinement_json(plan, facts),
        "startedAt": rfc3339(facts.started_at),
        "endedAt": rfc3339(facts.ended_at),
        "durationMs": duration_ms,
        "outcome": outcome_json(&facts.outcome),
        "stop": {
            "requested": facts.stop.reason.is_some(),
            "reason": facts.stop.reason.map(|r| r.as_str()),
            "gracefulStopAttempted": facts.stop.graceful_attempted,
            "forcedStopAttempted": facts.stop.forced_attempted,
            "containmentConfirmed": facts.containment_confirmed,
        },
        "bytes": {
            "protocolIn": facts.bytes.protocol_in,
            "protocolInDiscarded": facts.bytes.protocol_in_discarded,
            "protocolOut": facts.bytes.protocol_out,
            "stderr": facts.bytes.stderr,
        },
    })
}

/// The top-level receipt fields that exist only once the sandbox is gone
/// (with `confinement.cgroupOutcome` and, for a mediated run,
/// `networkReceipts`): how and when it ended, whether its processes were
/// confirmed gone, the bytes it exchanged.
pub const END_FIELDS: [&str; 5] = ["endedAt", "durationMs", "outcome", "stop", "bytes"];

/// The receipt as far as it is known while the sandbox still runs: `build`
/// without [`END_FIELDS`] and `confinement.cgroupOutcome`, so every field it
/// has is the final receipt's, and no end field is ever guessed.
pub fn head(plan: &Plan, policy: &Policy, facts: &RunFacts) -> Value {
    let mut document = build(plan, policy, facts);
    if let Some(fields) = document.as_object_mut() {
        for field in END_FIELDS {
            fields.remove(field);
        }
    }
    if let Some(confinement) = document
        .get_mut("confinement")
        .and_then(Value::as_object_mut)
    {
        confinement.remove("cgroupOutcome");
    }
    document
}

fn outcome_json(outcome: &Outcome) -> Value {
    match outcome {
        Outcome::Exited { code } => json!({"status": "exited", "exitCode": code, "signal": null}),
        Outcome::Signaled { signal } => {
            json!({"status": "signaled", "exitCode": null, "signal": signal})
        }
        Outcome::SpawnFailed { message } => {
            json!({"status": "spawn-failed", "exitCode": null, "signal": null, "message": message})
        }
    }
}

fn confinement_json(plan: &Plan, facts: &RunFacts) -> Value {
    let rlimits: Vec<Value> = plan
        .rlimits
        .iter()
        .map(|r| json!({"name": r.name, "soft": r.soft, "hard": r.hard}))
        .collect();
    let parts = facts.confinement.as_ref();
    json!({
        "planned": {
            "namespaces": NAMESPACES,
            "uid": facts.sandbox_uid,
            // The run's host gid and how its uid was chosen.
            "gid": plan.identity.map_or_else(provider_gid, |id| id.gid),
            "uidAllocation": plan.uid_allocation.as_str(),
            "identity": identity_json(plan),
            "seccomp": parts.map(|c| c.seccomp.clone()),
            "rlimits": rlimits,
            "cgroup": parts.map(|c| c.cgroup.clone()),
            "temp": parts.map(|c| c.temp.clone()),
            // Every filesystem the program can write and its bound.
            "writableFilesystems": plan.writable_filesystems(),
            // Caller-named host paths: what was bound (device, inode).
            "hostBinds": facts.host_binds,
        },
        "observed": facts.observed,
        "mismatches": facts.mismatches,
        "channels": facts.channel_namespace.map(|namespace| channels(namespace, facts.fd4_namespace)),
        "cgroupOutcome": parts.map(|c| c.cgroup_outcome.clone()),
    })
}

/// Everything a sandbox shares with a non-root provider whose policy
/// chose `process.identity: "shared-with-provider"` (docs/security.md).
pub const SHARED_WITH_PROVIDER: &[&str] = &[
    "host uid and gid (and the provider's supplementary groups)",
    "every per-user kernel quota: epoll watches (fs.epoll.max_user_watches), inotify \
     instances and watches, RLIMIT_NPROC, POSIX message queue bytes, pending signals, \
     keys and keyring bytes, locked memory",
    "a sandbox can exhaust one of these quotas and crash the provider (a provider whose \
     next epoll_ctl fails with ENOSPC aborts)",
    "files and directories of the provider's uid that a bind exposes, with the owner's rights",
];

/// `confinement.channels`: where fd 3's pair was made, and the fd-4
/// channel's when the run has one (each pair is made wherever a pair can be
/// made at that moment, so the two can differ).
fn channels(namespace: &str, fd4: Option<&str>) -> Value {
    match fd4 {
        Some(fd4) => json!({"namespace": namespace, "fd4Namespace": fd4}),
        None => json!({"namespace": namespace}),
    }
}

/// The planned identity: whose uid (never the provider's unless the policy
/// said so) and, when shared, exactly what is shared.
fn identity_json(plan: &Plan) -> Value {
    let provider = json!({"uid": nix::unistd::geteuid().as_raw(), "gid": provider_gid()});
    match plan.uid_allocation {
        crate::plan::run_identity::UidAllocation::SharedWithProvider => json!({
            "mode": "shared-with-provider", "provider": provider, "shared": SHARED_WITH_PROVIDER,
        }),
        allocation => json!({
            "mode": "own", "provider": provider,
            "enteredBy": if allocation.is_subordinate() { "subordinate-user-namespace" } else { "setuid" },
        }),
    }
}

fn provider_gid() -> u32 {
    nix::unistd::getegid().as_raw()
}

/// Why the receipt is not available: it could not be written, or, written,
/// not read back.
#[derive(Debug, thiserror::Error)]
pub enum ReceiptError {
    #[error(transparent)]
    Write(#[from] ControlRootError),
    #[error("read back {path}: {source}")]
    Read {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
}

/// Writes the receipt (temp + rename) and reads it back, as `wait()` reports
/// what is on disk. An error when either step failed: a missing receipt is
/// never reported as a success.
pub fn write_and_read(root: &ControlRoot, receipt: &Value) -> Result<String, ReceiptError> {
    let path = root.write_atomic(RECEIPT_FILE, receipt.to_string().as_bytes())?;
    read_back(path)
}

/// The written receipt's text. O_NOFOLLOW: a link swapped in after the
/// rename is not read through (ELOOP).
fn read_back(path: std::path::PathBuf) -> Result<String, ReceiptError> {
    let read = || -> std::io::Result<String> {
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)?;
        let mut text = String::new();
        file.read_to_string(&mut text)?;
        Ok(text)
    };
    read().map_err(|source| ReceiptError::Read { path, source })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_receipt_swapped_for_a_link_or_gone_is_a_read_error_naming_its_path() {
        let dir = std::env::temp_dir().join(format!(
            "cordon-receipt-read-{}",
            crate::host::process_identity::random_hex(8).unwrap()
        ));
        std::fs::create_dir(&dir).unwrap();
        let elsewhere = dir.join("elsewhere.json");
        std::fs::write(&elsewhere, "{\"forged\":true}").unwrap();
        let receipt = dir.join(RECEIPT_FILE);
        std::os::unix::fs::symlink(&elsewhere, &receipt).unwrap();
        let swapped = read_back(receipt.clone()).expect_err("a link is not read through");
        let ReceiptError::Read { path, source } = &swapped else {
            panic!("{swapped:?}");
        };
        assert_eq!(path, &receipt);
        assert_eq!(source.raw_os_error(), Some(libc::ELOOP));
        assert!(swapped
            .to_string()
            .starts_with(&format!("read back {}", receipt.display())));
        std::fs::remove_file(&receipt).unwrap();
        let gone = read_back(receipt).expect_err("a missing receipt is an error");
        assert!(
            matches!(gone, ReceiptError::Read { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
        );
        std::fs::write(dir.join("real.json"), "{}").unwrap();
        assert_eq!(read_back(dir.join("real.json")).unwrap(), "{}");
        std::fs::remove_dir_all(dir).unwrap();
    }
}
