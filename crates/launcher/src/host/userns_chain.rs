//! Whether a process lives in a given user namespace or one nested below
//! it: a non-root provider's session sandboxes run in a user namespace of
//! their own (bwrap's) below the session holder's (holder.js), and the
//! orphans a dead provider left there are the session's, while a process
//! of the same uid in any other namespace is someone else's run (round 8,
//! R8-1: a caller's run on a workspace of that uid, started once the
//! holder was gone). Read from `/proc/<pid>/ns/user` and `NS_GET_PARENT`
//! (ioctl_ns(2)), walking up at most [`MAX_DEPTH`] levels (the kernel's
//! own nesting limit).
//!
//! A namespace is named by its `NS_GET_ID`, never by its nsfs inode: the
//! kernel hands inode numbers out again, lowest free first, as soon as a
//! namespace is freed, so a dead holder's recorded number soon names a
//! stranger's namespace (round 10, R10-1). `NS_GET_ID` is a 64-bit id
//! never handed out twice within a boot (not in creation order: measured
//! on 6.18, consecutive namespaces got 690620, 694294, 694295, 690621;
//! ids restart at boot: the
//! record pairs it with the boot id, lib/sessions/owner-sweep.js). A
//! kernel without it (before 6.18) answers ENOTTY: [`id_of`] then says
//! `Unsupported`, and nothing is matched by id.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// `NS_GET_PARENT`: `_IO(0xb7, 0x2)` (linux/nsfs.h).
const NS_GET_PARENT: libc::c_ulong = 0xb702;
/// `NS_GET_ID`: `_IOR(0xb7, 13, __u64)`, Linux 6.18's
/// `include/uapi/linux/nsfs.h` ("Retrieve namespace identifiers"); the
/// Debian headers here predate it, so it is defined here (0x8008b70d).
const NSIO: u8 = 0xb7;
const NS_GET_ID_NR: u8 = 13;
nix::ioctl_read!(ns_get_id, NSIO, NS_GET_ID_NR, u64);
/// User namespaces nest at most 32 deep (user_namespaces(7)).
const MAX_DEPTH: usize = 33;

/// What `NS_GET_ID` says of a namespace descriptor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NsId {
    /// Its id: unique within this boot.
    Id(u64),
    /// This kernel has no `NS_GET_ID` (before 6.18).
    Unsupported,
    /// The descriptor could not be asked (another error).
    Unknown,
}

/// Pure: what an `NS_GET_ID` call's outcome means. ENOTTY is the answer of
/// a kernel whose nsfs does not know the request; EINVAL is kept with it
/// (an ioctl a file does not implement, on older paths). Id 0 is never a
/// namespace's (the kernel's ids start at 1).
pub fn classify(result: Result<u64, nix::errno::Errno>) -> NsId {
    match result {
        Ok(0) => NsId::Unknown,
        Ok(id) => NsId::Id(id),
        Err(nix::errno::Errno::ENOTTY | nix::errno::Errno::EINVAL) => NsId::Unsupported,
        Err(_) => NsId::Unknown,
    }
}

/// `NS_GET_ID` of the namespace `ns` (any nsfs descriptor).
fn id_of_fd(ns: &OwnedFd) -> NsId {
    let mut id: u64 = 0;
    // SAFETY: NS_GET_ID writes one u64 through the pointer, which points at
    // `id`, alive for the call; `ns` is a descriptor we own.
    let result = unsafe { ns_get_id(ns.as_raw_fd(), &mut id) }.map(|_| id);
    classify(result)
}

/// The `NS_GET_ID` of `pid`'s user namespace (what a session record keeps).
/// `Unknown` when the process is gone or not ours to inspect.
pub fn id_of(pid: u32) -> NsId {
    match std::fs::File::open(format!("/proc/{pid}/ns/user")) {
        Ok(file) => id_of_fd(&OwnedFd::from(file)),
        Err(_) => NsId::Unknown,
    }
}

/// Pure: a namespace id as JS hands it over (a decimal string: a JSON
/// number loses precision above 2^53) → the id. Digits only, no sign, no
/// leading zero, not zero, at most u64.
pub fn parse_id(text: &str) -> Option<u64> {
    let digits = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    if !digits || text.starts_with('0') {
        return None;
    }
    text.parse().ok()
}

/// Pure over the walk: whether the chain of namespace ids from a process's
/// own namespace upward (`levels`, at most [`MAX_DEPTH`] read) reaches
/// `ancestor` before a level that cannot be read (`None`) or its top.
pub fn chain_reaches(levels: impl IntoIterator<Item = NsId>, ancestor: u64) -> bool {
    for level in levels.into_iter().take(MAX_DEPTH) {
        match level {
            NsId::Id(id) if id == ancestor => return true,
            NsId::Id(_) => {}
            NsId::Unsupported | NsId::Unknown => return false,
        }
    }
    false
}

