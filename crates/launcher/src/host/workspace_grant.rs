//! A private workspace handed to one run: the remote host's uploads
//! (`LaunchRequest::workspace_grant`). The directory is the provider's and
//! 0700; the launcher, once it knows the run's uid, adds one POSIX ACL entry
//! that lets that uid alone read and search it.
//!
//! Why an ACL and not the "other" bits or a chown: every sandbox process's
//! `/proc/<pid>/mountinfo`, which any local user reads, names a bind's
//! source path, so a directory open to "other" is open to every local user
//! who looks (round 12, R12-1); a root launcher's bwrap resolves the bind
//! source as the run's uid, so the run's uid itself must pass; and a chown to
//! the run's uid is not open to a non-root provider (its per-run uids are
//! subordinate ids it cannot chown to) and would leave the directory
//! unremovable by the provider. An entry naming a uid needs no privilege
//! over that uid: the directory's owner may write it. The files inside stay
//! the provider's (0644, directories 0755): the ACL on the top directory is
//! the only door.

use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use nix::fcntl::{openat, OFlag};
use nix::sys::stat::{fchmod, fstat, Mode};

use crate::host::process_identity::Identity;

/// `system.posix_acl_access`'s version (linux/posix_acl_xattr.h).
const ACL_XATTR_VERSION: u32 = 2;
const ACL_USER_OBJ: u16 = 0x01;
const ACL_USER: u16 = 0x02;
const ACL_GROUP_OBJ: u16 = 0x04;
const ACL_MASK: u16 = 0x10;
const ACL_OTHER: u16 = 0x20;
const ACL_UNDEFINED_ID: u32 = u32::MAX;
const READ_SEARCH: u16 = 0o5;
const ALL: u16 = 0o7;
const NONE: u16 = 0;

#[derive(Debug, thiserror::Error)]
pub enum WorkspaceGrantError {
    #[error("open the workspace {path}: {source}")]
    Open {
        path: PathBuf,
        source: crate::request::host_path::HostPathError,
    },
    #[error("the workspace {path} is not the provider's own directory (owner {owner}): only a directory the provider made is handed to a run")]
    NotOwned { path: PathBuf, owner: u32 },
    #[error("the workspace {path} could not be made private: {source}")]
    Io { path: PathBuf, source: nix::Error },
    #[error(
        "the workspace {path} could not be granted to the run's uid alone: its file system \
         refuses POSIX ACLs ({source}); keep the host's stateDir on a file system with ACLs \
         (ext4, xfs, btrfs, tmpfs)"
    )]
    Acl { path: PathBuf, source: nix::Error },
}

/// Pure: the `system.posix_acl_access` value that gives the owner
/// everything, `uid` read and search, and no one else anything. Entries in
/// the kernel's order (by tag); the mask is what `uid` gets.
pub fn acl_for(uid: u32) -> Vec<u8> {
    let entries = [
        (ACL_USER_OBJ, ALL, ACL_UNDEFINED_ID),
        (ACL_USER, READ_SEARCH, uid),
        (ACL_GROUP_OBJ, NONE, ACL_UNDEFINED_ID),
        (ACL_MASK, READ_SEARCH, ACL_UNDEFINED_ID),
        (ACL_OTHER, NONE, ACL_UNDEFINED_ID),
    ];
    let mut value = ACL_XATTR_VERSION.to_le_bytes().to_vec();
    for (tag, perm, id) in entries {
        value.extend_from_slice(&tag.to_le_bytes());
        value.extend_from_slice(&perm.to_le_bytes());
        value.extend_from_slice(&id.to_le_bytes());
    }
    value
}

