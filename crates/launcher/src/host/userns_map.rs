//! A user namespace owned by the (non-root) provider in which exactly the
//! ids of one run exist: its host uid and gid, each mapped to itself, from
//! the provider's subordinate ranges. bwrap's child (clone_exec.rs) joins it
//! before exec'ing bwrap (spawn.rs), drops every supplementary group and
//! becomes that uid and gid there, so bwrap and the sandbox run on the host
//! as the run's own ids, never as the provider's.
//!
//! Who does what, in order ([`create`]):
//! 1. the launcher clones a *holder* into a new user namespace
//!    (`CLONE_NEWUSER | CLONE_VM`: it shares the provider's memory, so no
//!    copy of the provider's page tables is made, [`Holder`]); the holder
//!    closes every descriptor but one pipe end and blocks reading it;
//! 2. the launcher runs `newuidmap <holder> <uid> <uid> 1` and
//!    `newgidmap <holder> <gid> <gid> 1` at the same time (argv only,
//!    empty environment; the setuid helpers check the ids against
//!    `/etc/subuid`/`/etc/subgid`, and each writes its own file of the
//!    holder's). The provider's own uid and gid are *not* mapped:
//!    `newgidmap` would then deny `setgroups` in the namespace, and the
//!    provider's groups could not be dropped;
//! 3. the launcher opens `/proc/<holder>/ns/user` — that descriptor keeps
//!    the namespace alive — and closes the pipe: the holder exits and is
//!    reaped.
//!
//! Every step's failure is its own error variant; the run is refused with
//! `ERR_CORDON_IDENTITY_UNAVAILABLE` (launch.rs).

use std::io::Read;
use std::os::fd::FromRawFd;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::MutexGuard;

use crate::host::clone_exec::{
    fork_lock, leave_provider_session, spawn_locked, BlockedSignals, ChildStack, ExecImage, Process,
};
use crate::host::process_identity::Identity;
use crate::host::subordinate_ids::{NEWGIDMAP, NEWUIDMAP};

/// Bytes of a helper's stderr kept for the error message.
const MAX_HELPER_MESSAGE_BYTES: usize = 512;

#[derive(Debug, thiserror::Error)]
pub enum UsernsMapError {
    #[error("create a pipe for the user namespace holder: {0}")]
    Pipe(nix::Error),
    #[error("prepare the user namespace holder's stack and signal mask: {0}")]
    Stack(std::io::Error),
    #[error(
        "the holder could not be cloned into a new user namespace (clone(CLONE_NEWUSER)): {0}{hint}",
        hint = quota_hint(.0)
    )]
    Unshare(std::io::Error),
    #[error("run {helper}: {source}")]
    HelperStart {
        helper: &'static str,
        source: std::io::Error,
    },
    #[error("{helper} {args} failed ({status}): {message}")]
    HelperFailed {
        helper: &'static str,
        args: String,
        status: std::process::ExitStatus,
        message: String,
    },
    #[error("open the holder's user namespace {path}: {source}{hint}")]
    OpenNamespace {
        path: String,
        source: std::io::Error,
        /// Why, when the launcher can tell ([`not_dumpable_hint`]).
        hint: &'static str,
    },
}

/// Pure: ENOSPC from a new user namespace is this uid's namespace quota,
/// not a missing feature.
fn quota_hint(source: &std::io::Error) -> &'static str {
    if source.raw_os_error() == Some(libc::ENOSPC) {
        ": this uid's user namespaces are used up (user.max_user_namespaces, counted per uid): \
         each run holds up to three while it lives (docs/security.md, quotas)"
    } else {
        ""
    }
}

/// A provider that made itself non-dumpable (`prctl(PR_SET_DUMPABLE, 0)`,
/// a common hardening step) has holders that share its flag (they share
/// its memory), and their namespaces cannot be opened: say so, rather than leave the code's usual
/// fix (subordinate ids) to mislead (black-box round on the start, F3).
fn not_dumpable_hint(source: &std::io::Error) -> &'static str {
    let not_dumpable = nix::sys::prctl::get_dumpable().is_ok_and(|dumpable| !dumpable);
    if source.raw_os_error() == Some(libc::EACCES) && not_dumpable {
        return ": this process is not dumpable (prctl PR_SET_DUMPABLE 0), which the namespace \
                holder shares with it; a non-root provider must stay dumpable to give its \
                sandboxes their own ids";
    }
    ""
}

