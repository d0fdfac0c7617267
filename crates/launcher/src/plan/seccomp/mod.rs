//! The sandbox's syscall filter: a default-allow seccomp program that
//! denies the kernel surfaces an untrusted program never needs.
//!
//! Steps:
//! 1. `build_filter` (pure): the denial table → two `seccompiler` filters
//!    (one answering EPERM, one ENOSYS) → one merged BPF program → the
//!    `struct sock_filter[]` byte stream `bwrap --seccomp FD` reads.
//! 2. `program_fd` (thin): those bytes in a sealed memfd, rewound, ready to
//!    be placed on the fd number given to bwrap.
//!
//! bwrap installs the program right before it execs the sandboxed program,
//! after its own mounts and namespace setup, so nothing here needs to allow
//! bwrap's own work. `no_new_privs` is set by bwrap before loading it.

pub mod sealed_memfd;

use std::collections::BTreeMap;
use std::os::fd::OwnedFd;

use seccompiler::{
    sock_filter, BackendError, BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp,
    SeccompCondition, SeccompFilter, SeccompRule, TargetArch,
};

/// Which socket families the sandbox may create.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SocketFamilies {
    /// Only AF_UNIX (socket and socketpair). The net namespace already hides
    /// every host network and abstract socket; this closes the kernel's
    /// protocol code (netlink, packet, vsock, …) as attack surface too.
    #[default]
    UnixOnly,
    /// AF_UNIX, AF_INET and AF_INET6: a mediated-network run, whose programs
    /// reach the in-sandbox relay on 127.0.0.1. The private net namespace
    /// (only `lo`) stays the boundary; every other family is still denied.
    UnixAndInet,
}

/// What the filter must enforce. One profile today; the struct keeps the
/// call sites stable when a policy grows a knob.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct SeccompPolicy {
    pub sockets: SocketFamilies,
}

/// The name recorded in receipts; bump it when the denial table changes.
pub const PROFILE_NAME: &str = "cordon-default-v5";

/// How a denied call fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Denial {
    /// EPERM: "you may not", which callers report as such.
    Eperm,
    /// ENOSYS: "this kernel has no such call", the answer glibc (clone3 →
    /// clone) and libuv/liburing (io_uring → epoll/threads) take as a cue to
    /// fall back to an older mechanism instead of failing.
    Enosys,
}

/// Which calls of a syscall are denied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgMatch {
    Always,
    /// arg0 (domain) is anything but AF_UNIX.
    FamilyNotUnix,
    /// arg0 (flags) asks for any new namespace.
    NewNamespaceFlags,
    /// arg0 is neither the query (0xffffffff) nor PER_LINUX (0).
    PersonalityChange,
    /// The mode argument (its index) has S_ISUID or S_ISGID set: no
    /// set-uid/set-gid file is ever created or made, in a workspace the host
    /// sees or anywhere else (see `SETID_MODE_BITS`).
    SetIdMode(u8),
    /// arg1 (the command of `fcntl` and `ioctl`, an `unsigned int`) is one
    /// of these; every other command passes.
    CommandIn(&'static [u32]),
}

/// One row of the denial table; `docs/security.md` mirrors it.
#[derive(Clone, Copy, Debug)]
pub struct DeniedSyscall {
    pub name: &'static str,
    pub nr: i64,
    pub args: ArgMatch,
    pub denial: Denial,
}

const fn deny(name: &'static str, nr: i64, args: ArgMatch, denial: Denial) -> DeniedSyscall {
    DeniedSyscall {
        name,
        nr,
        args,
        denial,
    }
}

use ArgMatch::{Always, CommandIn, FamilyNotUnix, NewNamespaceFlags, PersonalityChange, SetIdMode};
use Denial::{Enosys, Eperm};

