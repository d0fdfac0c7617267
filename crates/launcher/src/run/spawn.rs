//! Starting bwrap for a plan: create the channels and the socket bwrap reads
//! its options from (`--args`), raise every source descriptor above the
//! slot range, clone a child that shares the provider's memory until its
//! exec (clone_exec.rs: no copy of the Node process), join it to the run's
//! v1 cgroup leaves by their `tasks` files (plan/cgroup/plan.rs
//! `spawn_joins`: no RCU grace period), drop it to the sandbox identity,
//! install the slots, exec bwrap. bwrap then blocks reading its options
//! until the supervisor sends them ([`OptionsFeed`]); on v2 the supervisor
//! first moves it into the run's cgroup by pid. Either way bwrap is inside
//! before it forks anything (docs/performance.md).
//!
//! Must run on a thread that lives until bwrap is reaped: `--die-with-parent`
//! (PR_SET_PDEATHSIG) fires when the *thread* that forked exits.

use std::fs::File;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::host::clone_exec::{self, ExecImage, Process};
use crate::plan::bwrap_argv::{BwrapArgs, NulInOption};
use crate::plan::{Plan, INFO_FD, PROTOCOL_FD};
use crate::run::child_fds::{die_with_parent, install_in_child, FdInstall, SOURCE_FD_FLOOR};

/// A started bwrap and the host ends of its channels.
#[derive(Debug)]
pub struct Spawned {
    pub child: Process,
    pub protocol: OwnedFd,
    /// The kernel refuses descriptors sent to `protocol` (`SO_PASSRIGHTS`
    /// off, Linux 6.16+): only then may an owner's loop read it
    /// (owner_reader.rs), as nothing it receives can close a descriptor on
    /// the owner's thread (round 14w, R14w-1).
    pub protocol_refuses_descriptors: bool,
    /// Where fd 3's pair was made: a pair maker's empty namespace, or the
    /// provider's where none could be made (the receipt's
    /// `confinement.channels.namespace`).
    pub channel_namespace: cordon_passed_fds::ChannelNamespace,
    pub stderr: OwnedFd,
    pub info: File,
    /// bwrap's options, still to be written: bwrap waits for them.
    pub options: OptionsFeed,
}

/// The launcher's end of the `--args` socketpair and the option bytes. Only
/// the launcher ever holds this end (close-on-exec, never installed in the
/// child), and a socket cannot be reopened through `/proc/<pid>/fd`, so what
/// bwrap reads is what was planned, as with a sealed memfd.
#[derive(Debug)]
pub struct OptionsFeed {
    fd: OwnedFd,
    bytes: Vec<u8>,
}

