//! `--receipt FILE`: the launcher's receipt, copied out of the control root
//! (which is removed when the run settles). Written by the launcher's one
//! atomic writer (temp file + rename in the target's directory), so a
//! reader never sees half a receipt.

use std::ffi::OsString;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use cordon_launcher::host::atomic_file::{self, Durability};
use cordon_launcher::request::host_path;

use crate::lexical_path;

#[derive(Debug)]
pub struct ReceiptWriteError {
    pub path: PathBuf,
    pub source: std::io::Error,
}

impl std::fmt::Display for ReceiptWriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "write the receipt to {}: {}",
            self.path.display(),
            self.source
        )
    }
}

/// The `--receipt` file's directory, opened before the run without
/// following any link (`host_path::open_no_follow`), and the file's name in
/// it: the receipt is written relative to that descriptor, so a directory
/// on the path that the sandbox swaps for a link meanwhile redirects
/// nothing (round 4, R4-3).
#[derive(Debug)]
pub struct ReceiptTarget {
    path: PathBuf,
    dir: OwnedFd,
    name: OsString,
}

impl ReceiptTarget {
    pub fn open(path: &Path) -> Result<ReceiptTarget, ReceiptWriteError> {
        let error = |source| ReceiptWriteError {
            path: path.to_path_buf(),
            source,
        };
        let absolute = lexical_path::absolute("--receipt", path)
            .map_err(|e| error(std::io::Error::new(std::io::ErrorKind::InvalidInput, e)))?;
        let (Some(parent), Some(name)) = (absolute.parent(), absolute.file_name()) else {
            let why = "name a file, not a directory";
            return Err(error(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                why,
            )));
        };
        let dir =
            host_path::open_no_follow(parent, true).map_err(|e| error(std::io::Error::other(e)))?;
        Ok(ReceiptTarget {
            path: path.to_path_buf(),
            dir,
            name: name.to_os_string(),
        })
    }

    /// Writes `json` (plus a newline) atomically and durably, with the mode
    /// `File::create` would give it (0666 less the umask).
    pub fn write(&self, json: &str) -> Result<(), ReceiptWriteError> {
        let mut bytes = Vec::with_capacity(json.len() + 1);
        bytes.extend_from_slice(json.as_bytes());
        bytes.push(b'\n');
        atomic_file::write_at(
            self.dir.as_fd(),
            &self.name,
            &bytes,
            0o666,
            Durability::Synced,
        )
        .map_err(|source| ReceiptWriteError {
            path: self.path.clone(),
            source,
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn the_receipt_replaces_the_file_whole_and_leaves_no_temp_behind() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("r.json");
        std::fs::write(&target, "old").unwrap();
        ReceiptTarget::open(&target)
            .unwrap()
            .write("{\"a\":1}")
            .unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "{\"a\":1}\n");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        let missing = ReceiptTarget::open(&dir.path().join("no/such/dir.json")).unwrap_err();
        assert!(missing.to_string().contains("no/such/dir.json"));
    }

    #[test]
    fn a_receipt_directory_reached_through_a_symlink_is_refused_before_the_run() {
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(dir.path(), dir.path().join("out")).unwrap();
        let err = ReceiptTarget::open(&dir.path().join("out/r.json")).unwrap_err();
        assert!(
            err.to_string().contains("goes through the symlink"),
            "{err}"
        );
    }
}
