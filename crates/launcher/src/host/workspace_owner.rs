//! Stable owners for caller workspaces that runs write: the launcher API a
//! provider (or cordon's sessions) calls once per workspace directory, so
//! that every run on it runs as the same owner id (run_identity.rs adopts
//! a workspace's owner when it lies in the owner range) and the files runs
//! leave stay writable by the next one.
//!
//! Owners are numbered by a *slot* (0, 1, …) within the owner range: a
//! root provider's reserved range (`SANDBOX_UID + slot`), or the first half
//! of a non-root provider's subordinate ranges (`owners().first + slot`,
//! gid paired by offset). Two workspaces with different slots have
//! different owners, so the runs of one cannot touch the other's files.
//!
//! [`assign`] hands the directory itself (not its contents: give it an
//! empty, new directory) to the slot's owner. Root chowns it directly; a
//! non-root provider cannot chown to a subordinate id in the host
//! namespace, so a forked child joins a user namespace in which the
//! provider's own uid and gid and the owner's exist (userns_map.rs), where
//! it holds CAP_CHOWN over both, and chowns the opened directory there.

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use nix::sys::wait::{waitpid, WaitStatus};
use nix::unistd::{fork, ForkResult};

use crate::host::process_identity::{Identity, SANDBOX_GID, SANDBOX_UID, WORKSPACE_UIDS};
use crate::host::subordinate_ids::{self, Missing};
use crate::host::userns_map::{self, UsernsMapError};

