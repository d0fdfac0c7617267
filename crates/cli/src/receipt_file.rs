//! `--receipt FILE`: the launcher's receipt, copied out of the control root
//! (which is removed when the run settles). Written temp + rename in the
//! target's directory, so a reader never sees half a receipt.

use std::io::Write;
use std::path::{Path, PathBuf};

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

/// Writes `json` (plus a newline) to `path` atomically.
pub fn write_atomic(path: &Path, json: &str) -> Result<(), ReceiptWriteError> {
    let fail = |source| ReceiptWriteError {
        path: path.to_path_buf(),
        source,
    };
    let name = path
        .file_name()
        .ok_or_else(|| fail(std::io::Error::other("not a file name")))?;
    let mut temp_name = std::ffi::OsString::from(".");
    temp_name.push(name);
    temp_name.push(format!(".{}.tmp", std::process::id()));
    let temp = path.with_file_name(temp_name);
    let written = std::fs::File::create(&temp).and_then(|mut file| {
        file.write_all(json.as_bytes())?;
        file.write_all(b"\n")?;
        file.sync_all()
    });
    if let Err(source) = written.and_then(|()| std::fs::rename(&temp, path)) {
        let _ = std::fs::remove_file(&temp);
        return Err(fail(source));
    }
    Ok(())
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
