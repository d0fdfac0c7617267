//! Doctor's check that the sandbox identity is cordon's alone: a host
//! process of the sandbox uid could read a sandbox's /proc/<pid>/environ and
//! /proc/<pid>/root, act in its user namespace and eat its RLIMIT_NPROC.
//!
//! Processes of that uid that belong to sandboxes are not foreign: bwrap
//! itself (comm `bwrap`, started as that uid by a launcher) and everything
//! in a sandbox's user namespace (a different /proc/<pid>/ns/user than
//! ours). This is a configuration check, not a defence: a hostile process
//! of that uid could dress up as either.

use std::fs;
use std::time::Duration;

use super::{Check, Importance};
use crate::process_identity::sandbox_identity;

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
    let field = |name: &str| status.lines().find_map(|l| l.strip_prefix(name));
    let exited =
        field("State:").is_some_and(|s| matches!(s.trim_start().chars().next(), Some('Z' | 'X')));
    !exited
        && field("Uid:").is_some_and(|ids| ids.split_whitespace().any(|id| id.parse() == Ok(uid)))
}

/// Processes of `uid` on this host; ones that exit meanwhile are skipped.
pub fn read_uid_processes(uid: u32) -> Vec<UidProcess> {
    let own_userns = fs::read_link("/proc/self/ns/user").ok();
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
            if !status_has_uid(&status, uid) {
                return None;
            }
            let comm = fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
            let userns = fs::read_link(format!("/proc/{pid}/ns/user")).ok();
            Some(UidProcess {
                pid,
                comm: comm.trim().to_string(),
                host_userns: userns.is_some() && userns == own_userns,
            })
        })
        .collect()
}

/// The foreign processes of `uid`, confirmed by a second scan.
fn foreign_processes(uid: u32) -> Vec<UidProcess> {
    let first: Vec<u32> = read_uid_processes(uid)
        .into_iter()
        .filter(UidProcess::is_foreign)
        .map(|p| p.pid)
        .collect();
    if first.is_empty() {
        return Vec::new();
    }
    std::thread::sleep(RESCAN_PAUSE);
    read_uid_processes(uid)
        .into_iter()
        .filter(|p| p.is_foreign() && first.contains(&p.pid))
        .collect()
}

/// Reads the host (only when sandboxes get a dedicated uid: the provider is
/// root) and decides with [`check_sandbox_uid_unused`].
pub fn check_host_sandbox_uid() -> Check {
    let uid = sandbox_identity().map(|id| id.uid);
    let foreign = uid.map(foreign_processes).unwrap_or_default();
    check_sandbox_uid_unused(uid, &foreign)
}

/// Pure: `uid` is the dedicated sandbox uid (`None`: the provider is not
/// root and sandboxes run as its own uid); `foreign` its host processes.
pub fn check_sandbox_uid_unused(uid: Option<u32>, foreign: &[UidProcess]) -> Check {
    const NAME: &str = "sandbox uid unused by the host";
    let Some(uid) = uid else {
        let detail = "not root: sandboxes run as this user, like its other processes".to_string();
        return Check::pass(NAME, Importance::Required, detail);
    };
    if foreign.is_empty() {
        let detail = format!("no host process runs as uid {uid}");
        return Check::pass(NAME, Importance::Required, detail);
    }
    let named: Vec<String> = foreign
        .iter()
        .take(MAX_NAMED_PIDS)
        .map(|p| format!("{} ({})", p.pid, p.comm))
        .collect();
    let more = foreign.len().saturating_sub(MAX_NAMED_PIDS);
    let tail = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    let detail = format!(
        "uid {uid} is cordon's sandbox identity, yet host processes run as it: {}{tail}; \
         they can read sandboxes' environment and files",
        named.join(", ")
    );
    let fix = format!(
        "run those processes under another uid: uid/gid {uid} is reserved for cordon's \
         sandboxes (no account, service or /etc/subuid range may use it)"
    );
    Check::fail(NAME, Importance::Required, detail, &fix)
}
