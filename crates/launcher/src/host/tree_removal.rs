//! Removing a directory tree that a sandbox wrote, which is hostile: any
//! depth (a `mkdir d; chdir d` loop nests far past what a recursive walk's
//! stack or one descriptor per level can hold), any width, FIFOs, sockets,
//! symlinks and hardlinks pointing anywhere, read-only or 000-mode
//! directories.
//!
//! The walk holds one directory at a time (two descriptors: one to act on,
//! one `nix::dir::Dir` stream to read it, with libc's fixed `readdir`
//! buffer; twice that while stepping) and a depth counter: constant fds and
//! memory whatever the shape. Steps per directory: read the entries from
//! the start → unlink each non-directory and each empty directory
//! (`unlinkat`, which never follows a link) → descend into the first
//! non-empty subdirectory (`openat … O_NOFOLLOW`) → when a pass finds the
//! directory empty, climb to `..` and scan the parent again, which now
//! removes the emptied child. A directory the walk cannot enter or empty
//! (mode 000 or 0555, possible when the provider is not root) is made
//! owner-accessible first.
//!
//! Precondition: nothing writes the tree any more (the sandbox's pid
//! namespace is confirmed empty, or its provider is dead). Climbing by `..`
//! is then exact; the walk still checks that every directory it enters,
//! going down or up, is on the tree's filesystem (a mount point below is
//! never entered) and that it arrives back at the tree's root, and stops
//! with an error otherwise, so it never leaves the tree. A directory is made
//! owner-accessible only through a descriptor opened without following a
//! link, so no chmod ever lands on a link's target.

use std::ffi::CStr;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::path::Path;

use nix::dir::{Dir, Type};
use nix::errno::Errno;
use nix::fcntl::{openat, OFlag, AT_FDCWD};
use nix::sys::stat::{fchmod, fchmodat, fstat, FchmodatFlags, Mode};
use nix::unistd::{unlinkat, UnlinkatFlags};
use nix::NixPath;

/// What a directory the walk must enter or empty is given (owner rwx).
const OWNER_ACCESS: Mode = Mode::S_IRWXU;

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
    #[error(
        "{path}: more than {max_entries} entries visited (a tree still being written?); stopped"
    )]
    OverBudget { path: String, max_entries: u64 },
}

/// Removes `path` and everything below it (idempotent: a missing path is
/// already removed). `path` itself may be a file or a symlink (unlinked,
/// never followed).
pub fn remove_tree(path: &Path) -> Result<(), TreeRemovalError> {
    remove_tree_within(path, u64::MAX)
}

/// [`remove_tree`] that stops with [`TreeRemovalError::OverBudget`] after
/// visiting `max_entries` entries: a bound on time when the tree may still
/// be written (a live sandbox creating entries as fast as they go).
pub fn remove_tree_within(path: &Path, max_entries: u64) -> Result<(), TreeRemovalError> {
    match unlink(AT_FDCWD, path, UnlinkatFlags::NoRemoveDir) {
        Ok(()) | Err(Errno::ENOENT) => return Ok(()),
        Err(e) if !is_directory_answer(e) => return Err(step_err("unlink", path, e)),
        Err(_) => {}
    }
    let root = OpenDir::open(AT_FDCWD, path).map_err(|e| step_err("open", path, e))?;
    let root_id = identity(&root.fd).map_err(|e| step_err("stat", path, e))?;
    empty_below(root, root_id, path, max_entries)?;
    match unlink(AT_FDCWD, path, UnlinkatFlags::RemoveDir) {
        Err(e) if e != Errno::ENOENT => Err(step_err("rmdir", path, e)),
        _ => Ok(()),
    }
}

/// Removes everything below the directory `path` and keeps `path` itself
/// (a mount point cannot be removed, only emptied). `path` must be a
/// directory, opened without following a link.
pub fn empty_tree(path: &Path, max_entries: u64) -> Result<(), TreeRemovalError> {
    let root = OpenDir::open(AT_FDCWD, path).map_err(|e| step_err("open", path, e))?;
    let root_id = identity(&root.fd).map_err(|e| step_err("stat", path, e))?;
    empty_below(root, root_id, path, max_entries)
}

