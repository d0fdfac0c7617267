//! Receipt retention (`receipts` in the configuration, docs/remote.md §
//! Receipts kept on the host): without it every run's receipt stayed on the
//! host's disk for good, ~11 KiB a run (black-box round 9, R9-9). Per owner
//! directory of the index (a tenant, or `no-tenant`):
//! 1. every receipt older than `maxAgeSeconds` (by the time its name
//!    records: no file is opened) is removed;
//! 2. of the rest, all but the newest `maxPerTenant` are removed;
//! 3. an invocation id's directory left empty is removed (a `keep` racing
//!    with it makes the directory again: receipt_index.rs).
//!
//! A removed receipt is answered as any unknown one: `receipt-query` finds
//! nothing. It runs at start-up (before anything listens) and every
//! `pruneIntervalSeconds` on a blocking thread, never on the runtime's
//! network workers.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::config::Retention;
use super::receipt_index::{receipt_time, NO_TENANT};

/// What one pass did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Pruned {
    /// Receipts removed.
    pub removed: usize,
    /// Entries that could not be removed or listed (said on stderr).
    pub failed: usize,
}

/// One kept receipt: its time and where it is.
struct Kept {
    time: u128,
    path: std::path::PathBuf,
}

/// Whether `name` is an owner directory of the index: `t-<sha256 hex>` or
/// `no-tenant` (temp files and anything else are not touched).
fn is_owner_dir(name: &str) -> bool {
    let digest = name.strip_prefix("t-");
    name == NO_TENANT
        || digest.is_some_and(|d| d.len() == 64 && d.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// One pass over `receipts` (module doc), as of `now`.
pub fn prune(receipts: &Path, retention: &Retention, now: SystemTime) -> std::io::Result<Pruned> {
    let now_ns = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let cutoff = now_ns.saturating_sub(u128::from(retention.max_age_seconds) * 1_000_000_000);
    let keep = usize::try_from(retention.max_per_tenant).unwrap_or(usize::MAX);
    let mut pruned = Pruned::default();
    for entry in std::fs::read_dir(receipts)?.flatten() {
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        let name = entry.file_name();
        if is_dir && name.to_str().is_some_and(is_owner_dir) {
            prune_owner(&entry.path(), cutoff, keep, &mut pruned);
        }
    }
    Ok(pruned)
}

fn prune_owner(owner: &Path, cutoff: u128, keep: usize, pruned: &mut Pruned) {
    let Ok(runs) = std::fs::read_dir(owner) else {
        pruned.failed += 1;
        return;
    };
    let mut kept: Vec<Kept> = Vec::new();
    let mut run_dirs = Vec::new();
    for run in runs.flatten() {
        let is_run = run
            .file_name()
            .to_str()
            .is_some_and(|n| n.starts_with("i-"))
            && run.file_type().is_ok_and(|t| t.is_dir());
        if !is_run {
            continue;
        }
        let Ok(files) = std::fs::read_dir(run.path()) else {
            pruned.failed += 1;
            continue;
        };
        for file in files.flatten() {
            if let Some(time) = file.file_name().to_str().and_then(receipt_time) {
                kept.push(Kept {
                    time,
                    path: file.path(),
                });
            }
        }
        run_dirs.push(run.path());
    }
    // Newest first: the first `keep` of those young enough stay.
    kept.sort_unstable_by_key(|k| std::cmp::Reverse(k.time));
    let young = kept.iter().take_while(|k| k.time >= cutoff).count();
    for old in kept.iter().skip(young.min(keep)) {
        match std::fs::remove_file(&old.path) {
            Ok(()) => pruned.removed += 1,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(_) => pruned.failed += 1,
        }
    }
    // A directory still holding anything (a receipt kept meanwhile) stays.
    for dir in run_dirs {
        let _ = std::fs::remove_dir(dir);
    }
}

/// Prunes every `prune_interval_seconds` on a blocking thread, for the
/// host's life; a pass that removed or failed something is said on stderr.
pub fn start(receipts: Arc<Path>, retention: Retention) {
    let period = Duration::from_secs(retention.prune_interval_seconds);
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            let dir = Arc::clone(&receipts);
            let pass =
                tokio::task::spawn_blocking(move || prune(&dir, &retention, SystemTime::now()))
                    .await;
            match pass {
                Ok(result) => report(&receipts, result),
                Err(e) => report(&receipts, Err(std::io::Error::other(e.to_string()))),
            }
        }
    });
}

