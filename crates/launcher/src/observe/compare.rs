//! Pure: an observation against its expectation → the mismatches, each
//! naming the check, what was planned and what was seen. Any mismatch fails
//! the run closed (supervisor.rs).

use serde::Serialize;
use serde_json::{json, Value};

use crate::plan::cgroup::{in_leaf, Need};

use super::expect::Expectation;
use super::parse::{IdRange, Mount};
use super::Observation;

/// Filesystems bwrap's own `--proc` and `--dev` mount writable that hold no
/// data a program could fill: the sandbox's procfs, its pty instance and
/// message queues.
const PSEUDO_FS: &[&str] = &["proc", "devpts", "mqueue"];
/// bwrap's `--dev`: a tmpfs at /dev holding bound device nodes (read-only
/// once set up: a writable /dev is a mismatch unless the plan lists it).
const DEV_DIR: &str = "/dev";

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mismatch {
    pub check: String,
    pub planned: Value,
    pub observed: Value,
}

fn mismatch(check: impl Into<String>, planned: Value, observed: Value) -> Mismatch {
    Mismatch {
        check: check.into(),
        planned,
        observed,
    }
}

/// Every check, in receipt order; empty when the observation matches.
pub fn compare(expect: &Expectation, seen: &Observation, page_bytes: u64) -> Vec<Mismatch> {
    let mut out = Vec::new();
    process(expect, seen, &mut out);
    identity(expect, seen, &mut out);
    namespaces(expect, seen, &mut out);
    rlimits(expect, seen, &mut out);
    cgroup(expect, seen, page_bytes, &mut out);
    mounts(expect, seen, page_bytes, &mut out);
    out
}

fn process(expect: &Expectation, seen: &Observation, out: &mut Vec<Mismatch>) {
    let s = &seen.status;
    let filter_mode = 2;
    if expect.seccomp_filters > 0 && s.seccomp_mode != filter_mode {
        out.push(mismatch(
            "seccomp.mode",
            json!(filter_mode),
            json!(s.seccomp_mode),
        ));
    }
    // Fewer filters than planned means ours is missing. More is fine: a
    // program may stack filters of its own (seccomp(2) needs only
    // no_new_privs) before the observer samples it, and a stacked filter can
    // only deny more, never lift ours.
    if s.seccomp_filters < expect.seccomp_filters {
        let planned = json!(expect.seccomp_filters);
        out.push(mismatch(
            "seccomp.filters",
            planned,
            json!(s.seccomp_filters),
        ));
    }
    if expect.no_new_privs && !s.no_new_privs {
        out.push(mismatch("noNewPrivs", json!(true), json!(false)));
    }
    if expect.capabilities_empty && (s.cap_eff != 0 || s.cap_bnd != 0) {
        let observed = json!({"effective": format!("{:016x}", s.cap_eff), "bounding": format!("{:016x}", s.cap_bnd)});
        out.push(mismatch("capabilities", json!("none"), observed));
    }
}

fn identity(expect: &Expectation, seen: &Observation, out: &mut Vec<Mismatch>) {
    let s = &seen.status;
    if s.uids.iter().any(|u| *u != expect.host_uid) {
        out.push(mismatch("hostUid", json!(expect.host_uid), json!(s.uids)));
    }
    if s.gids.iter().any(|g| *g != expect.host_gid) {
        out.push(mismatch("hostGid", json!(expect.host_gid), json!(s.gids)));
    }
    if let Some(provider) = expect.forbidden_uid {
        if s.uids.contains(&provider) {
            let planned = json!({"not": provider});
            out.push(mismatch("hostUid.notProvider", planned, json!(s.uids)));
        }
    }
    if expect.no_supplementary_groups && !s.groups.is_empty() {
        out.push(mismatch("groups", json!([]), json!(s.groups)));
    }
    // One id, mapped to the host id bwrap ran as: nothing else of the host
    // (root above all) exists inside.
    let single =
        |map: &[IdRange], host: u32| matches!(map, [r] if r.count == 1 && r.outside == host);
    if !single(&seen.uid_map, expect.host_uid) {
        let planned = json!([{"outside": expect.host_uid, "count": 1}]);
        out.push(mismatch("uidMap", planned, json!(seen.uid_map)));
    }
    if !single(&seen.gid_map, expect.host_gid) {
        let planned = json!([{"outside": expect.host_gid, "count": 1}]);
        out.push(mismatch("gidMap", planned, json!(seen.gid_map)));
    }
}

fn namespaces(expect: &Expectation, seen: &Observation, out: &mut Vec<Mismatch>) {
    for (name, provider) in &expect.separate_namespaces {
        let observed = seen
            .namespaces
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, i)| *i);
        if observed.is_none_or(|inode| inode == *provider) {
            let planned = json!({"notInode": provider});
            out.push(mismatch(
                format!("namespaces.{name}"),
                planned,
                json!(observed),
            ));
        }
    }
}

