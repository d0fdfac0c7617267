//! The capabilities the file helper (`session-files`) keeps once it is the
//! owner uid U in the holder's user namespace. `setns(CLONE_NEWUSER)` gives
//! it every capability there, and the switch to U does not take them away:
//! the kernel clears them only when a 0 uid (of that namespace) becomes
//! non-zero, and the provider's uid is not mapped in the holder's namespace
//! (only `U U 1` is), so it never was 0 there. Measured before this module:
//! CapEff `000001ffffffffff` as U, CAP_SYS_ADMIN over the holder's mount
//! namespace included.
//!
//! Kept: CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH and CAP_FOWNER, the three
//! the root provider's file tools (lib/sessions/files.js, the provider's
//! root) use to read a mode-000 file, write into a 0500 directory or remove
//! a tree with 000 directories, so both providers answer alike. In the
//! holder's namespace they reach only inodes of a mapped owner, i.e. U's,
//! whose modes U may change anyway. Everything else goes, from every set:
//! effective, permitted, inheritable, ambient and bounding; and
//! no_new_privs. The helper never execs, so the last three are depth.

use nix::errno::Errno;
use nix::libc;

/// `_LINUX_CAPABILITY_VERSION_3`: two 32-bit words per set.
const CAPABILITY_VERSION_3: u32 = 0x2008_0522;
const CAP_DAC_OVERRIDE: u32 = 1;
const CAP_DAC_READ_SEARCH: u32 = 2;
const CAP_FOWNER: u32 = 3;
/// Capability numbers a v3 set can name (two words).
const SET_BITS: u32 = 64;

/// The capabilities the helper keeps (see the module comment).
pub const KEPT: [u32; 3] = [CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER];

#[repr(C)]
struct Header {
    version: u32,
    pid: i32,
}

#[repr(C)]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Words {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// Pure: a capability list → its bit mask.
pub fn mask(caps: &[u32]) -> u64 {
    caps.iter()
        .filter(|c| **c < SET_BITS)
        .fold(0, |m, c| m | (1u64 << c))
}

/// Pure: the capset words for effective = permitted = `kept`, no inheritable.
fn words(kept: u64) -> [Words; 2] {
    let half = |shift: u32| {
        let bits = u32::try_from((kept >> shift) & 0xffff_ffff).unwrap_or(0);
        Words {
            effective: bits,
            permitted: bits,
            inheritable: 0,
        }
    };
    [half(0), half(32)]
}

fn prctl(option: libc::c_int, arg: libc::c_ulong, arg3: libc::c_ulong) -> Result<(), Errno> {
    // SAFETY: prctl with integer arguments only (no pointers): the options
    // used here (PR_CAPBSET_DROP, PR_CAP_AMBIENT) read nothing from memory.
    let rc = unsafe { libc::prctl(option, arg, arg3, 0 as libc::c_ulong, 0 as libc::c_ulong) };
    Errno::result(rc).map(drop)
}

fn capget() -> Result<[Words; 2], Errno> {
    let mut header = Header {
        version: CAPABILITY_VERSION_3,
        pid: 0,
    };
    let mut data = [Words::default(); 2];
    // SAFETY: capget writes one header and two v3 data words, which these
    // repr(C) values are (linux/capability.h); pid 0 is this thread.
    let rc = unsafe { libc::syscall(libc::SYS_capget, &mut header, data.as_mut_ptr()) };
    Errno::result(rc).map(|_| data)
}

/// Drops every capability but `kept` from the bounding set (while
/// CAP_SETPCAP is still effective), clears the ambient set, sets effective
/// and permitted to `kept` and inheritable to nothing, sets no_new_privs,
/// and reads the sets back: any step that fails, or sets that are not what
/// was asked, is an error (the caller does not go on).
pub fn keep_only(kept: u64) -> Result<(), Errno> {
    for cap in 0..SET_BITS {
        if kept & (1 << cap) != 0 {
            continue;
        }
        match prctl(libc::PR_CAPBSET_DROP, libc::c_ulong::from(cap), 0) {
            // EINVAL: a number this kernel has no capability for.
            Ok(()) | Err(Errno::EINVAL) => {}
            Err(e) => return Err(e),
        }
    }
    let clear_all = libc::c_ulong::try_from(libc::PR_CAP_AMBIENT_CLEAR_ALL).unwrap_or(0);
    match prctl(libc::PR_CAP_AMBIENT, clear_all, 0) {
        // EINVAL: a kernel before 4.3 has no ambient set.
        Ok(()) | Err(Errno::EINVAL) => {}
        Err(e) => return Err(e),
    }
    let header = Header {
        version: CAPABILITY_VERSION_3,
        pid: 0,
    };
    let data = words(kept);
    // SAFETY: capset reads one header and two v3 data words, which these
    // repr(C) values are (linux/capability.h); pid 0 is this thread (the
    // helper is single-threaded).
    let rc = unsafe { libc::syscall(libc::SYS_capset, &header, data.as_ptr()) };
    Errno::result(rc)?;
    nix::sys::prctl::set_no_new_privs()?;
    if capget()? != data {
        return Err(Errno::EPERM);
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_kept_set_is_the_three_file_permission_capabilities_in_the_low_word() {
        assert_eq!(mask(&KEPT), 0b1110);
        assert_eq!(
            mask(&[0, 40, 64]),
            1 | (1 << 40),
            "numbers past a v3 set are ignored"
        );
        let w = words(mask(&KEPT) | (1 << 40));
        assert_eq!(
            w,
            [
                Words {
                    effective: 0b1110,
                    permitted: 0b1110,
                    inheritable: 0
                },
                Words {
                    effective: 1 << 8,
                    permitted: 1 << 8,
                    inheritable: 0
                }
            ]
        );
    }
}