/// The denial table. Order is irrelevant (the filters are keyed by number).
pub const DENIED_SYSCALLS: &[DeniedSyscall] = &[
    deny("socket", libc::SYS_socket, FamilyNotUnix, Eperm),
    deny("socketpair", libc::SYS_socketpair, FamilyNotUnix, Eperm),
    deny("ptrace", libc::SYS_ptrace, Always, Eperm),
    deny(
        "process_vm_readv",
        libc::SYS_process_vm_readv,
        Always,
        Eperm,
    ),
    deny(
        "process_vm_writev",
        libc::SYS_process_vm_writev,
        Always,
        Eperm,
    ),
    // Another process's descriptors (the namespace init's eventfd, bwrap's
    // pipes): the same reach into a process as ptrace, without its check.
    deny("pidfd_getfd", libc::SYS_pidfd_getfd, Always, Eperm),
    deny("io_uring_setup", libc::SYS_io_uring_setup, Always, Enosys),
    deny("io_uring_enter", libc::SYS_io_uring_enter, Always, Enosys),
    deny(
        "io_uring_register",
        libc::SYS_io_uring_register,
        Always,
        Enosys,
    ),
    // Kernel AIO: every context counts against the host-wide
    // `fs.aio-max-nr`, so one sandbox could take all of it and make
    // `io_setup` fail for every host process. ENOSYS makes libaio users
    // fall back to synchronous or threaded I/O, as for io_uring.
    deny("io_setup", libc::SYS_io_setup, Always, Enosys),
    deny("io_destroy", libc::SYS_io_destroy, Always, Enosys),
    deny("io_submit", libc::SYS_io_submit, Always, Enosys),
    deny("io_cancel", libc::SYS_io_cancel, Always, Enosys),
    deny("io_getevents", libc::SYS_io_getevents, Always, Enosys),
    deny("io_pgetevents", SYS_IO_PGETEVENTS, Always, Enosys),
    // Memory that no process's address space holds, so RLIMIT_AS does not
    // bound it: a memfd kept only as a descriptor, a SysV segment left
    // attached to nothing. Without a cgroup that is host memory far past
    // the ceiling. ENOSYS: V8 and glibc treat a missing memfd_create as
    // "use anonymous memory"; nothing cordon runs needs SysV shm.
    deny("memfd_create", libc::SYS_memfd_create, Always, Enosys),
    deny("shmget", libc::SYS_shmget, Always, Enosys),
    deny("shmat", libc::SYS_shmat, Always, Enosys),
    deny("shmctl", libc::SYS_shmctl, Always, Enosys),
    // inotify on a host-bound directory (`/usr`, a read-only extra) reports
    // host activity as it happens: a live feed of the programs the host
    // runs and a covert channel between sandboxes. ENOSYS: libuv and Node
    // fall back to polling with stat.
    #[cfg(target_arch = "x86_64")]
    deny("inotify_init", libc::SYS_inotify_init, Always, Enosys),
    deny("inotify_init1", libc::SYS_inotify_init1, Always, Enosys),
    // fanotify is the same feed (FAN_OPEN_EXEC on a bound `/usr/bin` names
    // every program a host process runs from it), unprivileged for inode
    // marks since Linux 5.13. ENOSYS, like inotify.
    deny("fanotify_init", libc::SYS_fanotify_init, Always, Enosys),
    deny("fanotify_mark", libc::SYS_fanotify_mark, Always, Enosys),
    // POSIX message queues: the kernel charges a queue's bytes
    // (`RLIMIT_MSGQUEUE`) up the user-namespace chain to the namespace's
    // owner, a non-root provider, so a sandbox could take the provider's
    // whole quota (its `mq_open` then fails with EMFILE). Denied before the
    // kernel charges anything (a refused `mq_open` under a 0 rlimit is still
    // charged for a moment, enough for concurrent attempts to starve the
    // provider). ENOSYS: what a kernel without CONFIG_POSIX_MQUEUE answers,
    // which programs already handle as "no message queues here".
    deny("mq_open", libc::SYS_mq_open, Always, Enosys),
    deny("bpf", libc::SYS_bpf, Always, Eperm),
    deny("perf_event_open", libc::SYS_perf_event_open, Always, Eperm),
    deny("userfaultfd", libc::SYS_userfaultfd, Always, Eperm),
    deny("keyctl", libc::SYS_keyctl, Always, Eperm),
    deny("add_key", libc::SYS_add_key, Always, Eperm),
    deny("request_key", libc::SYS_request_key, Always, Eperm),
    deny("mount", libc::SYS_mount, Always, Eperm),
    deny("umount2", libc::SYS_umount2, Always, Eperm),
    deny("pivot_root", libc::SYS_pivot_root, Always, Eperm),
    deny("move_mount", libc::SYS_move_mount, Always, Eperm),
    deny("open_tree", libc::SYS_open_tree, Always, Eperm),
    deny("fsopen", libc::SYS_fsopen, Always, Eperm),
    deny("fsconfig", libc::SYS_fsconfig, Always, Eperm),
    deny("fsmount", libc::SYS_fsmount, Always, Eperm),
    deny("fspick", libc::SYS_fspick, Always, Eperm),
    deny("mount_setattr", libc::SYS_mount_setattr, Always, Eperm),
    deny("unshare", libc::SYS_unshare, Always, Eperm),
    deny("setns", libc::SYS_setns, Always, Eperm),
    deny("clone", libc::SYS_clone, NewNamespaceFlags, Eperm),
    deny("clone3", libc::SYS_clone3, Always, Enosys),
    deny("kexec_load", libc::SYS_kexec_load, Always, Eperm),
    deny("kexec_file_load", libc::SYS_kexec_file_load, Always, Eperm),
    deny("init_module", libc::SYS_init_module, Always, Eperm),
    deny("finit_module", libc::SYS_finit_module, Always, Eperm),
    deny("delete_module", libc::SYS_delete_module, Always, Eperm),
    deny(
        "personality",
        libc::SYS_personality,
        PersonalityChange,
        Eperm,
    ),
    deny("acct", libc::SYS_acct, Always, Eperm),
    deny("swapon", libc::SYS_swapon, Always, Eperm),
    deny("swapoff", libc::SYS_swapoff, Always, Eperm),
    deny("reboot", libc::SYS_reboot, Always, Eperm),
    deny("settimeofday", libc::SYS_settimeofday, Always, Eperm),
    // Set-id bits: every call that sets a mode, by its mode argument's index.
    #[cfg(target_arch = "x86_64")]
    deny("chmod", libc::SYS_chmod, SetIdMode(1), Eperm),
    deny("fchmod", libc::SYS_fchmod, SetIdMode(1), Eperm),
    deny("fchmodat", libc::SYS_fchmodat, SetIdMode(2), Eperm),
    deny("fchmodat2", SYS_FCHMODAT2, SetIdMode(2), Eperm),
    #[cfg(target_arch = "x86_64")]
    deny("open", libc::SYS_open, SetIdMode(2), Eperm),
    deny("openat", libc::SYS_openat, SetIdMode(3), Eperm),
    #[cfg(target_arch = "x86_64")]
    deny("creat", libc::SYS_creat, SetIdMode(1), Eperm),
    #[cfg(target_arch = "x86_64")]
    deny("mkdir", libc::SYS_mkdir, SetIdMode(1), Eperm),
    deny("mkdirat", libc::SYS_mkdirat, SetIdMode(2), Eperm),
    #[cfg(target_arch = "x86_64")]
    deny("mknod", libc::SYS_mknod, SetIdMode(1), Eperm),
    deny("mknodat", libc::SYS_mknodat, SetIdMode(2), Eperm),
    // openat2's mode lives in a struct in memory, out of the filter's
    // reach; ENOSYS makes libc and runtimes fall back to openat, filtered.
    deny("openat2", libc::SYS_openat2, Always, Enosys),
    deny("clock_settime", libc::SYS_clock_settime, Always, Eperm),
    deny("clock_adjtime", libc::SYS_clock_adjtime, Always, Eperm),
    deny("adjtimex", libc::SYS_adjtimex, Always, Eperm),
    // The host kernel log (host and other tenants' messages): readable by
    // any uid where `kernel.dmesg_restrict` is 0, so denied whatever the
    // sysctl says.
    deny("syslog", libc::SYS_syslog, Always, Eperm),
    // fcntl commands whose effect reaches past the sandbox (see
    // `DENIED_FCNTL_COMMANDS`); every other command passes.
    deny(
        "fcntl",
        libc::SYS_fcntl,
        CommandIn(DENIED_FCNTL_COMMANDS),
        Eperm,
    ),
    // ioctl commands that push input into a terminal (see
    // `DENIED_IOCTL_COMMANDS`).
    deny(
        "ioctl",
        libc::SYS_ioctl,
        CommandIn(DENIED_IOCTL_COMMANDS),
        Eperm,
    ),
];

