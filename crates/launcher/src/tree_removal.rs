//! Removing a directory tree that a sandbox wrote, which is hostile: any
//! depth (a `mkdir d; chdir d` loop nests far past what a recursive walk's
//! stack or one descriptor per level can hold), any width, FIFOs, sockets,
//! symlinks and hardlinks pointing anywhere, read-only or 000-mode
//! directories.
//!
//! The walk holds one directory descriptor at a time (plus one while
//! stepping), one fixed `getdents64` buffer, and a depth counter: constant
//! fds and memory whatever the shape. Steps per directory: rewind → read a
//! batch of entries → unlink each non-directory and each empty directory
//! (`unlinkat`, which never follows a link) → descend into the first
//! non-empty subdirectory (`openat … O_NOFOLLOW`) → when a pass finds the
//! directory empty, climb to `..` and scan the parent again, which now
//! removes the emptied child. A directory the walk cannot enter or empty
//! (mode 000 or 0555, possible when the provider is not root) is made
//! owner-accessible first.
//!
//! Precondition: nothing writes the tree any more (the sandbox's pid
//! namespace is confirmed empty, or its provider is dead). Climbing by `..`
//! is then exact; the walk still checks that every `..` stays on the tree's
//! filesystem and that it arrives back at the tree's root, and stops with an
//! error otherwise, so it never leaves the tree.

use std::ffi::{CStr, CString};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// The `getdents64` batch: bounded memory per walk, many entries per call.
const DIRENT_BUFFER_BYTES: usize = 32 * 1024;
/// What a directory the walk must enter or empty is given (owner rwx).
const OWNER_ACCESS: libc::mode_t = 0o700;
/// Offsets in `struct linux_dirent64`: d_ino u64, d_off i64, d_reclen u16,
/// d_type u8, then the NUL-terminated name.
const DIRENT_RECLEN_AT: usize = 16;
const DIRENT_TYPE_AT: usize = 18;
const DIRENT_NAME_AT: usize = 19;

#[derive(Debug, thiserror::Error)]
pub enum TreeRemovalError {
    #[error("{step} {path}: {source}")]
    Step {
        step: &'static str,
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: `..` led off the tree being removed; stopped")]
    LeftTree { path: String },
}

/// Removes `path` and everything below it (idempotent: a missing path is
/// already removed). `path` itself may be a file or a symlink (unlinked,
/// never followed).
pub fn remove_tree(path: &Path) -> Result<(), TreeRemovalError> {
    let c_path = CString::new(path.as_os_str().as_bytes()).map_err(|_| {
        step_err(
            "name",
            path,
            std::io::Error::from_raw_os_error(libc::EINVAL),
        )
    })?;
    let here = Level {
        fd: libc::AT_FDCWD,
        name: &c_path,
    };
    match here.unlink(0) {
        Ok(()) => return Ok(()),
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => return Ok(()),
        Err(e) if !is_directory_answer(&e) => return Err(step_err("unlink", path, e)),
        Err(_) => {}
    }
    let root = here.open_dir().map_err(|e| step_err("open", path, e))?;
    let root_id = identity(&root).map_err(|e| step_err("stat", path, e))?;
    empty_below(root, root_id, path)?;
    match here.unlink(libc::AT_REMOVEDIR) {
        Err(e) if e.raw_os_error() != Some(libc::ENOENT) => Err(step_err("rmdir", path, e)),
        _ => Ok(()),
    }
}

/// The iterative walk: empties the directory `root` (identity `root_id`).
fn empty_below(root: OwnedFd, root_id: (u64, u64), path: &Path) -> Result<(), TreeRemovalError> {
    let mut buffer = vec![0u8; DIRENT_BUFFER_BYTES];
    let mut current = root;
    let mut depth: u64 = 0;
    loop {
        match scan(&current, &mut buffer)
            .map_err(|e| step_err("empty a directory below", path, e))?
        {
            Scan::Descend(child) => {
                current = child;
                depth += 1;
            }
            Scan::Empty if depth == 0 => {
                return if identity(&current).ok() == Some(root_id) {
                    Ok(())
                } else {
                    Err(TreeRemovalError::LeftTree {
                        path: path.display().to_string(),
                    })
                };
            }
            Scan::Empty => {
                let parent = Level {
                    fd: current.as_raw_fd(),
                    name: c"..",
                }
                .open_dir()
                .map_err(|e| step_err("climb to .. below", path, e))?;
                if identity(&parent).map(|(dev, _)| dev).ok() != Some(root_id.0) {
                    return Err(TreeRemovalError::LeftTree {
                        path: path.display().to_string(),
                    });
                }
                current = parent;
                depth -= 1;
            }
        }
    }
}

enum Scan {
    /// Every entry is gone.
    Empty,
    /// A non-empty subdirectory, opened: walk it first.
    Descend(OwnedFd),
}

/// Passes over `dir` until one finds no entry, removing what can be removed
/// in place; returns early with the first subdirectory that is not empty.
fn scan(dir: &OwnedFd, buffer: &mut [u8]) -> std::io::Result<Scan> {
    let mut made_writable = false;
    loop {
        // SAFETY: lseek on a descriptor we own; rewinding restarts getdents.
        if unsafe { libc::lseek(dir.as_raw_fd(), 0, libc::SEEK_SET) } < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let mut seen = false;
        loop {
            let filled = getdents(dir, buffer)?;
            if filled == 0 {
                break;
            }
            let mut at = 0;
            while at < filled {
                let (reclen, kind, name) = dirent_at(&buffer[..filled], at)?;
                at += reclen;
                if name == c"." || name == c".." {
                    continue;
                }
                seen = true;
                let entry = Level {
                    fd: dir.as_raw_fd(),
                    name,
                };
                if let Some(child) = remove_entry(&entry, kind, dir, &mut made_writable)? {
                    return Ok(Scan::Descend(child));
                }
            }
        }
        if !seen {
            return Ok(Scan::Empty);
        }
    }
}

/// Unlinks one entry; a directory that is not empty is opened instead
/// (returned) so the walk can empty it first.
fn remove_entry(
    entry: &Level<'_>,
    kind: u8,
    dir: &OwnedFd,
    made_writable: &mut bool,
) -> std::io::Result<Option<OwnedFd>> {
    let flags = if kind == libc::DT_DIR {
        libc::AT_REMOVEDIR
    } else {
        0
    };
    let mut result = entry.unlink(flags);
    if flags == 0 && result.as_ref().is_err_and(is_directory_answer) {
        result = entry.unlink(libc::AT_REMOVEDIR);
    }
    // A read-only directory (the sandbox's chmod 0555) refuses unlinks.
    if result
        .as_ref()
        .is_err_and(|e| e.raw_os_error() == Some(libc::EACCES))
        && !*made_writable
    {
        *made_writable = true;
        // SAFETY: fchmod on a directory descriptor we own.
        if unsafe { libc::fchmod(dir.as_raw_fd(), OWNER_ACCESS) } == 0 {
            result = entry.unlink(flags);
        }
    }
    match result {
        Ok(()) => Ok(None),
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(None),
        Err(e) if matches!(e.raw_os_error(), Some(libc::ENOTEMPTY) | Some(libc::EEXIST)) => {
            // Gone meanwhile: another provider's sweep of the same stale root.
            match entry.open_dir() {
                Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(None),
                other => other.map(Some),
            }
        }
        Err(e) => Err(e),
    }
}

/// EISDIR (Linux) or EPERM (POSIX) from unlinking a directory without
/// AT_REMOVEDIR.
fn is_directory_answer(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EISDIR) | Some(libc::EPERM))
}