fn rlimits(expect: &Expectation, seen: &Observation, out: &mut Vec<Mismatch>) {
    for planned in &expect.rlimits {
        let row = seen.limits.iter().find(|l| l.name == planned.name);
        // The program may lower its limits or raise a soft one up to the
        // hard one (Go does for NOFILE); only the hard ceiling is binding.
        let within = |hard: Option<u64>| match hard {
            Some(hard) => hard <= planned.hard,
            None => planned.hard == libc::RLIM_INFINITY,
        };
        if !row.is_some_and(|r| within(r.hard)) {
            let check = format!("rlimits.{}", planned.name);
            out.push(mismatch(check, json!({"hard": planned.hard}), json!(row)));
        }
    }
}

fn cgroup(expect: &Expectation, seen: &Observation, page: u64, out: &mut Vec<Mismatch>) {
    let Some(leaf) = &expect.cgroup_leaf else {
        return;
    };
    if !in_leaf(&seen.proc_cgroup, leaf) {
        out.push(mismatch(
            "cgroup.member",
            json!(leaf),
            json!(seen.proc_cgroup),
        ));
    }
    for write in &expect.cgroup_limits {
        let read = seen
            .cgroup_limits
            .iter()
            .find(|(path, _)| *path == write.path)
            .and_then(|(_, v)| v.as_deref());
        let ok = match read {
            Some(value) => same_limit(&write.value, value, page),
            None => write.need == Need::IfPresent,
        };
        if !ok {
            let check = format!("cgroup.{}", write.path.display());
            out.push(mismatch(check, json!(write.value), json!(read)));
        }
    }
}

/// A limit reads back as written, or rounded down to whole pages (memory).
fn same_limit(written: &str, read: &str, page: u64) -> bool {
    match (written.parse::<u64>(), read.parse::<u64>()) {
        (Ok(w), Ok(r)) => r == w || (page > 0 && r == w / page * page),
        _ => written == read,
    }
}

/// The mount a path shows: the last (topmost) one listed at that point.
fn top<'a>(seen: &'a Observation, point: &str) -> Option<&'a super::MountSeen> {
    seen.mounts.iter().rev().find(|m| m.mount.point == point)
}

/// A mount listed after the top one at `point` (mountinfo lists mounts in
/// the order they were made) whose point is a strict ancestor of `point`:
/// it hides the whole subtree, so what the program sees at `point` is the
/// later mount's, whatever the mount at `point` says (round 4, R4-2).
fn covering<'a>(seen: &'a Observation, point: &str) -> Option<&'a super::MountSeen> {
    let at = seen.mounts.iter().rposition(|m| m.mount.point == point)?;
    let path = std::path::Path::new(point);
    seen.mounts[at + 1..]
        .iter()
        .find(|m| m.mount.point != point && path.starts_with(&m.mount.point))
}

fn mounts(expect: &Expectation, seen: &Observation, page: u64, out: &mut Vec<Mismatch>) {
    for planned in &expect.mounts {
        let found = top(seen, &planned.point).map(|m| m.mount.writable);
        if found != Some(planned.writable) {
            let check = format!("mounts.{}", planned.point);
            out.push(mismatch(
                check,
                json!({"writable": planned.writable}),
                json!({"writable": found}),
            ));
        } else if let Some(over) = covering(seen, &planned.point) {
            let check = format!("mounts.{}.covered", planned.point);
            out.push(mismatch(
                check,
                json!({"writable": planned.writable}),
                json!({"coveredBy": over.mount.point, "writable": over.mount.writable}),
            ));
        }
    }
    for (point, bytes) in &expect.tmpfs_bytes {
        let found = top(seen, point);
        let size = found
            .filter(|t| t.mount.fs_type == "tmpfs")
            .and_then(|t| t.size_bytes);
        let rounded = bytes.div_ceil(page.max(1)) * page.max(1);
        if size != Some(rounded) {
            let check = format!("mounts.{point}.sizeBytes");
            out.push(mismatch(check, json!(rounded), json!(size)));
        }
    }
    for m in seen.mounts.iter().filter(|m| m.mount.writable) {
        let is_top = top(seen, &m.mount.point).is_some_and(|t| t.mount.id == m.mount.id);
        // A planned point was judged above, whatever its access.
        let planned = expect.mounts.iter().any(|p| p.point == m.mount.point);
        if is_top && !planned && !bwrap_own(&m.mount) {
            let check = format!("mounts.{}", m.mount.point);
            out.push(mismatch(
                check,
                json!("not writable"),
                json!({"writable": true, "fsType": m.mount.fs_type}),
            ));
        }
    }
}

/// bwrap's `--proc` and `--dev`: /proc, /dev and the device nodes bound in it.
fn bwrap_own(m: &Mount) -> bool {
    let node_in_dev = m.fs_type == "devtmpfs"
        && m.point
            .strip_prefix("/dev/")
            .is_some_and(|n| !n.contains('/'))
        && m.root == format!("/{}", &m.point[DEV_DIR.len() + 1..]);
    PSEUDO_FS.contains(&m.fs_type.as_str()) || node_in_dev
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
#[path = "compare_tests.rs"]
mod tests;