/// fcntl commands a sandbox may not use, and why the rest are allowed:
/// - `F_SETLEASE`: a lease on a bound file the sandbox owns (a
///   reserved-owner workspace, any file of a non-root provider), even
///   through a read-only bind, makes every host `open` of that file for
///   writing block up to `fs.lease-break-time` (45 s), again and again, as
///   long as the holder ignores SIGIO: it froze a provider's event loop.
/// - `F_NOTIFY` (dnotify): a watch on a host-bound directory reports host
///   activity as it happens, as inotify (ENOSYS) would.
/// - `F_SETOWN`, `F_SETOWN_EX`, `F_SETSIG` stay allowed: the owner pid or
///   process group is looked up in the sandbox's own pid namespace (a host
///   pid names nothing there: ESRCH), and the kernel checks the setter's
///   right to signal it when the signal is sent, so SIGIO/SIGURG can reach
///   only the sandbox's own processes.
/// - `F_SETPIPE_SZ` stays allowed: pipe pages are a per-user quota,
///   bounded with the rest of the sandbox uid's quotas (docs/security.md).
pub const DENIED_FCNTL_COMMANDS: &[u32] = &[F_SETLEASE, F_NOTIFY];

/// ioctl commands a sandbox may not use. `TIOCSTI` pushes bytes into a
/// terminal's input queue and `TIOCLINUX` (subcode 2/3) pastes a console
/// selection as input: on any terminal descriptor that reaches the sandbox
/// (there is no controlling terminal, fds 0–2 are /dev/null and pipes, and
/// no pty can be opened, but a caller's `extra` could bind a tty device),
/// they would type commands into whatever reads it on the host.
pub const DENIED_IOCTL_COMMANDS: &[u32] = &[TIOCSTI, TIOCLINUX];

