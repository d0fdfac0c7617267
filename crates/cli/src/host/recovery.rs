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
//!    writes its temp files at the top of `receipts/` only). Receipts of the
//!    flat layout are moved into the index here only when markers are left
//!    (a lost run's own receipt may be among them); otherwise the host
//!    moves them after its listener is up (mod.rs), and queries read them
//!    where they are meanwhile (receipt_index.rs).
//!
//! The sandboxes themselves do not outlive their host: the launcher arms
//! `PR_SET_PDEATHSIG(SIGKILL)` in bwrap before exec, bwrap runs with
//! `--die-with-parent`, and the sandbox's init is pid 1 of its own pid
//! namespace, whose death kills everything in it. All but one case: an
//! init whose outer bwrap died before the init armed its own parent-death
//! signal (a host killed while bwrap set the run up) lives on: released,
//! its program is held back by the sandbox's starter (the launcher's
//! plan/starter.rs) and it ends; not yet released, it blocks, and the next
//! host kills it as it starts (mod.rs `prepare_state`, orphan_init.rs).

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
    /// [`Marker::write`] on the blocking pool (it fsyncs): never on a
    /// runtime worker.
    pub async fn write_off_runtime(
        runs: PathBuf,
        invocation_id: String,
        remote: Value,
    ) -> std::io::Result<Marker> {
        tokio::task::spawn_blocking(move || Marker::write(&runs, &invocation_id, &remote))
            .await
            .map_err(std::io::Error::other)?
    }

    /// Removes the marker now (on this thread).
    pub fn remove(mut self) {
        let path = std::mem::take(&mut self.path);
        let _ = std::fs::remove_file(path);
    }

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
    /// On the host's runtime the unlink goes to the blocking pool (a drop
    /// on a refused launch must not stall the worker it runs on).
    fn drop(&mut self) {
        let path = std::mem::take(&mut self.path);
        if path.as_os_str().is_empty() {
            return; // removed already
        }
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn_blocking(move || std::fs::remove_file(path));
            }
            Err(_) => {
                let _ = std::fs::remove_file(path);
            }
        }
    }
}

/// What the sweep found (for the host's log line).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Swept {
    pub lost_runs: usize,
    pub workspaces: usize,
    pub temp_files: usize,
    /// Entries it could not remove (a sandbox uid's `chmod 000` directory in
    /// an upload, under a non-root host, say): left, counted, never fatal —
    /// a host that refused to start over them would never start again.
    pub left: usize,
    pub migrated_receipts: usize,
}

/// Step 3. Runs before anything listens, so nothing it removes is in use.
/// Only a directory it cannot read fails it; each entry is best effort.
pub fn sweep(workspaces: &Path, receipts: &Path, runs: &Path) -> std::io::Result<Swept> {
    let mut swept = Swept::default();
    for entry in std::fs::read_dir(workspaces)? {
        let entry = entry?;
        if entry.file_name().to_string_lossy().starts_with("ws-") {
            match std::fs::remove_dir_all(entry.path()) {
                Ok(()) => swept.workspaces += 1,
                Err(_) => swept.left += 1,
            }
        }
    }
    for dir in [receipts, runs] {
        remove_temp_files(dir, &mut swept)?;
    }
    let mut markers = Vec::new();
    for entry in std::fs::read_dir(runs)? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "json") {
            markers.push(path);
        }
    }
    if !markers.is_empty() {
        // A lost run's own receipt may be in the flat layout (kept by a
        // host of the earlier version that died before removing the
        // marker): `settled_after` reads the index, so the move comes
        // first here. Without markers it is off the start path
        // (mod.rs: after the listener is up).
        swept.migrated_receipts = receipt_index::migrate_flat(receipts)?;
    }
    for path in markers {
        if lose(&path, receipts) {
            swept.lost_runs += 1;
        }
        if std::fs::remove_file(&path).is_err() {
            swept.left += 1;
        }
    }
    Ok(swept)
}

/// atomic_file's temp files (`.<name>.<random>.tmp`): a write the host
/// did not finish. The target was never renamed into place.
fn remove_temp_files(dir: &Path, swept: &mut Swept) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') && name.ends_with(".tmp") {
            match std::fs::remove_file(entry.path()) {
                Ok(()) => swept.temp_files += 1,
                Err(_) => swept.left += 1,
            }
        }
    }
    Ok(())
}