/// One name in one open directory (or the cwd, for the tree's root).
struct Level<'a> {
    fd: RawFd,
    name: &'a CStr,
}

impl Level<'_> {
    fn unlink(&self, flags: libc::c_int) -> std::io::Result<()> {
        // SAFETY: unlinkat with a valid dirfd (or AT_FDCWD) and a C string;
        // it never follows a symlink in the last component.
        if unsafe { libc::unlinkat(self.fd, self.name.as_ptr(), flags) } < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }

    /// Opens the directory without following a link; a 000-mode directory
    /// (the sandbox's chmod) is made owner-accessible and opened again.
    fn open_dir(&self) -> std::io::Result<OwnedFd> {
        match self.open_dir_once() {
            Err(e) if e.raw_os_error() == Some(libc::EACCES) => {
                // SAFETY: fchmodat on a C string; the name was just seen as
                // a directory (open refused it for access, not ELOOP).
                if unsafe { libc::fchmodat(self.fd, self.name.as_ptr(), OWNER_ACCESS, 0) } < 0 {
                    return Err(e);
                }
                self.open_dir_once()
            }
            other => other,
        }
    }

    fn open_dir_once(&self) -> std::io::Result<OwnedFd> {
        let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        // SAFETY: openat with a valid dirfd and a C string.
        let fd = unsafe { libc::openat(self.fd, self.name.as_ptr(), flags) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: the kernel just returned this descriptor to us.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }
}

/// Fills `buffer` with the next batch of `linux_dirent64` records.
fn getdents(dir: &OwnedFd, buffer: &mut [u8]) -> std::io::Result<usize> {
    // SAFETY: getdents64 writes at most buffer.len() bytes into buffer.
    let n = unsafe {
        libc::syscall(
            libc::SYS_getdents64,
            dir.as_raw_fd(),
            buffer.as_mut_ptr(),
            buffer.len(),
        )
    };
    usize::try_from(n).map_err(|_| std::io::Error::last_os_error())
}

/// The record at `at`: (its length, d_type, its name).
fn dirent_at(records: &[u8], at: usize) -> std::io::Result<(usize, u8, &CStr)> {
    let malformed = || std::io::Error::from_raw_os_error(libc::EIO);
    let reclen_bytes = records
        .get(at + DIRENT_RECLEN_AT..at + DIRENT_RECLEN_AT + 2)
        .ok_or_else(malformed)?;
    let reclen = usize::from(u16::from_ne_bytes([reclen_bytes[0], reclen_bytes[1]]));
    let record = records.get(at..at + reclen).ok_or_else(malformed)?;
    let kind = *record.get(DIRENT_TYPE_AT).ok_or_else(malformed)?;
    let name = record.get(DIRENT_NAME_AT..).ok_or_else(malformed)?;
    let name = CStr::from_bytes_until_nul(name).map_err(|_| malformed())?;
    if reclen == 0 {
        return Err(malformed());
    }
    Ok((reclen, kind, name))
}

/// (device, inode) of an open directory.
fn identity(fd: &OwnedFd) -> std::io::Result<(u64, u64)> {
    let mut stat = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: fstat writes the struct on success.
    if unsafe { libc::fstat(fd.as_raw_fd(), stat.as_mut_ptr()) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fstat returned 0, so it initialised the struct.
    let stat = unsafe { stat.assume_init() };
    Ok((stat.st_dev, stat.st_ino))
}

fn step_err(step: &'static str, path: &Path, source: std::io::Error) -> TreeRemovalError {
    TreeRemovalError::Step {
        step,
        path: path.display().to_string(),
        source,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
#[path = "tree_removal_tests.rs"]
mod tests;
