//! Whether a process lives in a given user namespace or one nested below
//! it: a non-root provider's session sandboxes run in a user namespace of
//! their own (bwrap's) below the session holder's (holder.js), and the
//! orphans a dead provider left there are the session's, while a process
//! of the same uid in any other namespace is someone else's run (round 8,
//! R8-1: a caller's run on a workspace of that uid, started once the
//! holder was gone). Read from `/proc/<pid>/ns/user` and `NS_GET_PARENT`
//! (ioctl_ns(2)), walking up at most [`MAX_DEPTH`] levels (the kernel's
//! own nesting limit).

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::MetadataExt;

/// `NS_GET_PARENT`: `_IO(0xb7, 0x2)` (linux/nsfs.h).
const NS_GET_PARENT: libc::c_ulong = 0xb702;
/// User namespaces nest at most 32 deep (user_namespaces(7)).
const MAX_DEPTH: usize = 33;

/// The inode of `/proc/<pid>/ns/user` (what `stat` of that link shows).
pub fn inode_of(pid: u32) -> Option<u64> {
    std::fs::metadata(format!("/proc/{pid}/ns/user"))
        .ok()
        .map(|m| m.ino())
}

/// Whether `pid`'s user namespace is the one with inode `ancestor` or lies
/// below it. False when it cannot be read (gone, or not ours to inspect):
/// then it is not known to be the session's.
pub fn within(pid: u32, ancestor: u64) -> bool {
    let Ok(file) = std::fs::File::open(format!("/proc/{pid}/ns/user")) else {
        return false;
    };
    let mut ns = OwnedFd::from(file);
    for _ in 0..MAX_DEPTH {
        let Ok(ino) = nix::sys::stat::fstat(&ns).map(|st| st.st_ino) else {
            return false;
        };
        if ino == ancestor {
            return true;
        }
        // SAFETY: NS_GET_PARENT takes no argument and only reads `ns`, a
        // descriptor we own; it returns a new descriptor or -1.
        let parent = unsafe { libc::ioctl(ns.as_raw_fd(), NS_GET_PARENT) };
        if parent < 0 {
            return false; // the initial namespace, or one outside ours
        }
        // SAFETY: `parent` is a fresh descriptor the kernel just returned, owned by no one else.
        ns = unsafe { OwnedFd::from_raw_fd(parent) };
    }
    false
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_process_is_within_its_own_namespace_and_the_initial_one_is_within_nothing_below() {
        let me = std::process::id();
        let mine = inode_of(me).unwrap();
        assert!(within(me, mine));
        assert!(!within(me, mine.wrapping_add(1)));
        assert!(!within(u32::MAX, mine), "no such process");
    }

    #[test]
    fn a_process_in_a_nested_user_namespace_is_within_its_parents_and_not_the_other_way() {
        // unshare(1) makes a user namespace below ours (no privilege needed).
        let Ok(mut child) = std::process::Command::new("/usr/bin/unshare")
            .args(["--user", "/bin/sleep", "60"])
            .spawn()
        else {
            return; // no unshare(1) here
        };
        let pid = child.id();
        let mine = inode_of(std::process::id()).unwrap();
        // The child unshares after it starts: wait until its namespace is another.
        let inner = (0..1000).find_map(|_| {
            let ino = inode_of(pid).filter(|&ino| ino != mine);
            if ino.is_none() {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            ino
        });
        let checks = inner.map(|inner| {
            (
                within(pid, inner),
                within(pid, mine),
                within(std::process::id(), inner),
            )
        });
        child.kill().unwrap();
        let _ = child.wait();
        let Some((own, parent, reverse)) = checks else {
            return; // user namespaces are disabled here
        };
        assert!(own, "its own namespace");
        assert!(parent, "ours is its parent");
        assert!(!reverse, "we are not below it");
    }
}
