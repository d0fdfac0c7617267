//! `logFile` (docs/remote.md § Logging): opened for appending at start-up
//! and again at each SIGHUP (logrotate's `postrotate`), so that a rotated
//! log is never written to after the rotation was signalled.
//!
//! The path may sit in a directory other local users can write to (`/tmp`,
//! a shared log directory), so what is found there is not trusted:
//! 1. `O_NOFOLLOW`: a symlink planted at the path (to `/etc/passwd`, or to
//!    a file its planter reads) is refused, not followed;
//! 2. `O_NONBLOCK`: a FIFO planted there fails the open (`ENXIO`) instead
//!    of blocking the host until someone reads it;
//! 3. the opened file (`fstat`, not the path: no race) must be a regular
//!    file owned by the host's user with one link: a file another user
//!    created there, or a hard link to another file, is refused;
//! 4. a file the host creates is 0600 (less the umask): the lines name
//!    tenants and peers.

use std::fs::File;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Mode of a log file the host creates.
const LOG_FILE_MODE: u32 = 0o600;

#[derive(Debug, thiserror::Error)]
pub enum LogFileError {
    #[error("{path}: {source}")]
    Open {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: a symlink (a symlink at the log's path is never followed)")]
    Symlink { path: PathBuf },
    #[error("{path}: not a regular file")]
    NotRegular { path: PathBuf },
    #[error("{path}: owned by uid {owner}, not the host's uid {host}")]
    Owner {
        path: PathBuf,
        owner: u32,
        host: u32,
    },
    #[error("{path}: has {links} hard links (a link to another file is never appended to)")]
    Linked { path: PathBuf, links: u64 },
}

/// Opens `path` for appending, creating it 0600, steps 1–3.
pub fn open(path: &Path) -> Result<File, LogFileError> {
    let file = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .mode(LOG_FILE_MODE)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(path)
        .map_err(|source| match source.raw_os_error() {
            // O_NOFOLLOW's refusal of a symlink as the last component.
            Some(nix::libc::ELOOP) => LogFileError::Symlink {
                path: path.to_path_buf(),
            },
            _ => LogFileError::Open {
                path: path.to_path_buf(),
                source,
            },
        })?;
    let meta = file.metadata().map_err(|source| LogFileError::Open {
        path: path.to_path_buf(),
        source,
    })?;
    let path = path.to_path_buf();
    if !meta.file_type().is_file() {
        return Err(LogFileError::NotRegular { path });
    }
    let host = nix::unistd::geteuid().as_raw();
    if meta.uid() != host {
        return Err(LogFileError::Owner {
            path,
            owner: meta.uid(),
            host,
        });
    }
    if meta.nlink() != 1 {
        return Err(LogFileError::Linked {
            path,
            links: meta.nlink(),
        });
    }
    Ok(file)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_new_log_file_is_0600_and_an_existing_one_is_appended_to() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("host.log");
        std::fs::write(&path, "").unwrap();
        std::fs::remove_file(&path).unwrap();
        drop(open(&path).unwrap());
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode & !LOG_FILE_MODE, 0, "{mode:o}");
        std::fs::write(&path, "kept\n").unwrap();
        std::io::Write::write_all(&mut open(&path).unwrap(), b"added\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "kept\nadded\n");
    }

    #[test]
    fn a_symlink_a_hard_link_or_a_fifo_at_the_path_is_refused_and_left_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "victim\n").unwrap();
        let link = dir.path().join("sym.log");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        assert!(matches!(open(&link), Err(LogFileError::Symlink { .. })));
        let hard = dir.path().join("hard.log");
        std::fs::hard_link(&victim, &hard).unwrap();
        assert!(matches!(open(&hard), Err(LogFileError::Linked { .. })));
        let fifo = dir.path().join("fifo.log");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        // No reader: ENXIO at once (without O_NONBLOCK this test hangs).
        assert!(matches!(open(&fifo), Err(LogFileError::Open { .. })));
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "victim\n");
    }
}
