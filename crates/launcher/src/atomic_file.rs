//! Publishing a file whole: readers see the old file or the new one, never
//! half of one. The launcher's control-root files (owner record, receipt)
//! and the CLI's `--receipt FILE` both go through [`write`].
//!
//! Steps: a fresh temp file next to the target (`tempfile`: a random name
//! opened `O_CREAT|O_EXCL`, so an entry planted there — a symlink to a file
//! the provider would overwrite, when the directory belongs to the sandbox
//! identity — is never opened, and a name taken meanwhile is retried) →
//! write → optionally fsync → rename over the target. On any failure the
//! temp file is removed.

use std::io::Write;
use std::path::Path;

/// Whether the contents are flushed to the device before the rename.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durability {
    /// Control-root files live on a tmpfs or die with the run: no fsync.
    Volatile,
    /// A file the caller keeps (the CLI's receipt): fsync before renaming.
    Synced,
}

/// Writes `bytes` to `path` through a temp file created with `mode` (less
/// the umask) in the same directory.
pub fn write(path: &Path, bytes: &[u8], mode: u32, durability: Durability) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::other("not a file name"))?;
    let mut prefix = std::ffi::OsString::from(".");
    prefix.push(name);
    prefix.push(".");
    let mut temp = tempfile::Builder::new()
        .prefix(&prefix)
        .suffix(".tmp")
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(mode))
        .tempfile_in(dir)?;
    temp.write_all(bytes)?;
    if durability == Durability::Synced {
        temp.as_file().sync_all()?;
    }
    temp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_file_is_replaced_whole_with_its_mode_and_no_temp_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("r.json");
        fs::write(&target, "old").unwrap();
        write(&target, b"{\"a\":1}", 0o600, Durability::Synced).unwrap();
        assert_eq!(fs::read_to_string(&target).unwrap(), "{\"a\":1}");
        assert_eq!(
            fs::metadata(&target).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_failed_write_names_the_cause_and_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("no/such/dir.json");
        assert!(write(&missing, b"{}", 0o600, Durability::Volatile).is_err());
        // The rename fails (a directory stands at the target): the temp goes.
        let occupied = dir.path().join("taken");
        fs::create_dir(occupied.join("")).unwrap();
        fs::write(occupied.join("inside"), "x").unwrap();
        assert!(write(&occupied, b"{}", 0o600, Durability::Volatile).is_err());
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