/// Keeps the receipt of a run whose host was lost, unless the run's own
/// receipt was kept already (the host died after keeping it, before it
/// removed the marker): a `host-lost` one then would be false, and newer.
/// A marker that cannot be read still names its run in its file name.
/// Returns whether it kept a `host-lost` receipt.
fn lose(marker: &Path, receipts: &Path) -> bool {
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
    if settled_after(marker, receipts, &invocation_id, &found) {
        return false;
    }
    let receipt = lost_receipt(&invocation_id, &found);
    receipt_store::keep(receipts, &invocation_id, &receipt);
    true
}

/// Whether a receipt of this run's id and tenant was kept after its marker
/// was written: the run's own (markers are written at launch, receipts at
/// the end, and an earlier run of the same id was kept before this launch).
fn settled_after(marker: &Path, receipts: &Path, invocation_id: &str, found: &Value) -> bool {
    let Some(tenant) = found.pointer("/remote/tenant").and_then(Value::as_str) else {
        return false;
    };
    let Ok(written) = std::fs::metadata(marker).and_then(|m| m.modified()) else {
        return false;
    };
    receipt_index::kept_since(receipts, invocation_id, tenant, written)
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
                        its exit was never observed; its sandbox was bound to die with the host",
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
                left: 0,
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
    fn a_run_whose_receipt_was_kept_before_the_host_died_gets_no_host_lost_one() {
        let state = tempfile::tempdir().unwrap();
        let ws = state.path().join("workspaces");
        std::fs::create_dir_all(&ws).unwrap();
        let receipts = receipt_store::receipts_dir(state.path()).unwrap();
        let runs = runs_dir(state.path()).unwrap();
        // An earlier run of the same id, kept before this launch: not this run's.
        receipt_store::keep(
            &receipts,
            "same",
            &json!({"remote": {"tenant": "t"}, "n": 0}),
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::mem::forget(Marker::write(&runs, "same", &json!({"tenant": "t"})).unwrap());
        std::mem::forget(Marker::write(&runs, "done", &json!({"tenant": "t"})).unwrap());
        std::thread::sleep(std::time::Duration::from_millis(20));
        // The run's own receipt, kept; the host dies before it drops the marker.
        receipt_store::keep(
            &receipts,
            "done",
            &json!({"remote": {"tenant": "t"}, "n": 1}),
        );
        let swept = sweep(&ws, &receipts, &runs).unwrap();
        assert_eq!(swept.lost_runs, 1, "only `same` was lost");
        assert_eq!(std::fs::read_dir(&runs).unwrap().count(), 0);
        let done = receipt_index::find(&receipts, "done", "t");
        assert_eq!(done.len(), 1);
        assert_eq!(done[0]["n"], 1, "the run's true receipt, alone");
        let same = receipt_index::find(&receipts, "same", "t");
        assert_eq!(same.len(), 2);
        assert_eq!(same[0]["outcome"]["status"], "host-lost");
    }

    #[test]
    fn a_workspace_it_cannot_remove_is_counted_and_left_and_the_sweep_goes_on() {
        let state = tempfile::tempdir().unwrap();
        let ws = state.path().join("workspaces");
        std::fs::create_dir_all(ws.join("ws-stuck")).unwrap();
        std::fs::create_dir_all(ws.join("ws-free")).unwrap();
        let stuck = ws.join("ws-stuck/file");
        std::fs::write(&stuck, "x").unwrap();
        // Immutable: even root cannot unlink it (ext4 here; the test fails loudly elsewhere).
        // Cleared on drop, so a failing assertion still leaves a removable temp dir.
        struct Immutable<'a>(&'a Path);
        impl Drop for Immutable<'_> {
            fn drop(&mut self) {
                let _ = std::process::Command::new("chattr")
                    .arg("-i")
                    .arg(self.0)
                    .status();
            }
        }
        let made = std::process::Command::new("chattr")
            .arg("+i")
            .arg(&stuck)
            .status();
        assert!(
            made.is_ok_and(|s| s.success()),
            "chattr +i on {}",
            stuck.display()
        );
        let _guard = Immutable(&stuck);
        let receipts = receipt_store::receipts_dir(state.path()).unwrap();
        let runs = runs_dir(state.path()).unwrap();
        std::mem::forget(Marker::write(&runs, "r", &json!({"tenant": "t"})).unwrap());
        let swept = sweep(&ws, &receipts, &runs);
        let swept = swept.unwrap();
        assert_eq!((swept.workspaces, swept.left, swept.lost_runs), (1, 1, 1));
        assert!(!ws.join("ws-free").exists());
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
