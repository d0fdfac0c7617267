//! Before launch: can the sandbox's uid reach the caller's workspace, and
//! write it when the policy says `workspace: "write"`?
//!
//! When the provider is root, bwrap resolves bind sources by path as the
//! run's uid (docs/policy.md, "When the provider is root"). A workspace under
//! a 0700 directory (what every `mkdtemp` makes) then fails inside bwrap
//! with a bare "Can't find source path /proc/self/fd/N: Permission denied",
//! and a workspace that uid cannot write runs and the program gets EACCES.
//! Both are decided here from the mode bits of the workspace and each of its
//! ancestors (pure: [`denial`]), and refused with the fix. The run's uid is
//! a reserved one (process_identity.rs) that no ACL entry names, so mode
//! bits decide.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::host::process_identity::{Identity, SANDBOX_UID};

/// Permission bits, as in a mode's `rwx` triplets.
const READ: u32 = 0o4;
const WRITE: u32 = 0o2;
const SEARCH: u32 = 0o1;

/// One directory on the way: its path, mode, owner and group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub path: PathBuf,
    pub mode: u32,
    pub uid: u32,
    pub gid: u32,
}

/// Why the sandbox's uid cannot use the workspace.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WorkspaceAccessError {
    #[error(
        "the workspace {workspace} cannot be reached by the sandbox's uid {uid}: {} is mode \
         {:04o}, owner {}:{}, without search permission for that uid (a mkdtemp directory is \
         0700). Fix: `chmod o+x {}`, or put the workspace under a directory others can traverse",
        .blocking.path.display(), .blocking.mode & 0o7777, .blocking.uid, .blocking.gid,
        .blocking.path.display(), workspace = .workspace.display()
    )]
    Unreachable {
        workspace: PathBuf,
        uid: u32,
        blocking: Entry,
    },
    #[error(
        "the workspace {workspace} cannot be {what} by the sandbox's uid {uid}: it is mode {:04o}, \
         owner {}:{}. Fix: `chown -R {}:{} {workspace}` (the first workspace-owner id of this \
         provider: root's reserved range, or the owner half of a non-root provider's subordinate \
         ids; runs on it then run as that owner; docs/policy.md){or_mode}",
        .entry.mode & 0o7777, .entry.uid, .entry.gid, .owner.uid, .owner.gid,
        workspace = .entry.path.display()
    )]
    Denied {
        what: &'static str,
        uid: u32,
        entry: Entry,
        or_mode: &'static str,
        /// The stable workspace owner the fix names.
        owner: Identity,
    },
}

/// The `rwx` bits `entry` grants to `who`.
fn granted(entry: &Entry, who: Identity) -> u32 {
    if who.uid == entry.uid {
        (entry.mode >> 6) & 0o7
    } else if who.gid == entry.gid {
        (entry.mode >> 3) & 0o7
    } else {
        entry.mode & 0o7
    }
}

/// Pure: `chain` is the workspace's ancestors from `/`, then the workspace
/// itself (last). `None` when `who` may search every ancestor and read (and,
/// with `write`, write) the workspace.
pub fn denial(
    chain: &[Entry],
    who: Identity,
    write: bool,
    owner: Identity,
) -> Option<WorkspaceAccessError> {
    let (workspace, ancestors) = chain.split_last()?;
    if let Some(blocking) = ancestors.iter().find(|e| granted(e, who) & SEARCH == 0) {
        return Some(WorkspaceAccessError::Unreachable {
            workspace: workspace.path.clone(),
            uid: who.uid,
            blocking: blocking.clone(),
        });
    }
    let bits = granted(workspace, who);
    let denied = |what, or_mode| {
        Some(WorkspaceAccessError::Denied {
            what,
            uid: who.uid,
            entry: workspace.clone(),
            or_mode,
            owner,
        })
    };
    if bits & (READ | SEARCH) != READ | SEARCH {
        return denied("read", ", or make it readable by others (`chmod o+rx`)");
    }
    if write && bits & WRITE == 0 {
        return denied("written", "");
    }
    None
}

/// Thin: stats `workspace` and each ancestor (not following the last
/// component: host_path.rs refuses symlinks anyway), then decides. A path
/// that cannot be stat'ed (gone, swapped mid-launch) is not this check's to
/// report: its bind fails next with the usual ERR_CORDON_INVALID_OPTIONS.
pub fn check(workspace: &Path, who: Identity, write: bool) -> Result<(), WorkspaceAccessError> {
    let Some(chain) = chain_of(workspace) else {
        return Ok(());
    };
    denial(&chain, who, write, fix_owner()).map_or(Ok(()), Err)
}

