//! What a host killed mid-run (SIGKILL, a crash, the machine's OOM killer)
//! leaves behind, and how the next host on the same `stateDir` accounts for
//! it (docs/remote.md § Receipts kept on the host):
//! 1. `stateDir/lock` is held (`flock`) for the host's life: a second host
//!    on the same state refuses to start (the sweep below would take a
//!    live host's runs for lost ones);
//! 2. every run has a marker `runs/<invocationId>.<random>.json` from just
//!    before its launch until its receipt is kept;
//! 3. at start, before the listener exists, each marker left is a run the
//!    previous host never saw end: it gets a receipt whose outcome is
//!    `host-lost` (no exit status, no end time: nobody observed them), and
//!    the session directories under `workspaces/` and the half-written
//!    temp files of `receipts/` and `runs/` are removed (receipt_index.rs
//!    writes its temp files at the top of `receipts/` only), and receipts
//!    of the flat layout are moved into the index.
//!
//! The sandboxes themselves do not outlive their host: the launcher arms
//! `PR_SET_PDEATHSIG(SIGKILL)` in bwrap before exec, bwrap runs with
//! `--die-with-parent`, and the sandbox's init is pid 1 of its own pid
//! namespace, whose death kills everything in it.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use cordon_egress::timestamp::rfc3339;
use cordon_launcher::host::atomic_file::{self, Durability};
use nix::fcntl::{Flock, FlockArg};
use serde_json::{json, Value};

use super::{receipt_index, receipt_store};

/// `stateDir/runs` (0700): one marker per run in progress.
pub fn runs_dir(state_dir: &Path) -> std::io::Result<PathBuf> {
    let dir = state_dir.join("runs");
    std::os::unix::fs::DirBuilderExt::mode(std::fs::DirBuilder::new().recursive(true), 0o700)
        .create(&dir)?;
    Ok(dir)
}

/// Step 1: the state's lock, held as long as the value lives.
pub fn lock_state(state_dir: &Path) -> Result<Flock<File>, String> {
    let path = state_dir.join("lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Flock::lock(file, FlockArg::LockExclusiveNonblock).map_err(|(_, errno)| {
        format!(
            "{}: another host uses this stateDir ({errno})",
            state_dir.display()
        )
    })
}

/// A run in progress, on disk (step 2); removed when dropped, so drop it
/// only once the run's receipt is kept (or the launch was refused).
pub struct Marker {
    path: PathBuf,
}

impl Marker {
    /// `remote` is the receipt's `remote` section as it will be.
    pub fn write(runs: &Path, invocation_id: &str, remote: &Value) -> std::io::Result<Marker> {
        let suffix = cordon_launcher::host::process_identity::random_hex(4)?;
        let path = runs.join(format!("{invocation_id}.{suffix}.json"));
        let body = json!({
            "invocationId": invocation_id,
            "startedAt": rfc3339(SystemTime::now()),
            "remote": remote,
        });
        atomic_file::write(
            &path,
            body.to_string().as_bytes(),
            0o600,
            Durability::Synced,
        )?;
        Ok(Marker { path })
    }
}

impl Drop for Marker {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// What the sweep found (for the host's log line).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Swept {
    pub lost_runs: usize,
    pub workspaces: usize,
    pub temp_files: usize,
    pub migrated_receipts: usize,
}

/// Step 3. Runs before anything listens, so nothing it removes is in use.
pub fn sweep(workspaces: &Path, receipts: &Path, runs: &Path) -> std::io::Result<Swept> {
    let mut swept = Swept::default();
    for entry in std::fs::read_dir(workspaces)? {
        let entry = entry?;
        if entry.file_name().to_string_lossy().starts_with("ws-") {
            std::fs::remove_dir_all(entry.path())?;
            swept.workspaces += 1;
        }
    }
    for dir in [receipts, runs] {
        swept.temp_files += remove_temp_files(dir)?;
    }
    swept.migrated_receipts = receipt_index::migrate_flat(receipts)?;
    for entry in std::fs::read_dir(runs)? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "json") {
            lose(&path, receipts);
            std::fs::remove_file(&path)?;
            swept.lost_runs += 1;
        }
    }
    Ok(swept)
}

