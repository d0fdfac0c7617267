#![allow(clippy::unwrap_used)]

use super::*;
use serde_json::json;

fn receipt(tenant: &str, n: u32) -> Value {
    json!({"invocationId": "x", "n": n, "remote": {"tenant": tenant}})
}

fn state() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let receipts = dir.path().join("receipts");
    std::fs::create_dir(&receipts).unwrap();
    (dir, receipts)
}

#[test]
fn a_tenant_finds_its_own_receipts_of_an_id_newest_first_and_never_another_tenants() {
    let (_dir, receipts) = state();
    for n in 0..3 {
        keep(&receipts, "run.1", &receipt("a", n)).unwrap();
    }
    keep(&receipts, "run.1", &receipt("b", 9)).unwrap();
    keep(&receipts, "run", &receipt("a", 7)).unwrap();
    let found: Vec<_> = find(&receipts, "run.1", "a")
        .iter()
        .map(|r| r["n"].as_u64().unwrap())
        .collect();
    assert_eq!(found, [2, 1, 0]);
    assert_eq!(find(&receipts, "run.1", "b")[0]["n"], 9);
    assert!(find(&receipts, "run.1", "c").is_empty());
    assert_eq!(find(&receipts, "run", "a").len(), 1, "not a prefix match");
}

#[test]
fn a_tenant_or_an_id_that_looks_like_a_path_stays_inside_its_own_directory() {
    let (dir, receipts) = state();
    keep(&receipts, "..", &receipt("../..", 1)).unwrap();
    keep(&receipts, "..", &receipt("a/b", 2)).unwrap();
    // Nothing escaped receipts/, and the names are what the module says.
    let top: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().collect();
    assert_eq!(top.len(), 1, "{top:?}");
    assert_eq!(find(&receipts, "..", "../..")[0]["n"], 1);
    assert_eq!(find(&receipts, "..", "a/b")[0]["n"], 2);
    // An id outside the launcher's alphabet names nothing, kept or found.
    for id in ["../t", "a/b", "", &"x".repeat(129)] {
        assert!(keep(&receipts, id, &receipt("a", 0)).is_err(), "{id:?}");
        assert!(find(&receipts, id, "a").is_empty(), "{id:?}");
    }
}

#[test]
fn a_receipt_in_a_tenants_directory_that_names_another_tenant_is_not_served() {
    let (_dir, receipts) = state();
    let mine = keep(&receipts, "r", &receipt("a", 1)).unwrap();
    std::fs::write(&mine, receipt("b", 1).to_string()).unwrap();
    assert!(find(&receipts, "r", "a").is_empty());
}

#[test]
fn a_half_written_receipt_is_never_served_and_temp_files_stay_at_the_top() {
    let (_dir, receipts) = state();
    let kept = keep(&receipts, "r", &receipt("a", 1)).unwrap();
    let run = kept.parent().unwrap();
    // What a crash between write and rename would leave, were the temp
    // file next to its target; and a truncated file under a receipt name.
    std::fs::write(run.join(".00000000000000000001.0123abcd.json.x.tmp"), "{").unwrap();
    std::fs::write(run.join("99999999999999999999.0123abcd.json"), "{\"n\":").unwrap();
    assert_eq!(find(&receipts, "r", "a").len(), 1);
    // keep() itself left nothing but the receipt in its directory.
    assert!(std::fs::read_dir(&receipts)
        .unwrap()
        .flatten()
        .all(|e| e.file_type().unwrap().is_dir()));
}

#[test]
fn at_most_sixteen_are_answered_the_newest() {
    let (_dir, receipts) = state();
    for n in 0..20 {
        keep(&receipts, "r", &receipt("a", n)).unwrap();
    }
    let found = find(&receipts, "r", "a");
    assert_eq!(found.len(), MAX_FOUND);
    assert_eq!(found[0]["n"], 19);
    assert_eq!(found[15]["n"], 4);
}