/// Pure: the helper argv that maps each of `ids` to itself in `pid`'s
/// namespace.
pub fn map_argv(helper: &'static str, pid: i32, ids: &[u32]) -> Vec<String> {
    let mut argv = vec![helper.to_string(), pid.to_string()];
    for id in ids {
        argv.extend([id.to_string(), id.to_string(), "1".into()]);
    }
    argv
}

/// Creates the run's user namespace (steps in the module doc) and returns
/// the descriptor that names it.
pub fn create(identity: Identity) -> Result<OwnedFd, UsernsMapError> {
    create_mapping(&[identity.uid], &[identity.gid])
}

/// A namespace in which exactly `uids` and `gids` exist, each as itself.
/// Mapping the provider's own gid makes `newgidmap` deny `setgroups` there:
/// fine for a chown (workspace_owner.rs), never for a run.
pub fn create_mapping(uids: &[u32], gids: &[u32]) -> Result<OwnedFd, UsernsMapError> {
    // The holder shares this process's memory, so its `/proc` entries
    // follow this process's dumpable flag: owned by root, and closed to
    // the helpers' ownership check and to the open below, while a spawn's
    // child has the flag off (clone_exec.rs). No spawn runs until the
    // namespace is open.
    let serialised = fork_lock();
    let holder = Holder::start()?;
    let pid = holder.pid;
    let uid_map = start_helper(NEWUIDMAP, map_argv(NEWUIDMAP, pid, uids), &serialised);
    let gid_map = start_helper(NEWGIDMAP, map_argv(NEWGIDMAP, pid, gids), &serialised);
    // Both are waited for, whichever failed.
    let uid_map = uid_map.and_then(finish_helper);
    let gid_map = gid_map.and_then(finish_helper);
    uid_map.and(gid_map)?;
    let path = format!("/proc/{pid}/ns/user");
    let ns = std::fs::File::open(&path).map_err(|source| UsernsMapError::OpenNamespace {
        path: path.clone(),
        hint: not_dumpable_hint(&source),
        source,
    })?;
    drop(holder);
    Ok(OwnedFd::from(ns))
}

/// The holder: a process cloned with `CLONE_NEWUSER | CLONE_VM` on a stack
/// of its own, which only waits for its pipe to close. Sharing the memory
/// spares the provider a fork (a copy of its page tables, then a
/// copy-on-write fault for each page it writes while the copy lives:
/// 1.5–2 ms and ~400 faults per fork of a Node provider when bwrap was
/// started that way, docs/performance.md).
///
/// What sharing asks: unlike clone_exec.rs's child, the holder runs *beside*
/// the thread that cloned it (no `CLONE_VFORK`), on that thread's TLS. So
/// it makes its few syscalls by the instruction itself ([`raw_syscall3`]),
/// never through glibc (whose wrappers write `errno` in the caller's TLS),
/// touches nothing but its own stack and registers, and starts with every
/// signal blocked (no handler of the provider's can run on its stack; it
/// never unblocks them). The kernel writes nothing of the shared memory for
/// it either: no `CLONE_CHILD_CLEARTID`, and a `CLONE_VM` child gets no
/// robust list or rseq area.
///
/// Dropping it releases the holder (closes the pipe it waits on), reaps it,
/// then frees its stack, on success and on every error path alike.
struct Holder {
    pid: i32,
    release: Option<OwnedFd>,
    stack: Option<ChildStack>,
}