/// atomic_file's temp files (`.<name>.<random>.tmp`): a write the host
/// did not finish. The target was never renamed into place.
fn remove_temp_files(dir: &Path) -> std::io::Result<usize> {
    let mut removed = 0;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') && name.ends_with(".tmp") {
            std::fs::remove_file(entry.path())?;
            removed += 1;
        }
    }
    Ok(removed)
}

/// Keeps the receipt of a run whose host was lost. A marker that cannot be
/// read still names its run in its file name.
fn lose(marker: &Path, receipts: &Path) {
    let text = std::fs::read_to_string(marker).unwrap_or_default();
    let found: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    let name = marker.file_stem().map(|s| s.to_string_lossy().into_owned());
    let from_name = name
        .as_deref()
        .and_then(|n| n.rsplit_once('.'))
        .map(|(id, _)| id.to_string());
    let invocation_id = found
        .get("invocationId")
        .and_then(Value::as_str)
        .map(str::to_string)
        .or(from_name)
        .unwrap_or_default();
    let receipt = lost_receipt(&invocation_id, &found);
    receipt_store::keep(receipts, &invocation_id, &receipt);
}

/// What is known of a run whose host died under it: who asked, when it
/// began, and that its end was never observed. Every exit field is null.
pub fn lost_receipt(invocation_id: &str, marker: &Value) -> Value {
    json!({
        "receiptVersion": cordon_launcher::receipt::RECEIPT_VERSION,
        "invocationId": invocation_id,
        "startedAt": marker.get("startedAt"),
        "endedAt": null,
        "durationMs": null,
        "outcome": {
            "status": "host-lost",
            "exitCode": null,
            "signal": null,
            "message": "the host ended (killed or crashed) while this run was in progress; \
                        its exit was never observed, and the sandbox died with the host",
        },
        "stop": {
            "requested": false,
            "reason": "host-lost",
            "gracefulStopAttempted": false,
            "forcedStopAttempted": false,
            "containmentConfirmed": null,
        },
        "recoveredAt": rfc3339(SystemTime::now()),
        "remote": marker.get("remote"),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_left_marker_becomes_a_host_lost_receipt_and_leftovers_are_removed() {
        let state = tempfile::tempdir().unwrap();
        let ws = state.path().join("workspaces");
        let receipts = receipt_store::receipts_dir(state.path()).unwrap();
        let runs = runs_dir(state.path()).unwrap();
        std::fs::create_dir_all(ws.join("ws-abc/sub")).unwrap();
        std::fs::write(receipts.join(".r1.1234.json.x.tmp"), "{").unwrap();
        // A receipt of the flat layout whose run named no tenant: moved
        // to no-tenant/, where no query reads.
        std::fs::write(receipts.join("kept.0000abcd.json"), "{}").unwrap();
        let marker = Marker::write(&runs, "run-1", &json!({"tenant": "t"})).unwrap();
        std::mem::forget(marker); // the host was killed: nothing dropped it
        let swept = sweep(&ws, &receipts, &runs).unwrap();
        assert_eq!(
            swept,
            Swept {
                lost_runs: 1,
                workspaces: 1,
                temp_files: 1,
                migrated_receipts: 1
            }
        );
        assert_eq!(std::fs::read_dir(&ws).unwrap().count(), 0);
        assert_eq!(std::fs::read_dir(&runs).unwrap().count(), 0);
        let kept = receipt_index::find(&receipts, "run-1", "t");
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0]["outcome"]["status"], "host-lost");
        assert_eq!(kept[0]["outcome"]["exitCode"], Value::Null);
        assert_eq!(kept[0]["remote"]["tenant"], "t");
    }

    #[test]
    fn a_second_lock_on_the_same_state_is_refused_while_the_first_is_held() {
        let state = tempfile::tempdir().unwrap();
        let first = lock_state(state.path()).unwrap();
        assert!(lock_state(state.path())
            .unwrap_err()
            .contains("another host"));
        drop(first);
        assert!(lock_state(state.path()).is_ok());
    }
}
