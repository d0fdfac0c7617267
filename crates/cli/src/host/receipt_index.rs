//! Where the host keeps receipts (docs/remote.md § Receipts kept on the
//! host), laid out so that `receipt-query` reads one directory, not every
//! receipt the host ever kept:
//!
//! ```text
//! stateDir/receipts/                        0700
//!   t-<sha256 hex of the tenant>/           0700, one per tenant
//!     i-<invocationId>/                     0700, one per invocation id
//!       <unix ns, 20 digits>.<8 hex>.json   0600, one per run
//!   no-tenant/i-<invocationId>/…            a lost run whose marker named no tenant
//!   .<random>.tmp                           a receipt being written
//! ```
//!
//! - Tenant isolation by construction: a query reads only its own tenant's
//!   directory, named by a digest (a tenant name may hold `/` or `..`: a
//!   certificate CN, a token's tenant), and still checks `remote.tenant`
//!   of each receipt it serves.
//! - The invocation id is checked against the launcher's alphabet
//!   (`[A-Za-z0-9._:-]{1,128}`) before it names a path; the `i-` prefix
//!   makes `.` and `..` ordinary names.
//! - Crash safety: a receipt is written whole to a temp file at the top of
//!   `receipts/`, fsynced, then renamed into its directory (and the
//!   directory fsynced): a lookup never sees a half-written receipt, and
//!   what a crash leaves is a `.tmp` the start-up sweep removes.
//! - Newest first without reading a file: names begin with the time.
//! - A host upgraded from the flat layout (`receipts/<id>.<8 hex>.json`)
//!   moves those files into place once it listens ([`migrate_flat`], off
//!   the start path); until the move is done a query also reads the flat
//!   files of its id ([`find_during_move`]).

use std::io::Write;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::Value;
use sha2::Digest;

/// Most receipts one query answers (an invocation id is the client's to
/// choose, so it may name many runs): the newest first.
pub const MAX_FOUND: usize = 16;
/// A receipt file larger than one control frame could never be sent.
const MAX_RECEIPT_BYTES: u64 = super::frame::MAX_CONTROL_BYTES as u64;
/// The launcher's bound on an invocation id (launch_request.rs).
const MAX_INVOCATION_ID_BYTES: usize = 128;
/// The directory of receipts whose run named no tenant.
pub(super) const NO_TENANT: &str = "no-tenant";

/// `t-<sha256 hex>`: a fixed-length name whatever the tenant's bytes.
fn tenant_dir(tenant: &str) -> String {
    let digest = sha2::Sha256::digest(tenant.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("t-{hex}")
}

/// Whether `id` is an invocation id the launcher accepts (and so a safe
/// path component once prefixed).
fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_INVOCATION_ID_BYTES
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._:-".contains(&b))
}

/// The directory of `tenant`'s receipts of `invocation_id` (`None` for an
/// id outside the alphabet: it names no receipt).
fn run_dir(receipts: &Path, tenant: Option<&str>, invocation_id: &str) -> Option<PathBuf> {
    if !valid_id(invocation_id) {
        return None;
    }
    let owner = tenant.map_or_else(|| NO_TENANT.to_string(), tenant_dir);
    Some(receipts.join(owner).join(format!("i-{invocation_id}")))
}

/// `<unix ns, 20 digits>.<8 hex>.json`: sorts by time as text.
fn receipt_name(at: SystemTime) -> std::io::Result<String> {
    let nanos = at.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let suffix = cordon_launcher::host::process_identity::random_hex(4)?;
    Ok(format!("{nanos:020}.{suffix}.json"))
}

/// The time (unix ns) a kept receipt's file name records; `None` for any
/// other name.
pub(super) fn receipt_time(name: &str) -> Option<u128> {
    is_receipt_name(name)
        .then(|| name.split('.').next()?.parse().ok())
        .flatten()
}