/// Makes `path` (the provider's directory) 0700 and, when the run has its
/// own uid (`run`), lets that uid alone read and search it. A run without
/// one (`None`) runs as the provider, which owns the directory.
pub fn grant(path: &Path, run: Option<Identity>) -> Result<(), WorkspaceGrantError> {
    let opened = crate::request::host_path::open_no_follow(path, true).map_err(|source| {
        WorkspaceGrantError::Open {
            path: path.to_path_buf(),
            source,
        }
    })?;
    let io = |source| WorkspaceGrantError::Io {
        path: path.to_path_buf(),
        source,
    };
    // The walk's descriptor is O_PATH, which fchmod and fsetxattr refuse:
    // reopen the same directory through it (nothing is resolved by name).
    let dir: OwnedFd = openat(
        opened.as_fd(),
        ".",
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .map_err(io)?;
    let me = nix::unistd::geteuid().as_raw();
    let owner = fstat(dir.as_fd()).map_err(io)?.st_uid;
    if owner != me {
        return Err(WorkspaceGrantError::NotOwned {
            path: path.to_path_buf(),
            owner,
        });
    }
    fchmod(dir.as_fd(), Mode::S_IRWXU).map_err(io)?;
    match run {
        Some(who) if who.uid != me => {
            set_access_acl(&dir, &acl_for(who.uid)).map_err(|source| WorkspaceGrantError::Acl {
                path: path.to_path_buf(),
                source,
            })
        }
        _ => Ok(()),
    }
}

/// Thin: `fsetxattr(fd, "system.posix_acl_access", value)`; nix has no
/// xattr call.
fn set_access_acl(dir: &OwnedFd, value: &[u8]) -> Result<(), nix::Error> {
    let name = c"system.posix_acl_access";
    // SAFETY: `name` is NUL-terminated, `value` is a live slice of the
    // length passed, and the descriptor is open for the call's duration.
    let rc = unsafe {
        nix::libc::fsetxattr(
            dir.as_fd().as_raw_fd(),
            name.as_ptr(),
            value.as_ptr().cast(),
            value.len(),
            0,
        )
    };
    nix::errno::Errno::result(rc).map(drop)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn the_acl_names_the_owner_the_run_and_nobody_else_in_the_kernels_order() {
        let value = acl_for(0x7001_0005);
        assert_eq!(value.len(), 4 + 5 * 8);
        assert_eq!(&value[..4], &2u32.to_le_bytes());
        let entry = |i: usize| {
            let e = &value[4 + i * 8..12 + i * 8];
            (
                u16::from_le_bytes([e[0], e[1]]),
                u16::from_le_bytes([e[2], e[3]]),
                u32::from_le_bytes([e[4], e[5], e[6], e[7]]),
            )
        };
        assert_eq!(entry(0), (0x01, 0o7, u32::MAX));
        assert_eq!(entry(1), (0x02, 0o5, 0x7001_0005));
        assert_eq!(entry(2), (0x04, 0, u32::MAX));
        assert_eq!(entry(3), (0x10, 0o5, u32::MAX));
        assert_eq!(entry(4), (0x20, 0, u32::MAX));
    }

    #[test]
    fn a_granted_directory_is_0700_for_others_with_the_runs_entry() {
        let root = tempfile::tempdir().unwrap();
        let ws = root.path().join("ws");
        std::fs::create_dir(&ws).unwrap();
        std::fs::set_permissions(&ws, std::fs::Permissions::from_mode(0o755)).unwrap();
        let run = Identity {
            uid: 0x7001_0005,
            gid: 0x7001_0005,
        };
        grant(&ws, Some(run)).unwrap();
        let mode = std::fs::metadata(&ws).unwrap().permissions().mode() & 0o777;
        // Group bits show the mask (r-x), "other" nothing.
        assert_eq!(mode, 0o750);
        let mut value = vec![0u8; 256];
        let name = c"system.posix_acl_access";
        let path = std::ffi::CString::new(ws.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: NUL-terminated strings and a live buffer of the given length.
        let n = unsafe {
            nix::libc::getxattr(
                path.as_ptr(),
                name.as_ptr(),
                value.as_mut_ptr().cast(),
                value.len(),
            )
        };
        assert_eq!(&value[..n as usize], acl_for(run.uid).as_slice());
    }

    #[test]
    fn a_run_as_the_provider_gets_a_plain_0700_directory() {
        let root = tempfile::tempdir().unwrap();
        let ws = root.path().join("ws");
        std::fs::create_dir(&ws).unwrap();
        grant(&ws, None).unwrap();
        let mode = std::fs::metadata(&ws).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
    }

    #[test]
    fn a_symlinked_workspace_is_refused() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("real")).unwrap();
        std::os::unix::fs::symlink("real", root.path().join("link")).unwrap();
        let err = grant(&root.path().join("link"), None).unwrap_err();
        assert!(matches!(err, WorkspaceGrantError::Open { .. }), "{err}");
    }
}