/// The ids of `pid`'s user namespace and its parents, upward, read lazily.
/// Ends at the first namespace whose parent is not ours to see (the
/// initial namespace, or one above the provider's own).
fn chain(pid: u32) -> impl Iterator<Item = NsId> {
    let mut next = std::fs::File::open(format!("/proc/{pid}/ns/user"))
        .ok()
        .map(OwnedFd::from);
    std::iter::from_fn(move || {
        let ns = next.take()?;
        let id = id_of_fd(&ns);
        // SAFETY: NS_GET_PARENT takes no argument and only reads `ns`, a
        // descriptor we own; it returns a new descriptor or -1.
        let parent = unsafe { libc::ioctl(ns.as_raw_fd(), NS_GET_PARENT) };
        if parent >= 0 {
            // SAFETY: `parent` is a fresh descriptor the kernel just returned, owned by no one else.
            next = Some(unsafe { OwnedFd::from_raw_fd(parent) });
        }
        Some(id)
    })
}

/// Whether `pid`'s user namespace is the one with id `ancestor`
/// (`NS_GET_ID`) or lies below it. False when it cannot be read (gone, or
/// not ours to inspect, or a kernel without `NS_GET_ID`): then it is not
/// known to be the session's.
pub fn within(pid: u32, ancestor: u64) -> bool {
    chain_reaches(chain(pid), ancestor)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use nix::errno::Errno;

    #[test]
    fn the_request_code_is_the_kernels() {
        // _IOR(0xb7, 13, __u64) as Linux 6.18's nsfs.h spells it.
        assert_eq!(
            nix::request_code_read!(NSIO, NS_GET_ID_NR, std::mem::size_of::<u64>()) as u64,
            0x8008_b70d
        );
    }

    #[test]
    fn an_ioctl_outcome_is_an_id_unsupported_or_unknown() {
        assert_eq!(classify(Ok(692_902)), NsId::Id(692_902));
        assert_eq!(classify(Ok(0)), NsId::Unknown);
        assert_eq!(classify(Err(Errno::ENOTTY)), NsId::Unsupported);
        assert_eq!(classify(Err(Errno::EINVAL)), NsId::Unsupported);
        assert_eq!(classify(Err(Errno::EBADF)), NsId::Unknown);
        assert_eq!(classify(Err(Errno::EPERM)), NsId::Unknown);
    }

    #[test]
    fn a_namespace_id_is_a_plain_decimal() {
        assert_eq!(parse_id("692902"), Some(692_902));
        assert_eq!(parse_id("18446744073709551615"), Some(u64::MAX));
        // Above 2^53, where a JSON number would have rounded it.
        assert_eq!(parse_id("9007199254740993"), Some(9_007_199_254_740_993));
        for bad in [
            "",
            "0",
            "01",
            "+1",
            "-1",
            " 1",
            "1 ",
            "1e3",
            "0x10",
            "18446744073709551616",
        ] {
            assert_eq!(parse_id(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_chain_matches_only_an_id_it_reaches_before_an_unreadable_level() {
        use NsId::*;
        assert!(chain_reaches([Id(7), Id(5), Id(3)], 7), "its own");
        assert!(chain_reaches([Id(9), Id(7), Id(3)], 7), "a parent");
        assert!(!chain_reaches([Id(9), Id(8), Id(3)], 7), "not in it");
        assert!(!chain_reaches([Id(9), Unknown, Id(7)], 7), "unread level");
        assert!(!chain_reaches([Unsupported], 7), "no NS_GET_ID");
        assert!(!chain_reaches([], 7), "gone");
        let deep = std::iter::repeat_n(Id(1), MAX_DEPTH).chain([Id(7)]);
        assert!(!chain_reaches(deep, 7), "no deeper than the kernel nests");
    }

    #[test]
    fn a_process_is_within_its_own_namespace_and_the_initial_one_is_within_nothing_below() {
        let me = std::process::id();
        let NsId::Id(mine) = id_of(me) else {
            return; // a kernel without NS_GET_ID
        };
        assert!(within(me, mine));
        assert!(!within(me, mine.wrapping_add(1)));
        assert!(!within(u32::MAX, mine), "no such process");
        assert_eq!(id_of(u32::MAX), NsId::Unknown);
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
        let NsId::Id(mine) = id_of(std::process::id()) else {
            child.kill().unwrap();
            let _ = child.wait();
            return; // a kernel without NS_GET_ID
        };
        // The child unshares after it starts: wait until its namespace is another.
        let inner = (0..1000).find_map(|_| match id_of(pid) {
            NsId::Id(id) if id != mine => Some(id),
            _ => {
                std::thread::sleep(std::time::Duration::from_millis(10));
                None
            }
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