/// Whether `name` is a kept receipt's file name (not a temp file, not
/// anything else that might be in the directory).
fn is_receipt_name(name: &str) -> bool {
    let Some((time, rest)) = name.split_once('.') else {
        return false;
    };
    let Some(suffix) = rest.strip_suffix(".json") else {
        return false;
    };
    time.len() == 20
        && time.bytes().all(|b| b.is_ascii_digit())
        && suffix.len() == 8
        && suffix.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Creates `dir` (0700) if missing; `true` if this call made it.
fn make_dir(dir: &Path) -> std::io::Result<bool> {
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(e),
    }
}

/// fsync of a directory: its new entries survive a power loss.
fn sync_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::File::open(dir)?.sync_all()
}

/// The receipt's `remote.tenant`.
fn owner(receipt: &Value) -> Option<&str> {
    receipt.pointer("/remote/tenant").and_then(Value::as_str)
}

/// When the directory entries a write makes reach the disk.
#[derive(Clone, Copy, PartialEq, Eq)]
enum DirSync {
    /// Each directory fsynced as its entries change (one receipt).
    Each,
    /// One `syncfs` once every entry is made (the flat layout's move).
    AtTheEnd,
}

/// Makes `receipts/<owner>/i-<id>/`, syncing each parent whose entries
/// changed (with [`DirSync::Each`]).
fn make_run_dir(receipts: &Path, run: &Path, sync: DirSync) -> std::io::Result<()> {
    let owner_dir = run.parent().unwrap_or(receipts);
    if make_dir(owner_dir)? && sync == DirSync::Each {
        sync_dir(receipts)?;
    }
    if make_dir(run)? && sync == DirSync::Each {
        sync_dir(owner_dir)?;
    }
    Ok(())
}

/// Keeps `receipt` as the run of `invocation_id` by its `remote.tenant`,
/// written whole or not at all (module doc).
pub fn keep(receipts: &Path, invocation_id: &str, receipt: &Value) -> std::io::Result<PathBuf> {
    let run = run_dir(receipts, owner(receipt), invocation_id).ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "an invocation id outside [A-Za-z0-9._:-]{1,128}",
        )
    })?;
    let mut temp = tempfile::Builder::new()
        .prefix(".")
        .suffix(".tmp")
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600))
        .tempfile_in(receipts)?;
    temp.write_all(receipt.to_string().as_bytes())?;
    temp.as_file().sync_all()?;
    let mut tries = 0;
    loop {
        make_run_dir(receipts, &run, DirSync::Each)?;
        let path = run.join(receipt_name(SystemTime::now())?);
        match temp.persist_noclobber(&path) {
            Ok(_) => {
                sync_dir(&run)?;
                return Ok(path);
            }
            // Retention (receipt_retention.rs) removes a directory it
            // emptied: made again, once more.
            Err(e) if e.error.kind() == std::io::ErrorKind::NotFound && tries < 3 => {
                tries += 1;
                temp = e.file;
            }
            Err(e) => return Err(e.error),
        }
    }
}

/// The receipts kept for `invocation_id` of `tenant`, newest first, at
/// most [`MAX_FOUND`]: one directory listed, at most that many files read
/// (plus any that fail their checks).
pub fn find(receipts: &Path, invocation_id: &str, tenant: &str) -> Vec<Value> {
    let Some(run) = run_dir(receipts, Some(tenant), invocation_id) else {
        return Vec::new();
    };
    let mut names = receipt_names(&run);
    names.sort_unstable_by(|a, b| b.cmp(a));
    names
        .iter()
        .filter_map(|name| read_receipt(&run.join(name)))
        .filter(|receipt| owner(receipt) == Some(tenant))
        .take(MAX_FOUND)
        .collect()
}