#[derive(Debug, thiserror::Error)]
pub enum WorkspaceOwnerError {
    #[error("owner slot {slot} is outside the owner range ({count} owners)")]
    SlotOutOfRange { slot: u32, count: u32 },
    #[error("this non-root provider has no subordinate ids ({0:?}): {1}")]
    NoSubordinateIds(Missing, String),
    #[error("open workspace {path}: {source}")]
    Open {
        path: PathBuf,
        source: crate::request::host_path::HostPathError,
    },
    #[error("chown {path} to {uid}:{gid}: {source}")]
    Chown {
        path: PathBuf,
        uid: u32,
        gid: u32,
        source: std::io::Error,
    },
    #[error(transparent)]
    Userns(#[from] UsernsMapError),
}

/// The owner of `slot` for this provider (pure given the ranges): root's
/// reserved range, or the owner half of the provider's subordinate ids.
pub fn owner_for(slot: u32) -> Result<Identity, WorkspaceOwnerError> {
    if nix::unistd::geteuid().is_root() {
        if slot >= WORKSPACE_UIDS {
            let count = WORKSPACE_UIDS;
            return Err(WorkspaceOwnerError::SlotOutOfRange { slot, count });
        }
        return Ok(Identity {
            uid: SANDBOX_UID + slot,
            gid: SANDBOX_GID + slot,
        });
    }
    let ids = subordinate_ids::for_current_user().map_err(|missing| {
        let fix = subordinate_ids::fix_commands(&missing);
        WorkspaceOwnerError::NoSubordinateIds(missing, fix)
    })?;
    let owners = ids.uids.owners();
    if slot >= owners.count {
        let count = owners.count;
        return Err(WorkspaceOwnerError::SlotOutOfRange { slot, count });
    }
    let uid = owners.first + slot;
    let gid = ids.gid_for(uid).unwrap_or(ids.gids.first);
    Ok(Identity { uid, gid })
}

/// Hands the directory `dir` (opened without following links) to the
/// owner of `slot`; returns that owner.
pub fn assign(dir: &Path, slot: u32) -> Result<Identity, WorkspaceOwnerError> {
    let owner = owner_for(slot)?;
    let fd = crate::request::host_path::open_no_follow(dir, true).map_err(|source| {
        WorkspaceOwnerError::Open {
            path: dir.to_path_buf(),
            source,
        }
    })?;
    let chown_error = |source| WorkspaceOwnerError::Chown {
        path: dir.to_path_buf(),
        uid: owner.uid,
        gid: owner.gid,
        source,
    };
    if nix::unistd::geteuid().is_root() {
        fchown(&fd, owner).map_err(chown_error)?;
        return Ok(owner);
    }
    let uid = nix::unistd::getuid().as_raw();
    let gid = nix::unistd::getgid().as_raw();
    let ns = userns_map::create_mapping(&[uid, owner.uid], &[gid, owner.gid])?;
    chown_in_namespace(&ns, &fd, owner).map_err(chown_error)?;
    Ok(owner)
}

/// `fchown` of an `O_PATH` descriptor (through `AT_EMPTY_PATH`).
fn fchown(fd: &OwnedFd, owner: Identity) -> std::io::Result<()> {
    nix::unistd::fchownat(
        fd,
        "",
        Some(nix::unistd::Uid::from_raw(owner.uid)),
        Some(nix::unistd::Gid::from_raw(owner.gid)),
        nix::fcntl::AtFlags::AT_EMPTY_PATH,
    )?;
    Ok(())
}

/// Forks a child that joins `ns` and chowns `fd` there; its exit status
/// carries the errno. Between fork and `_exit` only direct syscalls
/// (setns, fchownat) on values prepared before the fork.
fn chown_in_namespace(ns: &OwnedFd, fd: &OwnedFd, owner: Identity) -> std::io::Result<()> {
    let (ns_raw, fd_raw) = (ns.as_raw_fd(), fd.as_raw_fd());
    // SAFETY: the provider is multi-threaded; the child makes only direct
    // syscalls on descriptors and integers prepared before fork and leaves
    // with `_exit`, never returning into the parent's Rust code.
    match unsafe { fork() }.map_err(std::io::Error::from)? {
        ForkResult::Child => {
            // SAFETY: direct syscalls in the forked child (see above).
            let errno = unsafe {
                if libc::setns(ns_raw, libc::CLONE_NEWUSER) != 0
                    || libc::fchownat(
                        fd_raw,
                        c"".as_ptr(),
                        owner.uid,
                        owner.gid,
                        libc::AT_EMPTY_PATH,
                    ) != 0
                {
                    *libc::__errno_location()
                } else {
                    0
                }
            };
            // SAFETY: ends the forked child without running any destructor.
            unsafe { libc::_exit(errno.clamp(0, 255)) }
        }
        ForkResult::Parent { child } => match waitpid(child, None)? {
            WaitStatus::Exited(_, 0) => Ok(()),
            WaitStatus::Exited(_, errno) => Err(std::io::Error::from_raw_os_error(errno)),
            other => Err(std::io::Error::other(format!("chown child: {other:?}"))),
        },
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    /// Set by the outer test when it re-runs this test binary as uid 65534.
    const INNER_DIR: &str = "CORDON_TEST_WORKSPACE_OWNER_DIR";
    const NOBODY: u32 = 65534;

    #[test]
    fn a_root_provider_hands_a_workspace_to_the_slot_of_its_reserved_range() {
        if std::env::var_os(INNER_DIR).is_some() || !nix::unistd::geteuid().is_root() {
            return crate::test_skip::skip(
                "workspace_owner::root",
                "needs a root provider (the non-root path has its own test)",
            );
        }
        let dir = tempfile::tempdir().unwrap();
        let owner = assign(dir.path(), 3).unwrap();
        assert_eq!(owner.uid, SANDBOX_UID + 3);
        let meta = std::fs::metadata(dir.path()).unwrap();
        assert_eq!((meta.uid(), meta.gid()), (owner.uid, owner.gid));
        assert!(matches!(
            assign(dir.path(), WORKSPACE_UIDS),
            Err(WorkspaceOwnerError::SlotOutOfRange { .. })
        ));
    }

    /// Not a specification: the entry point the test below re-executes as
    /// uid 65534 (a no-op in a normal run, where the variable is unset).
    #[test]
    fn helper_assigns_slot_2_when_re_executed_as_uid_65534() {
        let Some(dir) = std::env::var_os(INNER_DIR) else {
            return;
        };
        let owner = assign(Path::new(&dir), 2).unwrap();
        println!("OWNER {} {}", owner.uid, owner.gid);
    }

    #[test]
    fn a_non_root_provider_hands_a_workspace_to_an_owner_of_its_subordinate_range() {
        let subuid = std::fs::read_to_string(subordinate_ids::SUBUID_FILE).unwrap_or_default();
        let account = subordinate_ids::Account {
            name: Some("nobody"),
            uid: NOBODY,
        };
        let Some(range) = subordinate_ids::find_range(&subuid, account, NOBODY) else {
            return crate::test_skip::skip(
                "workspace_owner::non_root",
                "uid 65534 has no /etc/subuid range (.ci/run adds one)",
            );
        };
        if !nix::unistd::geteuid().is_root() {
            return crate::test_skip::skip(
                "workspace_owner::non_root",
                "needs root to run as 65534",
            );
        }
        // The test binary, copied where uid 65534 can execute it.
        let scratch = tempfile::tempdir().unwrap();
        std::fs::set_permissions(scratch.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let exe = scratch.path().join("tests");
        std::fs::copy(std::env::current_exe().unwrap(), &exe).unwrap();
        let dir = scratch.path().join("ws");
        std::fs::create_dir(&dir).unwrap();
        std::os::unix::fs::chown(&dir, Some(NOBODY), Some(NOBODY)).unwrap();
        let out = std::process::Command::new(&exe)
            .args([
                "--exact",
                "host::workspace_owner::tests::helper_assigns_slot_2_when_re_executed_as_uid_65534",
                "--nocapture",
            ])
            .env(INNER_DIR, &dir)
            .env_remove("CORDON_SKIP_LOG")
            .uid(NOBODY)
            .gid(NOBODY)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let meta = std::fs::metadata(&dir).unwrap();
        assert_eq!(meta.uid(), range.first + 2, "{text}");
        assert!(
            text.contains(&format!("OWNER {} ", range.first + 2)),
            "{text}"
        );
    }

    use std::os::unix::process::CommandExt;
}
