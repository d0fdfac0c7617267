//! A run inside an existing *namespace holder* (option `namespaceHolder`):
//! the session workspace of a NON-ROOT provider is a tmpfs that a holder
//! process of the provider mounted in its own user and mount namespaces
//! (cordon-exec-agent `session-holder`, docs/sessions.md "Non-root
//! providers"). bwrap cannot bind it from the host's namespaces, so the
//! forked child joins the holder's user namespace, then its mount
//! namespace, then becomes the workspace owner U (spawn.rs), and bwrap
//! makes its own namespaces from there. Only for the non-root session path:
//! every other run makes its fresh user namespace (userns_map.rs).
//!
//! What is checked before anything is used ([`open`]), so a recycled pid or
//! a planted directory is refused rather than entered:
//! - the pid is held by a pidfd, its start time is the one the caller
//!   recorded, and after every `/proc/<pid>/…` open the pidfd still names a
//!   live process (a pid cannot be reused while its process lives, so the
//!   opens were of the holder);
//! - its user namespace is not the provider's own;
//! - the workspace, opened through `/proc/<pid>/root` one no-follow step at
//!   a time, is a tmpfs owned by a uid U (and gid U) of the owner half of
//!   this provider's subordinate ids: U is the run's identity, and that
//!   descriptor is what bwrap binds. Its mode is not checked: the holder
//!   mounts it 0700, but U owns it and its commands may `chmod` it, and
//!   that opens it to nobody — it exists only in the holder's mount
//!   namespace, which no other user can enter (round 7b, R7b-2).

use std::fs::File;
use std::os::fd::OwnedFd;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use crate::host::process_identity::{process_start_time, Identity};
use crate::host::subordinate_ids;
use crate::request::launch_request::HolderRef;

const TMPFS_MAGIC: i64 = 0x0102_1994;

/// What a run inside the holder needs.
#[derive(Debug)]
pub struct HolderEntry {
    pub userns: OwnedFd,
    pub mntns: OwnedFd,
    /// The workspace as the holder sees it (O_PATH): the bind source.
    pub workspace: OwnedFd,
    pub identity: Identity,
}

#[derive(Debug, thiserror::Error)]
pub enum HolderError {
    #[error("options.namespaceHolder is for a non-root provider's sessions only")]
    ProviderIsRoot,
    #[error("options.namespaceHolder needs options.workspace (the holder's mount point)")]
    NoWorkspace,
    #[error("the namespace holder {pid} is gone or is another process (start time {found:?}, expected {expected})")]
    Gone {
        pid: i32,
        found: Option<u64>,
        expected: u64,
    },
    #[error("open {what} of the namespace holder {pid}: {source}")]
    Open {
        what: String,
        pid: i32,
        source: std::io::Error,
    },
    #[error("the namespace holder {0} shares the provider's user namespace: it holds nothing")]
    NotUnshared(i32),
    /// Names the holder, not the workspace's host path (the message reaches whoever gets the session's errors).
    #[error("the workspace in the namespace holder {0} is not a tmpfs of an owner uid of this provider's subordinate ids")]
    NotHeldWorkspace(i32),
}

/// Checks and opens everything (module doc); nothing is entered yet.
pub fn open(holder: HolderRef, workspace: &Path) -> Result<HolderEntry, HolderError> {
    let HolderRef { pid, start_time } = holder;
    let gone = |found| HolderError::Gone {
        pid,
        found,
        expected: start_time,
    };
    let pidfd = crate::host::pidfd::open(pid).map_err(|_| gone(None))?;
    let found = u32::try_from(pid).ok().and_then(process_start_time);
    if found != Some(start_time) {
        return Err(gone(found));
    }
    let open_proc = |what: &str| {
        File::open(format!("/proc/{pid}/{what}")).map_err(|source| HolderError::Open {
            what: what.to_string(),
            pid,
            source,
        })
    };
    let userns = open_proc("ns/user")?;
    let mntns = open_proc("ns/mnt")?;
    let root = open_proc("root")?;
    // Named as the workspace, not by its host path: the message reaches
    // whoever gets the session's errors (round 8, R8-8).
    let held = open_below(&root, workspace).map_err(|source| HolderError::Open {
        what: "the workspace".to_string(),
        pid,
        source,
    })?;
    // A readable pidfd is an exited process: the opens above may have been of another.
    if crate::host::pidfd::wait_exit(&pidfd, std::time::Duration::ZERO) {
        return Err(gone(None));
    }
    let own = std::fs::metadata("/proc/self/ns/user")
        .map(|m| m.ino())
        .ok();
    if userns.metadata().map(|m| m.ino()).ok() == own {
        return Err(HolderError::NotUnshared(pid));
    }
    let identity = owner_of(&held).ok_or(HolderError::NotHeldWorkspace(pid))?;
    Ok(HolderEntry {
        userns: userns.into(),
        mntns: mntns.into(),
        workspace: held,
        identity,
    })
}