/// [`find`] while receipts of the flat layout may remain (the move after
/// an upgrade is in progress): the flat files of this id are read first,
/// then the index (so a receipt renamed between the two reads is seen
/// twice, never missed; the duplicate is dropped), and all of them ordered
/// by time — the index's by their names, the flat ones by their
/// modification time, which is what the move names them by. Lists the
/// whole top directory: only while the move runs.
pub fn find_during_move(receipts: &Path, invocation_id: &str, tenant: &str) -> Vec<Value> {
    let Some(run) = run_dir(receipts, Some(tenant), invocation_id) else {
        return Vec::new();
    };
    let mut found: Vec<(u128, Value)> = Vec::new();
    for entry in std::fs::read_dir(receipts).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if flat_name_id(&name) != Some(invocation_id) {
            continue;
        }
        let modified = entry.metadata().and_then(|m| m.modified());
        if let (Ok(at), Some(receipt)) = (modified, read_receipt(&entry.path())) {
            let ns = at.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
            found.push((ns, receipt));
        }
    }
    for name in receipt_names(&run) {
        let ns = name.split('.').next().and_then(|t| t.parse::<u128>().ok());
        if let (Some(ns), Some(receipt)) = (ns, read_receipt(&run.join(&name))) {
            found.push((ns, receipt));
        }
    }
    found.retain(|(_, receipt)| owner(receipt) == Some(tenant));
    found.sort_by_key(|(ns, _)| std::cmp::Reverse(*ns));
    let mut answer: Vec<Value> = Vec::new();
    for (_, receipt) in found {
        if answer.len() < MAX_FOUND && !answer.contains(&receipt) {
            answer.push(receipt);
        }
    }
    answer
}

/// The kept receipts' file names in `run` (none if it does not exist).
fn receipt_names(run: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(run) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|name| is_receipt_name(name))
        .collect()
}

/// Whether a receipt of `invocation_id` owned by `tenant` was kept at or
/// after `since` (the time its name records): recovery's test for a run
/// whose own receipt was kept before its host died.
pub fn kept_since(receipts: &Path, invocation_id: &str, tenant: &str, since: SystemTime) -> bool {
    let Some(run) = run_dir(receipts, Some(tenant), invocation_id) else {
        return false;
    };
    let Ok(entries) = std::fs::read_dir(&run) else {
        return false;
    };
    let since = since.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    entries
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|name| receipt_time(name).is_some_and(|ns| ns >= since))
        .any(|name| read_receipt(&run.join(name)).is_some_and(|r| owner(&r) == Some(tenant)))
}

fn read_receipt(path: &Path) -> Option<Value> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.file_type().is_file() || meta.len() > MAX_RECEIPT_BYTES {
        return None;
    }
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

/// After an upgrade (run once the host listens, mod.rs): each receipt of
/// the flat layout (`receipts/<id>.<8 hex>.json`, hosts before the index)
/// renamed into its tenant's directory, named by
/// its modification time (the order the flat layout answered in). A file
/// that does not parse stays where it is (never served, as before).
/// Returns how many moved; each rename is atomic, so a crash half-way
/// leaves every receipt at its old name or its new one, and the rest for
/// the next start.
pub fn migrate_flat(receipts: &Path) -> std::io::Result<usize> {
    let mut moved = 0;
    for entry in std::fs::read_dir(receipts)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(id) = flat_name_id(&name) else {
            continue;
        };
        let meta = entry.metadata()?;
        let Some(receipt) = read_receipt(&entry.path()) else {
            continue;
        };
        let Some(run) = run_dir(receipts, owner(&receipt), id) else {
            continue;
        };
        make_run_dir(receipts, &run, DirSync::AtTheEnd)?;
        let target = run.join(receipt_name(meta.modified()?)?);
        std::fs::rename(entry.path(), &target)?;
        moved += 1;
    }
    if moved > 0 {
        // One flush for every directory made and renamed into (an fsync
        // per directory made the move of 10 000 receipts take seconds).
        nix::unistd::syncfs(std::fs::File::open(receipts)?)?;
    }
    Ok(moved)
}

/// The id of a flat-layout name `<invocationId>.<8 hex>.json` (an id may
/// itself hold dots).
fn flat_name_id(name: &str) -> Option<&str> {
    let stem = name.strip_suffix(".json")?;
    let (id, suffix) = stem.rsplit_once('.')?;
    let hex = suffix.len() == 8 && suffix.bytes().all(|b| b.is_ascii_hexdigit());
    (hex && valid_id(id)).then_some(id)
}

#[cfg(test)]
#[path = "receipt_index_tests.rs"]
mod tests;
