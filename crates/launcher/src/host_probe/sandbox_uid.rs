//! Doctor's check that the sandbox identities are cordon's alone: a host
//! process of a sandbox's uid could read its /proc/<pid>/environ and
//! /proc/<pid>/root, act in its user namespace and eat its per-user quotas.
//! The whole reserved range is checked (workspace owners and per-run uids,
//! `process_identity::RESERVED_UIDS`): host processes, and the accounts and
//! subordinate id ranges of /etc/passwd, /etc/group, /etc/subuid, /etc/subgid.
//!
//! Processes of that uid that belong to sandboxes are not foreign: bwrap
//! itself (comm `bwrap`, started as that uid by a launcher) and everything
//! in a sandbox's user namespace (a different /proc/<pid>/ns/user than
//! ours). This is a configuration check, not a defence: a hostile process
//! of that uid could dress up as either.

use std::fs;
use std::time::Duration;

use std::ops::Range;

use super::{Check, Importance};
use crate::host::process_identity::{sandbox_identity, RESERVED_UIDS};

/// A launcher's fork is briefly of the sandbox uid before it execs bwrap
/// (setuid happens in the child, before exec): a process seen as foreign is
/// only reported if it is still foreign after this pause.
const RESCAN_PAUSE: Duration = Duration::from_millis(100);
/// Pids named in the check's detail; the rest are counted.
const MAX_NAMED_PIDS: usize = 8;

/// A host process running as the sandbox uid, as read from /proc.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UidProcess {
    pub pid: u32,
    /// The reserved id it runs as (the first of its four that is).
    pub uid: u32,
    /// `/proc/<pid>/comm`, trimmed.
    pub comm: String,
    /// Whether it shares doctor's user namespace (a sandbox's does not).
    pub host_userns: bool,
}

impl UidProcess {
    /// Pure: neither bwrap nor inside a sandbox's user namespace.
    pub fn is_foreign(&self) -> bool {
        self.host_userns && self.comm != "bwrap"
    }
}

/// Pure: `Uid:` line of /proc/<pid>/status → whether any of real,
/// effective, saved or filesystem uid is `uid`. A zombie (`State: Z`, or
/// `X` dead) is not counted: it has no memory or files left to reach with.
pub fn status_has_uid(status: &str, uid: u32) -> bool {
    status_uid_in(status, &(uid..uid + 1)).is_some()
}

/// Pure: the first of a live process's four uids that lies in `range`.
pub fn status_uid_in(status: &str, range: &Range<u32>) -> Option<u32> {
    let field = |name: &str| status.lines().find_map(|l| l.strip_prefix(name));
    let exited =
        field("State:").is_some_and(|s| matches!(s.trim_start().chars().next(), Some('Z' | 'X')));
    if exited {
        return None;
    }
    field("Uid:")?
        .split_whitespace()
        .filter_map(|id| id.parse().ok())
        .find(|id| range.contains(id))
}

/// Pure: `name:x:id:…` lines (passwd, group) whose id is in `range`, and
/// `name:first:count` lines (subuid, subgid) whose range overlaps it.
pub fn id_file_users(text: &str, subordinate: bool, range: &Range<u32>) -> Vec<String> {
    let overlaps = |first: u64, count: u64| {
        first < u64::from(range.end) && first + count > u64::from(range.start)
    };
    text.lines()
        .filter(|line| !line.trim_start().starts_with('#'))
        .filter_map(|line| {
            let fields: Vec<&str> = line.split(':').collect();
            let hit = if subordinate {
                let first = fields.get(1)?.parse().ok()?;
                overlaps(first, fields.get(2)?.parse().ok()?)
            } else {
                overlaps(fields.get(2)?.parse().ok()?, 1)
            };
            hit.then(|| fields[0].to_string())
        })
        .collect()
}