impl Holder {
    fn start() -> Result<Holder, UsernsMapError> {
        let (wait_on, release) =
            nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(UsernsMapError::Pipe)?;
        let stack = ChildStack::new().map_err(UsernsMapError::Stack)?;
        let blocked = BlockedSignals::all().map_err(UsernsMapError::Stack)?;
        // SAFETY: `holder_main` runs on `stack`, which the Holder frees only
        // after reaping it, and uses only its argument, two descriptor
        // numbers (`wait_on` and `release`, open here across the clone, so
        // the holder's copy of the table has them at the same numbers). CLONE_VM without
        // CLONE_FILES, CLONE_FS, CLONE_SIGHAND or CLONE_THREAD: the holder
        // shares only memory, in a thread group of its own (which a new
        // user namespace requires). No exit signal: reaped with __WALL in
        // Drop, never by the kernel on the provider's behalf (an ignored
        // SIGCHLD reaps only children that signal SIGCHLD).
        let pid = unsafe {
            libc::clone(
                holder_main,
                stack.top(),
                libc::CLONE_VM | libc::CLONE_NEWUSER,
                fd_pair(&wait_on, &release) as *mut libc::c_void,
            )
        };
        let clone_error = std::io::Error::last_os_error();
        drop(blocked);
        drop(wait_on);
        if pid < 0 {
            return Err(UsernsMapError::Unshare(clone_error));
        }
        Ok(Holder {
            pid,
            release: Some(release),
            stack: Some(stack),
        })
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        drop(self.release.take());
        loop {
            // SAFETY: waitpid on this process's own child with a valid
            // status pointer.
            let rc = unsafe {
                let mut status: libc::c_int = 0;
                libc::waitpid(self.pid, &mut status, libc::__WALL)
            };
            if rc == self.pid
                || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted
            {
                break;
            }
        }
        // Only now: the holder ran on it until its exit.
        drop(self.stack.take());
    }
}

/// The holder's argument: the end it reads (low 32 bits) and the end it
/// closes (high 32 bits), as one pointer-sized word.
fn fd_pair(keep: &OwnedFd, release: &OwnedFd) -> usize {
    let number = |fd: &OwnedFd| usize::try_from(fd.as_raw_fd()).unwrap_or(0) & 0xffff_ffff;
    number(keep) | (number(release) << 32)
}

/// The holder: closes every descriptor but the pipe end it was given, then
/// blocks reading it until the launcher closes the other end (or exits),
/// and exits. Raw syscalls only ([`Holder`]).
extern "C" fn holder_main(arg: *mut libc::c_void) -> libc::c_int {
    let fds = arg as usize;
    let (keep, release) = (fds & 0xffff_ffff, fds >> 32);
    // The other end first, by itself: where close_range fails (ENOSYS
    // before Linux 5.9, a seccomp filter of the provider's) the holder
    // would otherwise hold it and never see EOF, and the launcher wait for
    // it forever (white-box round on the holder, F1). The rest is best
    // effort: copies of the provider's descriptors held for the holder's
    // few milliseconds.
    raw_syscall3(libc::SYS_close, release, 0, 0);
    if keep > 0 {
        raw_syscall3(libc::SYS_close_range, 0, keep - 1, 0);
    }
    raw_syscall3(libc::SYS_close_range, keep + 1, u32::MAX as usize, 0);
    let mut byte = 0u8;
    raw_syscall3(libc::SYS_read, keep, &mut byte as *mut u8 as usize, 1);
    raw_syscall3(libc::SYS_exit, 0, 0, 0);
    0
}

