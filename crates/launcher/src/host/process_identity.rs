//! Identities of processes and fresh random names.

use std::io::Read;

use serde::Serialize;

/// Who bwrap runs as when the provider is root (never real root inside).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Identity {
    pub uid: u32,
    pub gid: u32,
}

/// A process's start time in clock ticks since boot (field 22 of
/// `/proc/<pid>/stat`); with the pid it identifies a process across pid reuse.
pub fn process_start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may contain spaces and ')': skip past the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// A process's parent pid (field 4 of `/proc/<pid>/stat`).
pub fn parent_pid(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// `bytes` random bytes from the kernel, hex-encoded.
pub fn random_hex(bytes: usize) -> std::io::Result<String> {
    let mut buf = vec![0u8; bytes];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut buf)?;
    Ok(crate::request::policy::hex(&buf))
}

/// The first uid of cordon's reserved range, and the default owner of a
/// provider's workspace (bwrap run as root would map the sandbox to real
/// root, so a root provider's sandboxes run as uids of this range):
/// 0x70000000, a uid no host account uses. Not 65534 ("nobody"): host daemons run as it, and a process
/// of the sandbox's uid can read its /proc/<pid>/environ and /proc/<pid>/root,
/// owns its user namespace and shares its RLIMIT_NPROC. This one lies above
/// system (<1000), user (1000-60000), nobody (65534) and the usual
/// subordinate ranges (/etc/subuid: 100000 + 65536·n), below 2^31 (signed
/// uid_t in old tools) and far from (uid_t)-1 and overflowuid.
pub const SANDBOX_UID: u32 = 0x7000_0000;
/// The sandbox's gid: the same reserved number, for the same reasons.
pub const SANDBOX_GID: u32 = 0x7000_0000;
/// Uids (and gids) `SANDBOX_UID..SANDBOX_UID + WORKSPACE_UIDS` are for the
/// owners of provider workspaces: runs on a workspace owned by one of them
/// run as that owner, so the workspace keeps working across runs.
pub const WORKSPACE_UIDS: u32 = 0x1_0000;
/// The first per-run uid: runs without such a workspace lease one of
/// `RUN_UID_FIRST..RUN_UID_FIRST + RUN_UIDS` for their lifetime.
pub const RUN_UID_FIRST: u32 = SANDBOX_UID + WORKSPACE_UIDS;
pub const RUN_UIDS: u32 = 0x1_0000;
/// The whole reserved range (workspace owners and per-run uids), which no
/// host account, service or subordinate range may use (`cordon doctor`).
pub const RESERVED_UIDS: std::ops::Range<u32> = SANDBOX_UID..RUN_UID_FIRST + RUN_UIDS;

/// `Some(SANDBOX_UID)` when the provider runs as root, else `None` (bwrap
/// runs as the provider's own unprivileged uid). The identity of the backend
/// probe; a run's own comes from `run_identity`.
pub fn sandbox_identity() -> Option<Identity> {
    let euid = nix::unistd::geteuid().as_raw();
    (euid == 0).then_some(Identity {
        uid: SANDBOX_UID,
        gid: SANDBOX_GID,
    })
}