/// `path` below the holder's root, one `O_PATH | O_NOFOLLOW` step at a time.
fn open_below(root: &File, path: &Path) -> std::io::Result<OwnedFd> {
    use nix::fcntl::{openat, OFlag};
    let flags = OFlag::O_PATH | OFlag::O_NOFOLLOW | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
    let mut fd = OwnedFd::from(root.try_clone()?);
    for name in path.iter().filter(|c| *c != "/") {
        fd = openat(&fd, name, flags, nix::sys::stat::Mode::empty())?;
    }
    Ok(fd)
}

/// The workspace's owner when it is a tmpfs of an owner uid of this
/// provider's subordinate ids (any mode: module doc).
fn owner_of(fd: &OwnedFd) -> Option<Identity> {
    let st = nix::sys::stat::fstat(fd).ok()?;
    let fs = nix::sys::statfs::fstatfs(fd).ok()?;
    #[allow(clippy::useless_conversion)]
    let tmpfs = i64::from(fs.filesystem_type().0) == TMPFS_MAGIC;
    let ids = subordinate_ids::for_current_user().ok()?;
    let owned = ids.uids.owners().contains(st.st_uid) && st.st_gid == st.st_uid;
    (tmpfs && owned).then_some(Identity {
        uid: st.st_uid,
        gid: st.st_gid,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_workspace_that_cannot_be_opened_is_not_named_by_its_host_path() {
        let (pid, start_time) = me();
        // This process's root has no such path: the open fails, and says so without it.
        let missing = Path::new("/var/tmp/cordon-no-such-session-key/ws");
        let err = open(HolderRef { pid, start_time }, missing).err().unwrap();
        let text = err.to_string();
        assert!(matches!(err, HolderError::Open { .. }), "{text}");
        assert!(!text.contains("cordon-no-such-session-key"), "{text}");
    }

    #[test]
    fn a_refused_workspace_is_named_by_its_holder_not_by_its_host_path() {
        // The message reaches whoever gets the session's errors (round 7b, R7b-2).
        let text = HolderError::NotHeldWorkspace(4242).to_string();
        assert!(text.contains("namespace holder 4242"), "{text}");
        assert!(!text.contains('/'), "{text}");
    }

    fn me() -> (i32, u64) {
        let pid = std::process::id();
        (
            i32::try_from(pid).unwrap(),
            process_start_time(pid).unwrap(),
        )
    }

    #[test]
    fn a_pid_whose_start_time_is_not_the_recorded_one_is_not_the_holder() {
        // This process stands for a pid reused since the holder was recorded.
        let (pid, start_time) = me();
        let wrong = HolderRef {
            pid,
            start_time: start_time + 1,
        };
        match open(wrong, Path::new("/tmp")) {
            Err(HolderError::Gone {
                found, expected, ..
            }) => {
                assert_eq!((found, expected), (Some(start_time), start_time + 1))
            }
            other => panic!("expected Gone, got {:?}", other.err()),
        }
        let dead = HolderRef {
            pid: i32::MAX,
            start_time,
        };
        assert!(matches!(
            open(dead, Path::new("/tmp")),
            Err(HolderError::Gone { .. })
        ));
    }

    #[test]
    fn a_process_in_the_providers_own_user_namespace_holds_nothing() {
        let (pid, start_time) = me();
        let found = open(HolderRef { pid, start_time }, Path::new("/tmp"));
        assert!(
            matches!(found, Err(HolderError::NotUnshared(p)) if p == pid),
            "{:?}",
            found.err()
        );
    }
}