/// A system call by the instruction itself: no `errno`, no TLS, no stack
/// but the caller's frame. For the holder only ([`Holder`]).
#[inline(always)]
fn raw_syscall3(number: libc::c_long, a: usize, b: usize, c: usize) -> isize {
    let ret: isize;
    // SAFETY: the kernel's system-call convention for this architecture;
    // the callers pass integers or a pointer into their own frame, and
    // the kernel clobbers only the registers listed.
    #[cfg(target_arch = "x86_64")]
    unsafe {
        std::arch::asm!(
            "syscall",
            inlateout("rax") number as isize => ret,
            in("rdi") a,
            in("rsi") b,
            in("rdx") c,
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
    }
    // SAFETY: as above (aarch64: number in x8, result in x0).
    #[cfg(target_arch = "aarch64")]
    unsafe {
        std::arch::asm!(
            "svc 0",
            in("x8") number,
            inlateout("x0") a as isize => ret,
            in("x1") b,
            in("x2") c,
            options(nostack),
        );
    }
    ret
}

/// A started map helper: its argv for the error, the process, the read end
/// of its stderr.
struct Helper {
    helper: &'static str,
    argv: Vec<String>,
    process: Process,
    stderr: OwnedFd,
}

/// Starts a setuid map helper with an empty environment, `/` as its
/// directory, stdin and stdout on `/dev/null` and its stderr (bounded by
/// [`finish_helper`]) on a pipe: it names what it refused. Started like
/// bwrap (clone_exec.rs: no fork of the provider), in a session of its own,
/// so that a signal to the provider's process group (a Ctrl-C) neither
/// reaches it nor, sent before it left the group, kills it at its exec
/// (black-box round on the holder, F1: std's spawn did both).
fn start_helper(
    helper: &'static str,
    argv: Vec<String>,
    serialised: &MutexGuard<'static, ()>,
) -> Result<Helper, UsernsMapError> {
    let start_error = |source: std::io::Error| UsernsMapError::HelperStart { helper, source };
    let image = ExecImage::new(
        std::path::Path::new(helper),
        &argv,
        std::iter::empty::<&std::ffi::OsStr>(),
    )
    .map_err(start_error)?;
    // Above 0–2 whatever the provider left open there, so each dup2 below
    // makes a new, inheritable descriptor.
    let raised = |fd: OwnedFd| -> std::io::Result<OwnedFd> {
        let high = nix::fcntl::fcntl(&fd, nix::fcntl::FcntlArg::F_DUPFD_CLOEXEC(3))?;
        // SAFETY: F_DUPFD_CLOEXEC returned a new descriptor this owns.
        Ok(unsafe { OwnedFd::from_raw_fd(high) })
    };
    let null = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")
        .map_err(start_error)?;
    let null = raised(OwnedFd::from(null)).map_err(start_error)?;
    let (stderr, stderr_w) =
        nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(|e| start_error(e.into()))?;
    let stderr_w = raised(stderr_w).map_err(start_error)?;
    let (null_fd, stderr_fd) = (null.as_raw_fd(), stderr_w.as_raw_fd());
    // SAFETY: the set-up makes direct syscalls only (dup2, setsid, chdir)
    // on descriptor numbers and a static path, in the child that shares
    // this memory until its exec; the caller holds fork_lock (`serialised`).
    let process = unsafe {
        spawn_locked(
            &image,
            || {
                for (fd, slot) in [(null_fd, 0), (null_fd, 1), (stderr_fd, 2)] {
                    if libc::dup2(fd, slot) < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                leave_provider_session()?;
                if libc::chdir(c"/".as_ptr()) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            },
            serialised,
        )
    }
    .map_err(start_error)?;
    Ok(Helper {
        helper,
        argv,
        process,
        stderr,
    })
}

/// Waits for a started helper; its failure names its argv and what it said.
fn finish_helper(started: Helper) -> Result<(), UsernsMapError> {
    let Helper {
        helper,
        argv,
        mut process,
        stderr,
    } = started;
    // What it wrote, kept up to the bound, the rest read and dropped: the
    // pipe empties, so the helper can always finish.
    let mut stderr = std::fs::File::from(stderr);
    let mut said = Vec::new();
    let _ = (&mut stderr)
        .take(MAX_HELPER_MESSAGE_BYTES as u64)
        .read_to_end(&mut said);
    let _ = std::io::copy(&mut stderr, &mut std::io::sink());
    let status = process
        .wait()
        .map_err(|source| UsernsMapError::HelperStart { helper, source })?;
    if status.success() {
        return Ok(());
    }
    let message = String::from_utf8_lossy(&said);
    let message: String = message
        .trim()
        .chars()
        .take(MAX_HELPER_MESSAGE_BYTES)
        .collect();
    Err(UsernsMapError::HelperFailed {
        helper,
        args: argv[1..].join(" "),
        status,
        message,
    })
}

/// In bwrap's child, first (before `die_with_parent`: a change of
/// credentials clears the parent-death signal): join the run's namespace,
/// drop every supplementary group (the provider's groups would otherwise
/// follow the sandbox, shown as the overflow gid inside but checked as the
/// host gids they are), become the run's gid and uid. With `mntns` (a
/// namespace holder's, namespace_holder.rs) the child joins that mount
/// namespace too, between the two: it needs CAP_SYS_ADMIN in the holder's
/// user namespace, which joining it gave. Becoming the run's uid does not
/// take the namespace's capabilities away (no uid 0 is mapped there, so the
/// kernel's set-id fixup does not apply; white-box round on the holder,
/// F5): bwrap's exec does (it has no file capabilities and is not set-id),
/// and nothing else runs in between. Async-signal-safe: setns, setgroups, setresgid, setresuid —
/// direct syscalls on `Copy` data (the set-ids raw, not glibc's: the child
/// shares the provider's memory, clone_exec.rs).
pub fn enter(userns: RawFd, mntns: Option<RawFd>, identity: Identity) -> std::io::Result<()> {
    // SAFETY: `userns` is the namespace descriptor the launcher holds open
    // across the fork (it is closed in the parent only after spawn returns);
    // borrowed for the duration of the call only.
    let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(userns) };
    nix::sched::setns(fd, nix::sched::CloneFlags::CLONE_NEWUSER)?;
    if let Some(mntns) = mntns {
        // SAFETY: as `userns` above: held open by the launcher across the fork.
        let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(mntns) };
        nix::sched::setns(fd, nix::sched::CloneFlags::CLONE_NEWNS)?;
    }
    crate::host::clone_exec::assume_identity(identity, true)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    /// Run in a process of its own: the flag is the whole process's.
    #[test]
    fn a_non_dumpable_provider_is_told_why_the_holder_cannot_be_opened() {
        const INNER: &str = "CORDON_TEST_USERNS_MAP_NOT_DUMPABLE";
        const NAME: &str =
            "host::userns_map::tests::a_non_dumpable_provider_is_told_why_the_holder_cannot_be_opened";
        let denied = std::io::Error::from_raw_os_error(libc::EACCES);
        if std::env::var_os(INNER).is_some() {
            nix::sys::prctl::set_dumpable(false).unwrap();
            assert!(not_dumpable_hint(&denied).contains("not dumpable"));
            let other = std::io::Error::from_raw_os_error(libc::ENOENT);
            assert_eq!(not_dumpable_hint(&other), "");
            return;
        }
        assert_eq!(not_dumpable_hint(&denied), "", "this process is dumpable");
        crate::live_support::run_inner_test(NAME, INNER);
    }

    /// The holder is what the module says: in a user namespace of its own,
    /// on the provider's own memory (no copy), holding only its pipe end,
    /// gone once dropped.
    #[test]
    fn the_holder_shares_our_memory_holds_one_descriptor_and_ends_on_drop() {
        let holder = Holder::start().unwrap();
        let pid = holder.pid;
        let ours = std::fs::read_link("/proc/self/ns/user").unwrap();
        let its = std::fs::read_link(format!("/proc/{pid}/ns/user")).unwrap();
        assert_ne!(ours, its, "the holder has a user namespace of its own");
        // kcmp(KCMP_VM): 0 when both use one memory map.
        // SAFETY: integer arguments only.
        let same_vm = unsafe { libc::syscall(libc::SYS_kcmp, std::process::id(), pid, 1, 0, 0) };
        assert_eq!(same_vm, 0, "the holder shares this process's memory");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        let descriptors = || {
            std::fs::read_dir(format!("/proc/{pid}/fd"))
                .unwrap()
                .count()
        };
        while descriptors() != 1 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        let held = descriptors();
        if held != 1 {
            // Holding the other end too, it would never see EOF: end it so
            // the drop below reaps it instead of waiting forever.
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
        assert_eq!(held, 1, "only the pipe end it waits on");
        // Every signal blocked, glibc's own two (32, 33) included (white-box
        // F2; sigfillset gave fffffffe7ffbfeff), all but SIGKILL and
        // SIGSTOP, which the kernel never blocks.
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
        let blocked = status.lines().find(|l| l.starts_with("SigBlk:")).unwrap();
        assert_eq!(
            blocked.split_whitespace().nth(1),
            Some("fffffffffffbfeff"),
            "{blocked}"
        );
        drop(holder);
        let gone = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None);
        assert_eq!(gone, Err(nix::errno::Errno::ESRCH), "released and reaped");
    }

    /// Where close_range fails (ENOSYS before Linux 5.9, or a provider's own
    /// seccomp filter), the holder still closes the end the launcher holds,
    /// sees EOF when released, and the drop returns (white-box F1: it waited
    /// forever). Run in a process of its own: the filter stays on the thread.
    #[test]
    fn a_holder_without_close_range_still_ends_when_released() {
        const INNER: &str = "CORDON_TEST_USERNS_HOLDER_NO_CLOSE_RANGE";
        const NAME: &str =
            "host::userns_map::tests::a_holder_without_close_range_still_ends_when_released";
        static HOLDER: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);
        if std::env::var_os(INNER).is_some() {
            // A hang fails the test instead of stalling the suite: the
            // holder goes too (it would keep this process's stdout open,
            // and the outer test would wait for its EOF forever).
            std::thread::spawn(|| {
                std::thread::sleep(std::time::Duration::from_secs(10));
                eprintln!("the holder's drop did not return");
                let pid = HOLDER.load(std::sync::atomic::Ordering::SeqCst);
                // SAFETY: a signal to the holder this test cloned.
                unsafe { libc::kill(pid, libc::SIGKILL) };
                std::process::exit(3);
            });
            let rules = [(libc::SYS_close_range, vec![])].into_iter().collect();
            let filter = seccompiler::SeccompFilter::new(
                rules,
                seccompiler::SeccompAction::Allow,
                seccompiler::SeccompAction::Errno(libc::ENOSYS as u32),
                std::env::consts::ARCH.try_into().unwrap(),
            )
            .unwrap();
            let program: seccompiler::BpfProgram = filter.try_into().unwrap();
            nix::sys::prctl::set_no_new_privs().unwrap();
            seccompiler::apply_filter(&program).unwrap();
            let holder = Holder::start().unwrap();
            HOLDER.store(holder.pid, std::sync::atomic::Ordering::SeqCst);
            drop(holder);
            return;
        }
        crate::live_support::run_inner_test(NAME, INNER);
    }

    #[test]
    fn a_spent_namespace_quota_says_so() {
        let spent = UsernsMapError::Unshare(std::io::Error::from_raw_os_error(libc::ENOSPC));
        assert!(spent.to_string().contains("used up"), "{spent}");
        let denied = UsernsMapError::Unshare(std::io::Error::from_raw_os_error(libc::EPERM));
        assert!(!denied.to_string().contains("used up"), "{denied}");
    }

    /// A helper runs in a process group of its own, so a signal to the
    /// provider's group (a Ctrl-C) does not reach it (black-box F1).
    #[test]
    fn a_helper_runs_in_a_process_group_of_its_own() {
        let own_group = r#"read -r _ _ _ _ group _ < /proc/$$/stat; [ "$group" = "$$" ]"#;
        let argv = vec!["/bin/sh".to_string(), "-c".into(), own_group.into()];
        let serialised = fork_lock();
        finish_helper(start_helper("/bin/sh", argv, &serialised).unwrap()).unwrap();
    }

    #[test]
    fn each_helper_maps_one_id_to_itself_by_argv() {
        assert_eq!(
            map_argv(NEWUIDMAP, 42, &[132_768]),
            ["/usr/bin/newuidmap", "42", "132768", "132768", "1"]
        );
        assert_eq!(
            map_argv(NEWGIDMAP, 7, &[1000, 100_000]),
            [
                "/usr/bin/newgidmap",
                "7",
                "1000",
                "1000",
                "1",
                "100000",
                "100000",
                "1"
            ]
        );
    }
}