// The command numbers (linux/fcntl.h, asm-generic/ioctls.h), as the
// kernel's `unsigned int cmd`.
const F_SETLEASE: u32 = 1024;
const F_NOTIFY: u32 = 1026;
const TIOCSTI: u32 = 0x5412;
const TIOCLINUX: u32 = 0x541C;

/// clone(2) flags that create a namespace. CLONE_NEWTIME (0x80) is left
/// out: for clone(2) that bit is part of the exit signal, and time
/// namespaces need unshare/clone3, both denied outright.
const NAMESPACE_CLONE_FLAGS: [libc::c_int; 7] = [
    libc::CLONE_NEWUSER,
    libc::CLONE_NEWNS,
    libc::CLONE_NEWPID,
    libc::CLONE_NEWNET,
    libc::CLONE_NEWIPC,
    libc::CLONE_NEWUTS,
    libc::CLONE_NEWCGROUP,
];

/// io_pgetevents(2) (Linux 4.18), by number: the libc crate does not name it.
#[cfg(target_arch = "x86_64")]
const SYS_IO_PGETEVENTS: i64 = 333;
#[cfg(not(target_arch = "x86_64"))]
const SYS_IO_PGETEVENTS: i64 = 292;

/// fchmodat2(2) (Linux 6.6), by number: not every libc crate names it.
const SYS_FCHMODAT2: i64 = 452;

/// The mode bits no sandbox may set: a set-uid or set-gid file left in a
/// writable workspace would run, for any local user, as the sandbox's uid.
const SETID_MODE_BITS: [libc::mode_t; 2] = [libc::S_ISUID, libc::S_ISGID];

/// personality(0xffffffff) only queries; PER_LINUX (0) is the default.
const PERSONALITY_QUERY: u64 = 0xffff_ffff;
const PER_LINUX: u64 = 0;

/// x32 syscalls carry this bit and report AUDIT_ARCH_X86_64; a denylist keyed
/// on plain numbers would miss them, so every x32 call gets ENOSYS.
#[cfg(target_arch = "x86_64")]
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// The kernel's cap on a classic BPF program (BPF_MAXINSNS).
const BPF_MAX_INSTRUCTIONS: usize = 4096;

/// Bytes in one serialized `struct sock_filter` (u16 code, u8 jt, u8 jf, u32 k).
pub const SOCK_FILTER_BYTES: usize = 8;

// Classic BPF opcodes used when merging (linux/bpf_common.h).
const BPF_LD_W_ABS: u16 = 0x20;
const BPF_JMP_JA: u16 = 0x05;
const BPF_JMP_JGE_K: u16 = 0x35;
const BPF_RET_K: u16 = 0x06;
/// Offset of `nr` in `struct seccomp_data`.
const SECCOMP_DATA_NR: u32 = 0;
/// seccompiler's prefix that checks `seccomp_data.arch` (kills on mismatch).
const ARCH_CHECK_LEN: usize = 3;