/// Host processes with a uid in `range`; ones that exit meanwhile are skipped.
pub fn read_uid_processes(range: &Range<u32>) -> Vec<UidProcess> {
    let own_userns = fs::read_link("/proc/self/ns/user").ok();
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
            let uid = status_uid_in(&status, range)?;
            let comm = fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
            let userns = fs::read_link(format!("/proc/{pid}/ns/user")).ok();
            Some(UidProcess {
                pid,
                uid,
                comm: comm.trim().to_string(),
                host_userns: userns.is_some() && userns == own_userns,
            })
        })
        .collect()
}

/// The foreign processes in `range`, confirmed by a second scan.
fn foreign_processes(range: &Range<u32>) -> Vec<UidProcess> {
    let first: Vec<u32> = read_uid_processes(range)
        .into_iter()
        .filter(UidProcess::is_foreign)
        .map(|p| p.pid)
        .collect();
    if first.is_empty() {
        return Vec::new();
    }
    std::thread::sleep(RESCAN_PAUSE);
    read_uid_processes(range)
        .into_iter()
        .filter(|p| p.is_foreign() && first.contains(&p.pid))
        .collect()
}

/// Reads the host (only when sandboxes get uids of their own: the provider
/// is root) and decides with [`check_sandbox_uid_unused`].
pub fn check_host_sandbox_uid() -> Check {
    let range = sandbox_identity().map(|_| RESERVED_UIDS);
    let foreign = range.as_ref().map(foreign_processes).unwrap_or_default();
    let accounts = range.as_ref().map(accounts_in).unwrap_or_default();
    check_sandbox_uid_unused(range, &foreign, &accounts)
}

/// Accounts and subordinate ranges of the host's id files within `range`,
/// as `file: name`.
fn accounts_in(range: &Range<u32>) -> Vec<String> {
    let files = [
        ("/etc/passwd", false),
        ("/etc/group", false),
        ("/etc/subuid", true),
        ("/etc/subgid", true),
    ];
    files
        .iter()
        .flat_map(|(path, subordinate)| {
            let text = fs::read_to_string(path).unwrap_or_default();
            id_file_users(&text, *subordinate, range)
                .into_iter()
                .map(move |name| format!("{path}: {name}"))
        })
        .collect()
}

/// Pure: `range` is cordon's reserved sandbox ids (`None`: the provider is
/// not root and sandboxes run as its own uid); `foreign` the host processes
/// in it, `accounts` the id-file entries that use it.
pub fn check_sandbox_uid_unused(
    range: Option<Range<u32>>,
    foreign: &[UidProcess],
    accounts: &[String],
) -> Check {
    const NAME: &str = "sandbox uid unused by the host";
    let Some(range) = range else {
        let detail = "not root: sandboxes run as this user, like its other processes".to_string();
        return Check::pass(NAME, Importance::Required, detail);
    };
    let ids = format!("{}-{}", range.start, range.end - 1);
    if foreign.is_empty() && accounts.is_empty() {
        let detail = format!("no host process, account or subordinate range uses uids {ids}");
        return Check::pass(NAME, Importance::Required, detail);
    }
    let mut named: Vec<String> = foreign
        .iter()
        .take(MAX_NAMED_PIDS)
        .map(|p| format!("uid {} by {} ({})", p.uid, p.pid, p.comm))
        .collect();
    let more = foreign.len().saturating_sub(MAX_NAMED_PIDS);
    if more > 0 {
        named.push(format!("{more} more processes"));
    }
    named.extend(accounts.iter().take(MAX_NAMED_PIDS).cloned());
    let detail = format!(
        "uids {ids} are cordon's sandbox identities, yet the host uses them: {}; \
         such processes can read sandboxes' environment and files and share their quotas",
        named.join(", ")
    );
    let fix = format!(
        "run those processes under another uid and move those accounts or ranges: uids and \
         gids {ids} are reserved for cordon's sandboxes (no account, service or \
         /etc/subuid range may use them)"
    );
    Check::fail(NAME, Importance::Required, detail, &fix)
}
