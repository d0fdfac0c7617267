//! Opening a caller-named host path (the workspace, a `filesystem.extra`)
//! without following any symlink in it, and the identity of what was opened.
//!
//! A sandbox with a writable workspace can plant `cache -> /dev/shm` in it;
//! a later run given `<project>/cache` as its workspace would otherwise get
//! the link's target bound read-write. So the path is walked from `/` one
//! component at a time with `openat(O_PATH | O_NOFOLLOW)`: a symlink
//! anywhere is refused, naming the component, and the descriptor the walk
//! ends on is the one bwrap binds (`--bind-fd`), so a swap after the walk
//! changes nothing (no check-then-use window).

use std::ffi::OsStr;
use std::os::fd::{AsFd, OwnedFd};

use nix::fcntl::OFlag;
use nix::sys::stat::{fstat, Mode, SFlag};
use std::path::{Component, Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum HostPathError {
    #[error(
        "{path} goes through the symlink {component}: cordon binds only real directories \
         and files, named without links (a link planted by an earlier run could point anywhere)"
    )]
    Symlink { path: PathBuf, component: PathBuf },
    #[error("open {path} (at {component}): {source}")]
    Open {
        path: PathBuf,
        component: PathBuf,
        source: std::io::Error,
    },
}

/// Device and inode of an opened host path, as the receipt records them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileIdentity {
    pub device: u64,
    pub inode: u64,
}

/// Thin: opens `path` (absolute) component by component, refusing any
/// symlink. `directory`: the last component must be a directory too.
pub fn open_no_follow(path: &Path, directory: bool) -> Result<OwnedFd, HostPathError> {
    let open_err = |component: &Path, source| HostPathError::Open {
        path: path.to_path_buf(),
        component: component.to_path_buf(),
        source,
    };
    let names: Vec<&OsStr> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name),
            _ => None,
        })
        .collect();
    let root = Path::new("/");
    let mut current = openat(None, OsStr::new("/"), OPEN_DIR).map_err(|e| open_err(root, e))?;
    let mut walked = PathBuf::from("/");
    for (index, name) in names.iter().enumerate() {
        walked.push(name);
        let last = index + 1 == names.len();
        let flags = if last && !directory {
            OPEN_ANY
        } else {
            OPEN_DIR
        };
        let next = match openat(Some(&current), name, flags) {
            Ok(fd) => fd,
            // O_DIRECTORY|O_NOFOLLOW on a link fails (ENOTDIR or ELOOP):
            // find out whether a link was the reason, to say so.
            Err(source) => {
                return Err(if is_symlink_at(&current, name) {
                    HostPathError::Symlink {
                        path: path.to_path_buf(),
                        component: walked,
                    }
                } else {
                    open_err(&walked, source)
                });
            }
        };
        // O_PATH|O_NOFOLLOW without O_DIRECTORY opens a link itself.
        if last && !directory && is_symlink(&next) {
            return Err(HostPathError::Symlink {
                path: path.to_path_buf(),
                component: walked,
            });
        }
        current = next;
    }
    Ok(current)
}

/// Thin: the device and inode of an open descriptor.
pub fn identity(fd: &OwnedFd) -> std::io::Result<FileIdentity> {
    // O_PATH descriptors support fstat.
    let stat = fstat(fd)?;
    Ok(FileIdentity {
        device: stat.st_dev,
        inode: stat.st_ino,
    })
}

const OPEN_ANY: OFlag = OFlag::O_PATH
    .union(OFlag::O_NOFOLLOW)
    .union(OFlag::O_CLOEXEC);
const OPEN_DIR: OFlag = OPEN_ANY.union(OFlag::O_DIRECTORY);

/// `openat` below `dir`, or the absolute "/" when `dir` is `None`.
fn openat(dir: Option<&OwnedFd>, name: &OsStr, flags: OFlag) -> std::io::Result<OwnedFd> {
    let at = dir.map_or(nix::fcntl::AT_FDCWD, |d| d.as_fd());
    Ok(nix::fcntl::openat(at, name, flags, Mode::empty())?)
}

fn is_symlink(fd: &OwnedFd) -> bool {
    fstat(fd).is_ok_and(|s| SFlag::from_bits_truncate(s.st_mode) & SFlag::S_IFMT == SFlag::S_IFLNK)
}

fn is_symlink_at(dir: &OwnedFd, name: &OsStr) -> bool {
    openat(Some(dir), name, OPEN_ANY).is_ok_and(|fd| is_symlink(&fd))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn scratch() -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "cordon-host-path-{}",
            crate::host::process_identity::random_hex(8).unwrap()
        ));
        std::fs::create_dir_all(dir.join("real/inner")).unwrap();
        std::fs::write(dir.join("real/file"), b"x").unwrap();
        std::os::unix::fs::symlink(dir.join("real"), dir.join("link")).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", dir.join("real/filelink")).unwrap();
        dir
    }

    #[test]
    fn a_real_directory_opens_and_its_identity_is_the_one_stat_reports() {
        let dir = scratch();
        let fd = open_no_follow(&dir.join("real/inner"), true).unwrap();
        let meta = std::fs::metadata(dir.join("real/inner")).unwrap();
        use std::os::unix::fs::MetadataExt;
        assert_eq!(
            identity(&fd).unwrap(),
            FileIdentity {
                device: meta.dev(),
                inode: meta.ino()
            }
        );
        assert!(open_no_follow(&dir.join("real/file"), false).is_ok());
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_symlink_anywhere_in_the_path_is_refused_naming_it() {
        let dir = scratch();
        for (path, directory) in [
            (dir.join("link"), true),
            (dir.join("link/inner"), true),
            (dir.join("link/file"), false),
            (dir.join("real/filelink"), false),
        ] {
            match open_no_follow(&path, directory) {
                Err(HostPathError::Symlink { component, .. }) => {
                    assert!(path.starts_with(&component), "{component:?} of {path:?}");
                    assert!(std::fs::symlink_metadata(&component)
                        .unwrap()
                        .file_type()
                        .is_symlink());
                }
                other => panic!("{path:?}: {other:?}"),
            }
        }
        assert!(matches!(
            open_no_follow(&dir.join("missing"), true),
            Err(HostPathError::Open { .. })
        ));
        std::fs::remove_dir_all(dir).unwrap();
    }
}