#[derive(Debug, thiserror::Error)]
pub enum SeccompError {
    #[error("no seccomp filter for architecture {arch}")]
    UnsupportedArch { arch: &'static str },
    #[error("building the {syscall} rule: {source}")]
    BuildRule {
        syscall: &'static str,
        source: BackendError,
    },
    #[error("compiling the seccomp filter: {source}")]
    CompileFilter { source: BackendError },
    #[error("the seccomp program has {instructions} instructions (max {BPF_MAX_INSTRUCTIONS})")]
    ProgramTooLarge { instructions: usize },
    #[error("the seccomp program's descriptor: {0}")]
    Memfd(crate::plan::seccomp::sealed_memfd::SealedMemfdError),
}

/// The seccompiler architecture this build filters for.
pub fn target_arch() -> Result<TargetArch, SeccompError> {
    let arch = std::env::consts::ARCH;
    match arch {
        "x86_64" => Ok(TargetArch::x86_64),
        "aarch64" => Ok(TargetArch::aarch64),
        _ => Err(SeccompError::UnsupportedArch { arch }),
    }
}

/// Pure: the policy → the byte stream bwrap's `--seccomp FD` expects.
pub fn build_filter(policy: &SeccompPolicy) -> Result<Vec<u8>, SeccompError> {
    let program = build_program(policy)?;
    Ok(serialize(&program))
}

/// Pure: the policy → one BPF program (see `merge` for its layout).
pub fn build_program(policy: &SeccompPolicy) -> Result<BpfProgram, SeccompError> {
    let arch = target_arch()?;
    let eperm = compile(policy, Denial::Eperm, libc::EPERM, arch)?;
    let enosys = compile(policy, Denial::Enosys, libc::ENOSYS, arch)?;
    let program = merge(&eperm, &enosys);
    if program.len() > BPF_MAX_INSTRUCTIONS {
        return Err(SeccompError::ProgramTooLarge {
            instructions: program.len(),
        });
    }
    Ok(program)
}

/// seccompiler gives a filter one match action, so each errno is its own
/// filter; both are default-allow.
fn compile(
    policy: &SeccompPolicy,
    denial: Denial,
    errno: i32,
    arch: TargetArch,
) -> Result<BpfProgram, SeccompError> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for row in DENIED_SYSCALLS.iter().filter(|row| row.denial == denial) {
        rules.insert(row.nr, rules_for(policy, row)?);
    }
    let errno = u32::try_from(errno).unwrap_or(1);
    SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(errno),
        arch,
    )
    .and_then(BpfProgram::try_from)
    .map_err(|source| SeccompError::CompileFilter { source })
}