/// A receipt of the flat layout: `name` in `receipts/`, of `tenant`,
/// modified at `secs` after the epoch.
fn flat(receipts: &Path, name: &str, tenant: &str, n: u32, secs: u64) {
    let path = receipts.join(name);
    std::fs::write(&path, receipt(tenant, n).to_string()).unwrap();
    let at = UNIX_EPOCH + std::time::Duration::from_secs(secs);
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(at)
        .unwrap();
}

#[test]
fn during_the_move_a_query_reads_the_flat_files_of_its_id_too_once_each_and_its_tenants_only() {
    let (_dir, receipts) = state();
    flat(&receipts, "a.b.0123abcd.json", "a", 1, 1_000);
    flat(&receipts, "a.b.4567abcd.json", "a", 2, 2_000);
    flat(&receipts, "a.b.89abcdef.json", "b", 3, 3_000);
    flat(&receipts, "a.bc.0123abcd.json", "a", 4, 4_000);
    // One kept by this host after the upgrade: in the index, newer.
    keep(&receipts, "a.b", &receipt("a", 5)).unwrap();
    let ns = |found: Vec<Value>| -> Vec<u64> {
        found.iter().map(|r| r["n"].as_u64().unwrap()).collect()
    };
    assert_eq!(ns(find(&receipts, "a.b", "a")), [5], "the index alone");
    assert_eq!(ns(find_during_move(&receipts, "a.b", "a")), [5, 2, 1]);
    assert_eq!(ns(find_during_move(&receipts, "a.b", "b")), [3]);
    assert!(find_during_move(&receipts, "../a.b", "a").is_empty());
    // A receipt seen in both places (renamed between the two reads) once.
    let moved = run_dir(&receipts, Some("a"), "a.b").unwrap();
    std::fs::copy(
        receipts.join("a.b.0123abcd.json"),
        moved.join("00000000000000000001.00000000.json"),
    )
    .unwrap();
    assert_eq!(ns(find_during_move(&receipts, "a.b", "a")), [5, 2, 1]);
    // Moved: the index alone answers the same.
    std::fs::remove_file(moved.join("00000000000000000001.00000000.json")).unwrap();
    migrate_flat(&receipts).unwrap();
    assert_eq!(ns(find(&receipts, "a.b", "a")), [5, 2, 1]);
}

#[test]
fn receipts_of_the_flat_layout_are_moved_into_the_index_in_their_order() {
    let (_dir, receipts) = state();
    let old = |name: &str, n: u32, secs: u64| flat(&receipts, name, "a", n, secs);
    old("a.b.0123abcd.json", 1, 1_000);
    old("a.b.4567abcd.json", 2, 2_000);
    old("a.89abcdef.json", 3, 1_500);
    std::fs::write(receipts.join("broken.0123abcd.json"), "{").unwrap();
    assert_eq!(migrate_flat(&receipts).unwrap(), 3);
    let ns = |id: &str| -> Vec<u64> {
        find(&receipts, id, "a")
            .iter()
            .map(|r| r["n"].as_u64().unwrap())
            .collect()
    };
    assert_eq!(ns("a.b"), [2, 1]);
    assert_eq!(ns("a"), [3]);
    assert!(receipts.join("broken.0123abcd.json").exists());
    assert_eq!(migrate_flat(&receipts).unwrap(), 0, "done once");
}

#[test]
fn a_receipt_file_name_is_time_then_random_hex() {
    assert!(is_receipt_name("00000001764671234567.0123abcd.json"));
    assert!(!is_receipt_name(
        ".00000001764671234567.0123abcd.json.x.tmp"
    ));
    assert!(!is_receipt_name("1764671234567.0123abcd.json"));
    assert!(!is_receipt_name("00000001764671234567.0123abcd.jsonx"));
    assert_eq!(flat_name_id("a.b.0123abcd.json"), Some("a.b"));
    assert_eq!(flat_name_id(".a.0123abcd.json.x.tmp"), None);
    assert_eq!(flat_name_id("t-00ff"), None);
}