/// One stderr line for a pass that did something (or failed). Not
/// `eprintln!`: it panics when stderr is gone, which would end the task.
pub fn report(receipts: &Path, result: std::io::Result<Pruned>) {
    use std::io::Write;
    let line = match result {
        Ok(Pruned {
            removed: 0,
            failed: 0,
        }) => return,
        Ok(p) => format!(
            "removed {} receipt(s) past config.receipts (maxAgeSeconds, maxPerTenant); {} entr(y/ies) could not be removed",
            p.removed, p.failed
        ),
        Err(e) => format!("prune: {e}"),
    };
    let _ = writeln!(
        std::io::stderr(),
        "cordon host: {}: {line}",
        receipts.display()
    );
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn retention(max_age_seconds: u64, max_per_tenant: u64) -> Retention {
        Retention {
            max_age_seconds,
            max_per_tenant,
            prune_interval_seconds: 1,
        }
    }

    /// A receipt file kept `age` seconds before `now` in `owner`/`id`.
    fn plant(receipts: &Path, owner: &str, id: &str, now: SystemTime, age: u64) {
        let at = now - Duration::from_secs(age);
        let ns = at.duration_since(UNIX_EPOCH).unwrap().as_nanos();
        let dir = receipts.join(owner).join(format!("i-{id}"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("{ns:020}.0123abcd.json")), "{}").unwrap();
    }

    fn count(dir: &Path) -> usize {
        walk(dir).len()
    }

    fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            if e.file_type().unwrap().is_dir() {
                out.extend(walk(&e.path()));
            } else {
                out.push(e.path());
            }
        }
        out
    }

    #[test]
    fn old_receipts_and_all_but_the_newest_per_owner_go_and_empty_id_dirs_with_them() {
        let tmp = tempfile::tempdir().unwrap();
        let receipts = tmp.path();
        let now = SystemTime::now();
        let a = format!("t-{}", "a".repeat(64));
        let b = format!("t-{}", "b".repeat(64));
        // Tenant a: 5 young receipts over 3 ids, one old one alone in its id.
        for (i, id) in ["x", "x", "y", "z", "z"].iter().enumerate() {
            plant(receipts, &a, id, now, 10 + i as u64);
        }
        plant(receipts, &a, "old", now, 1000);
        // Tenant b: 2 young: under the count, untouched.
        plant(receipts, &b, "x", now, 1);
        plant(receipts, &b, "x", now, 2);
        plant(receipts, NO_TENANT, "lost", now, 5000);
        // Not the index's: never touched.
        std::fs::write(receipts.join(".pending.tmp"), "").unwrap();
        std::fs::create_dir(receipts.join("other")).unwrap();
        plant(receipts, "other", "q", now, 5000);

        let pruned = prune(receipts, &retention(100, 3), now).unwrap();
        assert_eq!(
            pruned,
            Pruned {
                removed: 4,
                failed: 0
            }
        );
        // a: the newest 3 (x, x, y) stay; z's directory and old's are gone.
        assert_eq!(count(&receipts.join(&a)), 3);
        assert!(receipts.join(&a).join("i-y").exists());
        assert!(!receipts.join(&a).join("i-z").exists());
        assert!(!receipts.join(&a).join("i-old").exists());
        assert_eq!(count(&receipts.join(&b)), 2);
        assert_eq!(count(&receipts.join(NO_TENANT)), 0);
        assert!(receipts.join(".pending.tmp").exists());
        assert_eq!(count(&receipts.join("other")), 1);
        // A second pass has nothing to do.
        assert_eq!(
            prune(receipts, &retention(100, 3), now).unwrap(),
            Pruned::default()
        );
    }
}