/// An empty rule list means "every call"; otherwise any rule matching denies.
fn rules_for(
    policy: &SeccompPolicy,
    row: &DeniedSyscall,
) -> Result<Vec<SeccompRule>, SeccompError> {
    let arg_dword = |arg: u8, op: SeccompCmpOp, value: u64| {
        SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, value)
    };
    let dword = |op: SeccompCmpOp, value: u64| arg_dword(0, op, value);
    let built = match (row.args, policy.sockets) {
        (ArgMatch::Always, _) => return Ok(Vec::new()),
        (ArgMatch::FamilyNotUnix, SocketFamilies::UnixOnly) => {
            let unix = u64::from(libc::AF_UNIX.unsigned_abs());
            vec![dword(SeccompCmpOp::Ne, unix).and_then(|c| SeccompRule::new(vec![c]))]
        }
        (ArgMatch::FamilyNotUnix, SocketFamilies::UnixAndInet) => {
            // One rule whose conditions all hold (AND): none of the three families.
            let families = [libc::AF_UNIX, libc::AF_INET, libc::AF_INET6];
            vec![families
                .iter()
                .map(|f| dword(SeccompCmpOp::Ne, u64::from(f.unsigned_abs())))
                .collect::<Result<Vec<_>, _>>()
                .and_then(SeccompRule::new)]
        }
        (ArgMatch::NewNamespaceFlags, _) => NAMESPACE_CLONE_FLAGS
            .iter()
            .map(|flag| {
                let flag = u64::from(flag.unsigned_abs());
                dword(SeccompCmpOp::MaskedEq(flag), flag).and_then(|c| SeccompRule::new(vec![c]))
            })
            .collect(),
        (ArgMatch::PersonalityChange, _) => vec![dword(SeccompCmpOp::Ne, PERSONALITY_QUERY)
            .and_then(|query| Ok((query, dword(SeccompCmpOp::Ne, PER_LINUX)?)))
            .and_then(|(query, linux)| SeccompRule::new(vec![query, linux]))],
        // One rule per bit: a rule's conditions are ANDed, rules are ORed.
        (ArgMatch::SetIdMode(arg), _) => SETID_MODE_BITS
            .iter()
            .map(|bit| {
                let bit = u64::from(*bit);
                arg_dword(arg, SeccompCmpOp::MaskedEq(bit), bit)
                    .and_then(|c| SeccompRule::new(vec![c]))
            })
            .collect(),
        (ArgMatch::CommandIn(commands), _) => commands
            .iter()
            .map(|command| {
                arg_dword(1, SeccompCmpOp::Eq, u64::from(*command))
                    .and_then(|c| SeccompRule::new(vec![c]))
            })
            .collect(),
    };
    built
        .into_iter()
        .collect::<Result<Vec<_>, _>>()
        .map_err(|source| SeccompError::BuildRule {
            syscall: row.name,
            source,
        })
}

/// Sequential composition of two default-allow programs with the same arch
/// check: `arch check · [x32 guard] · body(first) · body(second)`, where
/// every "allow" return in the first body becomes a jump to the second body.
/// Replacing one instruction by one keeps every jump offset of the first
/// body valid; JA's offset is 32-bit, so any distance is reachable.
fn merge(first: &BpfProgram, second: &BpfProgram) -> BpfProgram {
    let arch_check = first.iter().take(ARCH_CHECK_LEN).cloned();
    let first_body = &first[first.len().min(ARCH_CHECK_LEN)..];
    let second_body = &second[second.len().min(ARCH_CHECK_LEN)..];
    let mut out: BpfProgram = arch_check.collect();
    out.extend(x32_guard());
    let body_len = first_body.len();
    for (index, insn) in first_body.iter().enumerate() {
        if insn.code == BPF_RET_K && insn.k == libc::SECCOMP_RET_ALLOW {
            let skip = u32::try_from(body_len - index - 1).unwrap_or(u32::MAX);
            out.push(stmt(BPF_JMP_JA, skip));
        } else {
            out.push(insn.clone());
        }
    }
    out.extend(second_body.iter().cloned());
    out
}

#[cfg(target_arch = "x86_64")]
fn x32_guard() -> Vec<sock_filter> {
    let enosys = libc::SECCOMP_RET_ERRNO | libc::ENOSYS.unsigned_abs();
    vec![
        stmt(BPF_LD_W_ABS, SECCOMP_DATA_NR),
        sock_filter {
            code: BPF_JMP_JGE_K,
            jt: 0,
            jf: 1,
            k: X32_SYSCALL_BIT,
        },
        stmt(BPF_RET_K, enosys),
    ]
}

#[cfg(not(target_arch = "x86_64"))]
fn x32_guard() -> Vec<sock_filter> {
    Vec::new()
}

fn stmt(code: u16, k: u32) -> sock_filter {
    sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

/// `struct sock_filter` in native byte order, as bwrap passes it to the kernel.
fn serialize(program: &[sock_filter]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(program.len() * SOCK_FILTER_BYTES);
    for insn in program {
        bytes.extend_from_slice(&insn.code.to_ne_bytes());
        bytes.push(insn.jt);
        bytes.push(insn.jf);
        bytes.extend_from_slice(&insn.k.to_ne_bytes());
    }
    bytes
}

/// Thin: the program in a sealed, rewound memfd (close-on-exec; the spawner
/// dup2s it onto the number it passes to `--seccomp`). Use one per launch:
/// dup'd descriptors share the read offset bwrap consumes.
pub fn program_fd(bytes: &[u8]) -> Result<OwnedFd, SeccompError> {
    crate::plan::seccomp::sealed_memfd::create(c"cordon-seccomp", bytes)
        .map_err(SeccompError::Memfd)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests;
