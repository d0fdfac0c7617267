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

use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::path::Path;

use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::sys::stat::Mode;
use nix::unistd::UnlinkatFlags;

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

/// Temp names tried before giving up (each is random and opened
/// `O_EXCL`, so only names taken meanwhile cost a retry).
const TEMP_NAME_TRIES: usize = 16;

/// The same as [`write`], inside a directory opened beforehand (for the
/// CLI's `--receipt`: opened without following links before the sandbox
/// ran, [`crate::request::host_path::open_no_follow`]). Nothing is resolved by path
/// afterwards: a directory on the way swapped for a symlink by the sandbox
/// changes nothing (round 4, R4-3). `name` is one path component.
pub fn write_at(
    dir: BorrowedFd<'_>,
    name: &OsStr,
    bytes: &[u8],
    mode: u32,
    durability: Durability,
) -> std::io::Result<()> {
    let (temp_name, fd) = create_temp_at(dir, name, mode)?;
    let written = fill(std::fs::File::from(fd), bytes, durability)
        .and_then(|()| Ok(nix::fcntl::renameat(dir, temp_name.as_os_str(), dir, name)?));
    if written.is_err() {
        let _ = nix::unistd::unlinkat(dir, temp_name.as_os_str(), UnlinkatFlags::NoRemoveDir);
    }
    written
}

fn create_temp_at(
    dir: BorrowedFd<'_>,
    name: &OsStr,
    mode: u32,
) -> std::io::Result<(OsString, OwnedFd)> {
    let flags =
        OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_WRONLY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    let mut last = Errno::EEXIST;
    for _ in 0..TEMP_NAME_TRIES {
        let mut temp = OsString::from(".");
        temp.push(name);
        temp.push(format!(".{:016x}.tmp", fastrand::u64(..)));
        match nix::fcntl::openat(dir, temp.as_os_str(), flags, Mode::from_bits_truncate(mode)) {
            Ok(fd) => return Ok((temp, fd)),
            Err(Errno::EEXIST) => last = Errno::EEXIST,
            Err(e) => return Err(e.into()),
        }
    }
    Err(last.into())
}

fn fill(mut file: std::fs::File, bytes: &[u8], durability: Durability) -> std::io::Result<()> {
    file.write_all(bytes)?;
    if durability == Durability::Synced {
        file.sync_all()?;
    }
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

    #[test]
    fn write_at_stays_in_the_opened_directory_when_its_path_becomes_a_symlink() {
        use std::os::fd::AsFd;
        let scratch = tempfile::tempdir().unwrap();
        let (out, victim) = (scratch.path().join("out"), scratch.path().join("victim"));
        fs::create_dir(&out).unwrap();
        fs::create_dir(&victim).unwrap();
        let dir = crate::request::host_path::open_no_follow(&out, true).unwrap();
        // After the open: `out` moves away and a link to `victim` takes its place.
        fs::rename(&out, scratch.path().join("moved")).unwrap();
        std::os::unix::fs::symlink(&victim, &out).unwrap();
        write_at(
            dir.as_fd(),
            OsStr::new("r.json"),
            b"{}",
            0o600,
            Durability::Synced,
        )
        .unwrap();
        assert_eq!(
            fs::read_dir(&victim).unwrap().count(),
            0,
            "nothing went through the link"
        );
        let moved = scratch.path().join("moved");
        assert_eq!(fs::read_to_string(moved.join("r.json")).unwrap(), "{}");
        assert_eq!(
            fs::metadata(moved.join("r.json"))
                .unwrap()
                .permissions()
                .mode()
                & 0o777,
            0o600
        );
        assert_eq!(
            fs::read_dir(&moved).unwrap().count(),
            1,
            "no temp file is left"
        );
        // A name that is a directory: the rename fails and the temp goes.
        fs::create_dir(moved.join("taken")).unwrap();
        fs::write(moved.join("taken/inside"), "x").unwrap();
        assert!(write_at(
            dir.as_fd(),
            OsStr::new("taken"),
            b"{}",
            0o600,
            Durability::Volatile
        )
        .is_err());
        assert_eq!(fs::read_dir(&moved).unwrap().count(), 2);
    }
}