impl OptionsFeed {
    /// Writes every option byte; the caller closes the socket by dropping
    /// this (bwrap reads to EOF) — after a failed send, only once bwrap is
    /// killed: at EOF after a short list bwrap would go on with what it
    /// read. Fails when bwrap is already gone (stopped during set-up) or a
    /// send fails; never raises SIGPIPE (MSG_NOSIGNAL, like the protocol
    /// pump).
    pub fn send(&self) -> std::io::Result<()> {
        if crate::run::pumps::send_all(&self.fd, &self.bytes) == self.bytes.len() {
            return Ok(());
        }
        Err(std::io::Error::new(
            std::io::ErrorKind::BrokenPipe,
            "bwrap closed its options socket before reading them",
        ))
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    #[error("create socketpair for fd 3: {0}")]
    Socketpair(std::io::Error),
    #[error("create pipe: {0}")]
    Pipe(std::io::Error),
    #[error("open /dev/null: {0}")]
    DevNull(std::io::Error),
    #[error("raise descriptor {fd} above {SOURCE_FD_FLOOR}: {source}")]
    Raise { fd: RawFd, source: std::io::Error },
    #[error("prepare seccomp program descriptor: {0}")]
    Seccomp(std::io::Error),
    #[error("prepare bwrap's --args descriptor: {0}")]
    Options(#[from] NulInOption),
    #[error("cannot move bwrap into the run's cgroup: {0}")]
    OpenCgroupJoin(crate::plan::cgroup::CgroupError),
    #[error("cannot raise bwrap's oom_score_adj: {0}")]
    OomScore(std::io::Error),
    #[error("cannot move bwrap into the run's cgroup: writing {path}: {source}")]
    JoinCgroup {
        path: String,
        source: std::io::Error,
    },
    #[error("cannot set RLIMIT_{name} to {soft}/{hard} for the sandbox: {source}{hint}")]
    Rlimit {
        name: &'static str,
        soft: u64,
        hard: u64,
        source: std::io::Error,
        /// Why, when the provider's own hard limit is lower ([`rlimit_hint`]).
        hint: String,
    },
    #[error("exec {path}: {source}")]
    Exec {
        path: String,
        source: std::io::Error,
    },
}

/// Steps: socketpair (fd 3) → stderr pipe (fd 1+2) → info pipe (fd 4) →
/// seccomp memfd → `--args` socketpair → raise sources → clone/exec with
/// the child set-up. `sources` are the opened bind descriptors, one per plan
/// bind, by slot. `userns`: the run's user namespace of subordinate ids
/// (userns_map.rs), which the child enters as the plan's identity; without
/// it a planned identity is taken with raw setresgid/setresuid (a root
/// provider). `mntns`: a namespace holder's mount namespace, joined right
/// after the holder's user namespace `userns` (a non-root session).
/// `cgroup_joins`: the run's v1 `tasks` files, which the child writes itself
/// into first (empty on v2 or without a cgroup). The caller must
/// [`OptionsFeed::send`] the options (on v2 after joining bwrap to the run's
/// cgroup by pid), else bwrap waits forever.
pub fn spawn(
    plan: &Plan,
    args: BwrapArgs,
    mut sources: Vec<(RawFd, OwnedFd)>,
    userns: Option<&OwnedFd>,
    mntns: Option<&OwnedFd>,
    cgroup_joins: &[(std::path::PathBuf, OwnedFd)],
) -> Result<Spawned, SpawnError> {
    // Made in an empty network namespace, its sandbox end already named:
    // the provider's namespace stays out of the sandbox's reach (round 16b,
    // R16b-2; round 15w, R15w-6).
    let (host_sock, child_sock, channel_namespace) =
        cordon_passed_fds::sandbox_pair_in(nix::sys::socket::SockType::Stream)
            .map_err(SpawnError::Socketpair)?;
    // Before anything can send on it: fd 3 never carries a descriptor to the
    // host where the kernel can refuse them (Spawned::protocol_refuses_descriptors).
    let protocol_refuses_descriptors =
        cordon_passed_fds::refuse_passed_descriptors(std::os::fd::AsFd::as_fd(&host_sock));
    // Out-of-band bytes arrive inline: where descriptors still pass (before
    // 6.16) one would otherwise be closed inside the reading thread's
    // `recvmsg`, unneutralised (W25-1); a byte sent out of band is then
    // counted and read like any other instead of vanishing.
    cordon_passed_fds::read_out_of_band_inline(std::os::fd::AsFd::as_fd(&host_sock));
    let (stderr_r, stderr_w) = pipe().map_err(SpawnError::Pipe)?;
    let (info_r, info_w) = pipe().map_err(SpawnError::Pipe)?;
    let devnull = File::open("/dev/null").map_err(SpawnError::DevNull)?;
    let options = args.options_bytes()?;
    // A socketpair, not a pipe: a pipe can be reopened for writing through
    // /proc/<bwrap>/fd/N by another process of bwrap's uid while bwrap waits;
    // a socket cannot be opened that way (ENXIO), nor read there.
    let (options_w, options_r) = socketpair().map_err(SpawnError::Socketpair)?;
    sources.push((plan.args_slot, options_r));
    let stdio = Stdio {
        devnull: devnull.into(),
        stderr_w2: stderr_w.try_clone().map_err(SpawnError::Pipe)?,
        stderr_w,
    };
    let raised = child_slots(plan, sources, child_sock, info_w, stdio)?;
    let installs: Vec<FdInstall> = raised
        .iter()
        .map(|(slot, fd)| FdInstall {
            source: fd.as_raw_fd(),
            slot: *slot,
        })
        .collect();
    // Copied before fork: the pre_exec closure must not allocate.
    let rlimits = plan.rlimits.clone();
    let max_slot = plan.max_slot();
    let enter = userns
        .zip(plan.identity)
        .map(|(fd, id)| (fd.as_raw_fd(), id));
    let mount_ns = mntns.map(AsRawFd::as_raw_fd);
    let setuid = if enter.is_some() { None } else { plan.identity };
    let argv = args.exec_argv(plan.args_slot);
    // argv[0] as std's Command gives it: the program path. An empty
    // environment: the namespace init bwrap forks keeps it, and a program
    // reads it at `/proc/1/environ`.
    let image = ExecImage::new(
        &plan.bwrap,
        std::iter::once(plan.bwrap.as_os_str().to_owned()).chain(argv),
        std::iter::empty::<&std::ffi::OsStr>(),
    )
    .map_err(|source| exec_error(plan, source))?;
    let parent = std::process::id() as libc::pid_t;
    let joins: Vec<RawFd> = cgroup_joins.iter().map(|(_, fd)| fd.as_raw_fd()).collect();
    // Which join failed, written by the child (it shares this memory).
    let failed_join = AtomicUsize::new(usize::MAX);
    let oom_failed = AtomicBool::new(false);
    let failed_limit = AtomicUsize::new(usize::MAX);
    // std's Command dropped supplementary groups only as root.
    let drop_groups = nix::unistd::geteuid().is_root();
    // SAFETY: the closure runs in the cloned child, which shares the
    // provider's memory until its exec (clone_exec.rs): only direct syscalls
    // (open/write/close of /proc/self/oom_score_adj, write to the cgroup
    // `tasks` files, setns (user, then mount),
    // setgroups, setresgid, setresuid, setsid, prctl, getppid, dup2,
    // close_range/fcntl, setrlimit) and an atomic store, on `Copy` data and
    // slices prepared before the clone; no allocation, no lock, no panic (no
    // indexing, no unwrap). The identity comes before die_with_parent: a
    // change of credentials clears the parent-death signal it arms.
    let child = unsafe {
        clone_exec::spawn(&image, || {
            // First, with the provider's identity: the sandbox before the
            // provider in any OOM choice, then into the run's cgroup before
            // anything of bwrap runs.
            if let Err(error) = favour_oom_kill() {
                oom_failed.store(true, Ordering::SeqCst);
                return Err(error);
            }
            for (at, fd) in joins.iter().enumerate() {
                if let Err(error) = join_cgroup(*fd) {
                    failed_join.store(at, Ordering::SeqCst);
                    return Err(error);
                }
            }
            match (enter, setuid) {
                (Some((fd, identity)), _) => {
                    crate::host::userns_map::enter(fd, mount_ns, identity)?;
                }
                (None, Some(identity)) => clone_exec::assume_identity(identity, drop_groups)?,
                (None, None) => {}
            }
            clone_exec::leave_provider_session()?;
            die_with_parent(parent)?;
            install_in_child(&installs, max_slot, &rlimits, &failed_limit)
        })
    }
    .map_err(|source| {
        if oom_failed.load(Ordering::SeqCst) {
            return SpawnError::OomScore(source);
        }
        if let Some(limit) = rlimits.get(failed_limit.load(Ordering::SeqCst)) {
            return SpawnError::Rlimit {
                name: limit.name,
                soft: limit.soft,
                hard: limit.hard,
                hint: rlimit_hint(limit),
                source,
            };
        }
        match cgroup_joins.get(failed_join.load(Ordering::SeqCst)) {
            Some((path, _)) => SpawnError::JoinCgroup {
                path: path.display().to_string(),
                source,
            },
            None => exec_error(plan, source),
        }
    })?;
    // The child ends (`raised`: the pipe write ends among them) close here:
    // from now on only the sandbox holds them, so EOF means it is gone.
    drop(raised);
    Ok(Spawned {
        child,
        protocol: host_sock,
        protocol_refuses_descriptors,
        channel_namespace,
        stderr: stderr_r,
        info: File::from(info_r),
        options: OptionsFeed {
            fd: options_w,
            bytes: options,
        },
    })
}

/// Every descriptor the child installs, by slot — fds 0–2, fd 3 (protocol),
/// fd 4 (info), the seccomp program, the binds, the `--args` options —
/// raised above the slot range.
fn child_slots(
    plan: &Plan,
    sources: Vec<(RawFd, OwnedFd)>,
    child_sock: OwnedFd,
    info_w: OwnedFd,
    stdio: Stdio,
) -> Result<Vec<(RawFd, OwnedFd)>, SpawnError> {
    let mut slots: Vec<(RawFd, OwnedFd)> = vec![
        (0, stdio.devnull),
        (1, stdio.stderr_w),
        (2, stdio.stderr_w2),
        (PROTOCOL_FD, child_sock),
        (INFO_FD, info_w),
    ];
    if let Some(seccomp) = &plan.seccomp {
        // Sealed, rewound memfd: one per launch (dup'd fds share the offset).
        let memfd = crate::plan::seccomp::program_fd(&seccomp.program)
            .map_err(|e| SpawnError::Seccomp(std::io::Error::other(e)))?;
        slots.push((seccomp.slot, memfd));
    }
    slots.extend(sources);
    slots
        .into_iter()
        .map(|(slot, fd)| raise(fd).map(|fd| (slot, fd)))
        .collect()
}

/// bwrap's standard descriptors: stdin /dev/null, stdout and stderr both
/// on the stderr pipe.
struct Stdio {
    devnull: OwnedFd,
    stderr_w: OwnedFd,
    stderr_w2: OwnedFd,
}

/// The highest OOM score adjustment: sandbox processes (bwrap and all it
/// starts inherit it) go before the provider when the OOM killer chooses
/// within the provider's cgroup or the host. Without it the provider, the
/// largest task of its cgroup, was the choice when that cgroup (a
/// container's, a pod's) ran out: a sandbox within its own ceiling, its
/// memory spread over small processes, had the provider killed (black-box
/// round on the start, F1).
const OOM_SCORE_ADJ_MAX: &[u8] = b"1000";

/// In the child, first: raise its own `oom_score_adj` (any process may
/// raise its own; written while the provider is root, the kernel also raises
/// the floor below which the sandbox may not lower it again). A vfork child
/// changes only its own, not the provider's with which it shares memory
/// (the kernel skips `vfork_done` tasks there). Direct open/write/close.
fn favour_oom_kill() -> std::io::Result<()> {
    // SAFETY: open of a static NUL-terminated path, a write from a static
    // buffer, a close of the descriptor just opened: direct syscalls.
    unsafe {
        let fd = libc::open(
            c"/proc/self/oom_score_adj".as_ptr(),
            libc::O_WRONLY | libc::O_CLOEXEC,
        );
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let wrote = libc::write(
            fd,
            OOM_SCORE_ADJ_MAX.as_ptr().cast(),
            OOM_SCORE_ADJ_MAX.len(),
        );
        let error = std::io::Error::last_os_error();
        libc::close(fd);
        if wrote != OOM_SCORE_ADJ_MAX.len() as isize {
            return Err(error);
        }
    }
    Ok(())
}

/// In the child: "0" to a cgroup v1 `tasks` file moves the writing thread,
/// the child's only one (plan/cgroup/plan.rs `spawn_joins`). A direct
/// `write(2)`.
pub(crate) fn join_cgroup(tasks: RawFd) -> std::io::Result<()> {
    // SAFETY: a write of one byte from a static buffer to a descriptor the
    // caller holds open across the clone.
    match unsafe { libc::write(tasks, b"0".as_ptr().cast(), 1) } {
        1 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }
}

/// Why an rlimit could not be set, when the reason is the provider's own
/// hard limit: bwrap's child, no longer privileged, cannot raise it (black-box
/// round on the holder, F3: a provider with `ulimit -Hu 575` could run
/// nothing, and the error blamed the exec).
fn rlimit_hint(limit: &crate::plan::RlimitSetting) -> String {
    match crate::plan::rlimits::current_hard(limit.resource) {
        Some(hard) if hard < limit.hard => format!(
            " (this process's hard limit is {hard}: raise it for the provider, e.g. \
             `ulimit -H` or systemd's Limit{name}=)",
            name = limit.name
        ),
        _ => String::new(),
    }
}

fn exec_error(plan: &Plan, source: std::io::Error) -> SpawnError {
    SpawnError::Exec {
        path: plan.bwrap.display().to_string(),
        source,
    }
}

fn socketpair() -> std::io::Result<(OwnedFd, OwnedFd)> {
    use nix::sys::socket::{AddressFamily, SockFlag, SockType};
    let flags = SockFlag::SOCK_CLOEXEC;
    Ok(nix::sys::socket::socketpair(
        AddressFamily::Unix,
        SockType::Stream,
        None,
        flags,
    )?)
}

/// (read end, write end), both close-on-exec.
fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    Ok(nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?)
}

/// A close-on-exec duplicate numbered at least [`SOURCE_FD_FLOOR`].
fn raise(fd: OwnedFd) -> Result<OwnedFd, SpawnError> {
    let raw = fd.as_raw_fd();
    if raw >= SOURCE_FD_FLOOR {
        return Ok(fd);
    }
    rustix::io::fcntl_dupfd_cloexec(&fd, SOURCE_FD_FLOOR).map_err(|errno| SpawnError::Raise {
        fd: raw,
        source: errno.into(),
    })
}
