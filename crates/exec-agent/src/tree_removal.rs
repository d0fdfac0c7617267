//! Bounded removal of a directory tree for `session-files remove
//! --recursive`, with the launcher's rules (tree_removal.rs there): no link
//! is ever followed (every open is `openat(.., O_NOFOLLOW | O_DIRECTORY)`
//! from an open parent), at most two directories are open at a time, and at
//! most `budget` entries are visited — a sandbox writing into the tree as
//! fast as it goes cannot hold the call. Each pass descends from the top
//! to a directory with no subdirectory, unlinks what is in it and removes
//! it; passes repeat until the top itself is gone.

use std::ffi::{CStr, CString};
use std::os::fd::OwnedFd;

use nix::fcntl::{openat, OFlag};
use nix::sys::stat::Mode;
use nix::unistd::{unlinkat, UnlinkatFlags};

use crate::session_files::{sys as failure_sys, Failure};

fn failure_refused(json: String) -> Failure {
    Failure::Refused(json)
}

const DIR: OFlag = OFlag::O_RDONLY
    .union(OFlag::O_DIRECTORY)
    .union(OFlag::O_NOFOLLOW)
    .union(OFlag::O_CLOEXEC);

fn open_dir(parent: &OwnedFd, name: &CStr) -> Result<OwnedFd, Failure> {
    openat(parent, name, DIR, Mode::empty()).map_err(failure_sys("openat"))
}

/// Removes `parent/name` and everything below it, visiting at most `budget` entries.
pub fn remove_tree(parent: &OwnedFd, name: &str, budget: u64) -> Result<(), Failure> {
    let mut left = budget;
    loop {
        let top = parent
            .try_clone()
            .map_err(|_| failure_sys("dup")(nix::errno::Errno::EMFILE))?;
        // Names as the directory holds them (bytes): one not valid UTF-8 is
        // still removed (round 7, R7-3), never turned into another name.
        let here =
            CString::new(name).map_err(|_| failure_sys("openat")(nix::errno::Errno::EINVAL))?;
        let (mut at, mut here, mut depth) = (top, here, 0u32);
        loop {
            let dir = open_dir(&at, &here)?;
            let sub = empty_files(&dir, &mut left)?;
            match sub {
                Some(child) => {
                    at = dir;
                    here = child;
                    depth += 1;
                }
                None => {
                    unlinkat(&at, here.as_c_str(), UnlinkatFlags::RemoveDir)
                        .map_err(failure_sys("rmdir"))?;
                    break;
                }
            }
        }
        if depth == 0 {
            return Ok(());
        }
        if left == 0 {
            return Err(failure_refused(format!(
                r#"{{"refused":"incomplete","budget":{budget}}}"#
            )));
        }
    }
}

/// Unlinks every non-directory in `dir`; returns a subdirectory's name, if any.
fn empty_files(dir: &OwnedFd, left: &mut u64) -> Result<Option<CString>, Failure> {
    let copy = dir
        .try_clone()
        .map_err(|_| failure_sys("dup")(nix::errno::Errno::EMFILE))?;
    let mut entries = nix::dir::Dir::from_fd(copy).map_err(failure_sys("opendir"))?;
    for entry in entries.iter() {
        let entry = entry.map_err(failure_sys("readdir"))?;
        let name = entry.file_name();
        if name == c"." || name == c".." {
            continue;
        }
        if *left == 0 {
            return Err(failure_refused(r#"{"refused":"incomplete"}"#.into()));
        }
        *left -= 1;
        let st = nix::sys::stat::fstatat(dir, name, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW)
            .map_err(failure_sys("lstat"))?;
        if crate::session_files::kind(st.st_mode) == "directory" {
            return Ok(Some(name.to_owned()));
        }
        unlinkat(dir, name, UnlinkatFlags::NoRemoveDir).map_err(failure_sys("unlink"))?;
    }
    Ok(None)
}
