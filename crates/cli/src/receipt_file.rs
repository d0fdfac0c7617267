//! `--receipt FILE`: the launcher's receipt, copied out of the control root
//! (which is removed when the run settles). Written by the launcher's one
//! atomic writer (temp file + rename in the target's directory), so a
//! reader never sees half a receipt.

use std::path::{Path, PathBuf};

use cordon_launcher::atomic_file::{self, Durability};

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

/// Writes `json` (plus a newline) to `path` atomically and durably, with
/// the mode `File::create` would give it (0666 less the umask).
pub fn write_atomic(path: &Path, json: &str) -> Result<(), ReceiptWriteError> {
    let mut bytes = Vec::with_capacity(json.len() + 1);
    bytes.extend_from_slice(json.as_bytes());
    bytes.push(b'\n');
    atomic_file::write(path, &bytes, 0o666, Durability::Synced).map_err(|source| {
        ReceiptWriteError {
            path: path.to_path_buf(),
            source,
        }
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn the_receipt_replaces_the_file_whole_and_leaves_no_temp_behind() {
        let dir = std::env::temp_dir().join(format!("cordon-cli-receipt-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let target = dir.join("r.json");
        std::fs::write(&target, "old").unwrap();
        write_atomic(&target, "{\"a\":1}").unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "{\"a\":1}\n");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        let missing = write_atomic(&dir.join("no/such/dir.json"), "{}").unwrap_err();
        assert!(missing.to_string().contains("no/such/dir.json"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