/// A workspace held in a namespace holder (namespace_holder.rs, checked
/// there to be `who`'s 0700 tmpfs): only its ancestors on the host are
/// decided here — bwrap, as `who`, must search each of them.
pub fn check_ancestors(workspace: &Path, who: Identity) -> Result<(), WorkspaceAccessError> {
    let Some(mut chain) = chain_of(workspace) else {
        return Ok(());
    };
    if let Some(last) = chain.last_mut() {
        (last.mode, last.uid, last.gid) = (0o700, who.uid, who.gid);
    }
    denial(&chain, who, true, fix_owner()).map_or(Ok(()), Err)
}

/// `workspace` and each ancestor from `/`, stat'ed without following the
/// last component; `None` when one cannot be stat'ed.
fn chain_of(workspace: &Path) -> Option<Vec<Entry>> {
    let mut chain = Vec::new();
    for path in workspace.ancestors().collect::<Vec<_>>().into_iter().rev() {
        let meta = std::fs::symlink_metadata(path).ok()?;
        chain.push(Entry {
            path: path.to_path_buf(),
            mode: meta.mode(),
            uid: meta.uid(),
            gid: meta.gid(),
        });
    }
    Some(chain)
}

/// The owner a fix would name: root's first reserved owner uid, or the
/// first of the provider's subordinate owner ids.
fn fix_owner() -> Identity {
    crate::host::workspace_owner::owner_for(0).unwrap_or(Identity {
        uid: SANDBOX_UID,
        gid: crate::host::process_identity::SANDBOX_GID,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    const OWNER: Identity = Identity {
        uid: SANDBOX_UID,
        gid: crate::host::process_identity::SANDBOX_GID,
    };
    const RUN: Identity = Identity {
        uid: 1_879_113_800,
        gid: 1_879_113_800,
    };

    fn dir(path: &str, mode: u32, uid: u32, gid: u32) -> Entry {
        Entry {
            path: path.into(),
            mode: 0o040_000 | mode,
            uid,
            gid,
        }
    }

    fn chain(parent_mode: u32, workspace: Entry) -> Vec<Entry> {
        vec![
            dir("/", 0o755, 0, 0),
            dir("/tmp", 0o1777, 0, 0),
            dir("/tmp/tmp.X", parent_mode, 0, 0),
            workspace,
        ]
    }

    #[test]
    fn a_workspace_under_a_0700_root_owned_parent_is_unreachable_and_the_fix_is_named() {
        let e = denial(
            &chain(0o700, dir("/tmp/tmp.X/ws", 0o755, 0, 0)),
            RUN,
            false,
            OWNER,
        )
        .unwrap();
        assert!(matches!(e, WorkspaceAccessError::Unreachable { .. }), "{e}");
        let text = e.to_string();
        assert!(
            text.contains("/tmp/tmp.X is mode 0700, owner 0:0"),
            "{text}"
        );
        assert!(text.contains("`chmod o+x /tmp/tmp.X`"), "{text}");
    }

    #[test]
    fn a_root_owned_workspace_is_readable_but_not_writable_by_a_run_uid() {
        let ws = dir("/tmp/tmp.X/ws", 0o755, 0, 0);
        assert!(denial(&chain(0o711, ws.clone()), RUN, false, OWNER).is_none());
        let e = denial(&chain(0o711, ws), RUN, true, OWNER).unwrap();
        let text = e.to_string();
        assert!(
            text.contains("cannot be written by the sandbox's uid 1879113800"),
            "{text}"
        );
        assert!(
            text.contains("`chown -R 1879048192:1879048192 /tmp/tmp.X/ws`"),
            "{text}"
        );
    }

    #[test]
    fn an_owner_or_group_match_uses_those_bits() {
        let owned = dir("/tmp/tmp.X/ws", 0o700, RUN.uid, 0);
        assert!(denial(&chain(0o711, owned), RUN, true, OWNER).is_none());
        let grouped = dir("/tmp/tmp.X/ws", 0o070, 0, RUN.gid);
        assert!(denial(&chain(0o711, grouped), RUN, true, OWNER).is_none());
        let unreadable = dir("/tmp/tmp.X/ws", 0o700, 0, 0);
        let e = denial(&chain(0o711, unreadable), RUN, false, OWNER).unwrap();
        assert!(e.to_string().contains("cannot be read"), "{e}");
    }

    #[test]
    fn the_real_filesystem_is_checked_from_the_root_down() {
        let scratch = tempfile::tempdir().unwrap();
        let ws = scratch.path().join("ws");
        std::fs::create_dir(&ws).unwrap();
        let me = Identity {
            uid: nix::unistd::geteuid().as_raw(),
            gid: nix::unistd::getegid().as_raw(),
        };
        assert!(check(&ws, me, true).is_ok());
        let gone = check(&scratch.path().join("missing"), me, false);
        assert!(gone.is_ok(), "a missing path is left to its bind to report");
    }
}