/// The iterative walk: empties the directory `root` (identity `root_id`).
fn empty_below(
    root: OpenDir,
    root_id: (u64, u64),
    path: &Path,
    max_entries: u64,
) -> Result<(), TreeRemovalError> {
    let mut current = root;
    let mut depth: u64 = 0;
    let mut budget = max_entries;
    loop {
        match scan(&mut current, &mut budget)
            .map_err(|e| step_err("empty a directory below", path, e))?
        {
            Scan::OverBudget => {
                return Err(TreeRemovalError::OverBudget {
                    path: path.display().to_string(),
                    max_entries,
                })
            }
            Scan::Descend(child) => {
                // A mount point below (another filesystem) is not the tree's.
                if identity(&child.fd).map(|(dev, _)| dev).ok() != Some(root_id.0) {
                    return Err(TreeRemovalError::LeftTree {
                        path: path.display().to_string(),
                    });
                }
                current = child;
                depth += 1;
            }
            Scan::Empty if depth == 0 => {
                return if identity(&current.fd).ok() == Some(root_id) {
                    Ok(())
                } else {
                    Err(TreeRemovalError::LeftTree {
                        path: path.display().to_string(),
                    })
                };
            }
            Scan::Empty => {
                let parent = OpenDir::open(current.fd.as_fd(), c"..")
                    .map_err(|e| step_err("climb to .. below", path, e))?;
                if identity(&parent.fd).map(|(dev, _)| dev).ok() != Some(root_id.0) {
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
    /// The entry budget ran out first.
    OverBudget,
    /// A non-empty subdirectory, opened: walk it first.
    Descend(OpenDir),
}

/// One directory: a descriptor to act on (unlink, open, chmod) and a
/// stream reading its entries (a duplicate of it: the stream is borrowed
/// mutably while entries are acted on).
struct OpenDir {
    fd: OwnedFd,
    entries: Dir,
}

impl OpenDir {
    /// Opens the directory without following a link; a 000-mode directory
    /// (the sandbox's chmod) is made owner-accessible and opened again.
    fn open<P: ?Sized + NixPath>(at: BorrowedFd<'_>, name: &P) -> Result<OpenDir, Errno> {
        let fd = match open_dir_fd(at, name) {
            // The name was just seen as a directory: open refused it for
            // access (a link would have been ELOOP/ENOTDIR).
            Err(Errno::EACCES) => {
                make_owner_accessible(at, name).map_err(|_| Errno::EACCES)?;
                open_dir_fd(at, name)?
            }
            other => other?,
        };
        let entries = dir_stream(fd.try_clone().map_err(errno_of)?)?;
        Ok(OpenDir { fd, entries })
    }
}

/// chmod u+rwx of the directory `name`, never of what a link names: it is
/// opened `O_PATH|O_NOFOLLOW|O_DIRECTORY` (a link swapped in since the
/// entry was read fails with ELOOP/ENOTDIR), and that very inode is changed
/// through its `/proc/self/fd` entry (`fchmod` refuses `O_PATH`
/// descriptors; `fchmodat(…, AT_SYMLINK_NOFOLLOW)` is ENOTSUP on Linux).
fn make_owner_accessible<P: ?Sized + NixPath>(at: BorrowedFd<'_>, name: &P) -> Result<(), Errno> {
    let flags = OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    let fd = openat(at, name, flags, Mode::empty())?;
    let by_descriptor = format!("/proc/self/fd/{}", fd.as_raw_fd());
    fchmodat(
        AT_FDCWD,
        by_descriptor.as_str(),
        OWNER_ACCESS,
        FchmodatFlags::FollowSymlink,
    )
}

/// `Dir::from_fd` without its leak: nix 0.32 gives up the descriptor before
/// `fdopendir`, and when that fails (ENOMEM; ENOTDIR) nobody closes it. It
/// is still open then, so it is closed here.
fn dir_stream(fd: OwnedFd) -> Result<Dir, Errno> {
    let raw = fd.as_raw_fd();
    Dir::from_fd(fd).inspect_err(|_| {
        // SAFETY: fdopendir failed, so `raw` was not adopted by a stream:
        // it is open, and no other owner exists (from_fd consumed ours).
        drop(unsafe { OwnedFd::from_raw_fd(raw) });
    })
}

fn open_dir_fd<P: ?Sized + NixPath>(at: BorrowedFd<'_>, name: &P) -> Result<OwnedFd, Errno> {
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    openat(at, name, flags, Mode::empty())
}

/// Passes over `dir` until one finds no entry, removing what can be removed
/// in place; returns early with the first subdirectory that is not empty.
/// Each pass reads from the start (the stream rewinds when its iterator
/// is dropped).
fn scan(dir: &mut OpenDir, budget: &mut u64) -> Result<Scan, Errno> {
    let mut made_writable = false;
    let OpenDir { fd, entries } = dir;
    loop {
        let mut seen = false;
        for entry in entries.iter() {
            let entry = entry?;
            let name = entry.file_name();
            if name == c"." || name == c".." {
                continue;
            }
            seen = true;
            if *budget == 0 {
                return Ok(Scan::OverBudget);
            }
            *budget -= 1;
            let is_dir = entry.file_type() == Some(Type::Directory);
            if let Some(child) = remove_entry(fd.as_fd(), name, is_dir, &mut made_writable)? {
                return Ok(Scan::Descend(child));
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
    dir: BorrowedFd<'_>,
    name: &CStr,
    is_dir: bool,
    made_writable: &mut bool,
) -> Result<Option<OpenDir>, Errno> {
    let flags = if is_dir {
        UnlinkatFlags::RemoveDir
    } else {
        UnlinkatFlags::NoRemoveDir
    };
    let mut result = unlink(dir, name, flags);
    if !is_dir && result.is_err_and(is_directory_answer) {
        result = unlink(dir, name, UnlinkatFlags::RemoveDir);
    }
    // A read-only directory (the sandbox's chmod 0555) refuses unlinks.
    if result == Err(Errno::EACCES) && !*made_writable {
        *made_writable = true;
        if fchmod(dir, OWNER_ACCESS).is_ok() {
            result = unlink(dir, name, flags);
        }
    }
    match result {
        Ok(()) | Err(Errno::ENOENT) => Ok(None),
        Err(Errno::ENOTEMPTY) | Err(Errno::EEXIST) => {
            // Gone meanwhile: another provider's sweep of the same stale root.
            match OpenDir::open(dir, name) {
                Err(Errno::ENOENT) => Ok(None),
                other => other.map(Some),
            }
        }
        Err(e) => Err(e),
    }
}

/// `unlinkat`, which never follows a symlink in the last component.
fn unlink<P: ?Sized + NixPath>(
    at: BorrowedFd<'_>,
    name: &P,
    flags: UnlinkatFlags,
) -> Result<(), Errno> {
    unlinkat(at, name, flags)
}

/// EISDIR (Linux) or EPERM (POSIX) from unlinking a directory without
/// AT_REMOVEDIR.
fn is_directory_answer(e: Errno) -> bool {
    matches!(e, Errno::EISDIR | Errno::EPERM)
}

fn errno_of(e: std::io::Error) -> Errno {
    e.raw_os_error().map_or(Errno::EIO, Errno::from_raw)
}

/// (device, inode) of an open directory.
fn identity(fd: &OwnedFd) -> Result<(u64, u64), Errno> {
    let stat = fstat(fd)?;
    Ok((stat.st_dev, stat.st_ino))
}

fn step_err(step: &'static str, path: &Path, source: Errno) -> TreeRemovalError {
    TreeRemovalError::Step {
        step,
        path: path.display().to_string(),
        source: source.into(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
#[path = "tree_removal_tests.rs"]
mod tests;
