//! A user namespace owned by the (non-root) provider in which exactly the
//! ids of one run exist: its host uid and gid, each mapped to itself, from
//! the provider's subordinate ranges. The launcher's forked child joins it
//! before exec'ing bwrap (spawn.rs), drops every supplementary group and
//! becomes that uid and gid there, so bwrap and the sandbox run on the host
//! as the run's own ids, never as the provider's.
//!
//! Who does what, in order ([`create`]):
//! 1. the launcher forks a *holder*: it calls `unshare(CLONE_NEWUSER)`,
//!    reports the result on a pipe, then blocks reading a second pipe —
//!    only async-signal-safe calls between fork and `_exit` (the provider
//!    is multi-threaded);
//! 2. the launcher runs `newuidmap <holder> <uid> <uid> 1` and
//!    `newgidmap <holder> <gid> <gid> 1` (argv only, empty environment;
//!    the setuid helpers check the ids against `/etc/subuid`/`/etc/subgid`).
//!    The provider's own uid and gid are *not* mapped: `newgidmap` would
//!    then deny `setgroups` in the namespace, and the provider's groups
//!    could not be dropped;
//! 3. the launcher opens `/proc/<holder>/ns/user` — that descriptor keeps
//!    the namespace alive — and closes the second pipe: the holder exits
//!    and is reaped.
//!
//! Every step's failure is its own error variant; the run is refused with
//! `ERR_CORDON_IDENTITY_UNAVAILABLE` (launch.rs).

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::process::{Command, Stdio};

use nix::sys::wait::waitpid;
use nix::unistd::{fork, ForkResult, Pid};

use crate::host::process_identity::Identity;
use crate::host::subordinate_ids::{NEWGIDMAP, NEWUIDMAP};

/// Bytes of a helper's stderr kept for the error message.
const MAX_HELPER_MESSAGE_BYTES: usize = 512;

#[derive(Debug, thiserror::Error)]
pub enum UsernsMapError {
    #[error("create a pipe for the user namespace holder: {0}")]
    Pipe(nix::Error),
    #[error("fork the user namespace holder: {0}")]
    Fork(nix::Error),
    #[error("the holder could not create a user namespace (unshare(CLONE_NEWUSER)): {0}")]
    Unshare(nix::Error),
    #[error("the holder exited before reporting")]
    HolderGone,
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

/// A provider that made itself non-dumpable (`prctl(PR_SET_DUMPABLE, 0)`,
/// a common hardening step) forks holders that inherit it, and their
/// namespaces cannot be opened: say so, rather than leave the code's usual
/// fix (subordinate ids) to mislead (black-box round on the start, F3).
fn not_dumpable_hint(source: &std::io::Error) -> &'static str {
    let not_dumpable = nix::sys::prctl::get_dumpable().is_ok_and(|dumpable| !dumpable);
    if source.raw_os_error() == Some(libc::EACCES) && not_dumpable {
        return ": this process is not dumpable (prctl PR_SET_DUMPABLE 0), which the namespace \
                holder it forks inherits; a non-root provider must stay dumpable to give its \
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
    let holder = Holder::fork()?;
    holder.wait_ready()?;
    let pid = holder.pid.as_raw();
    run_helper(NEWUIDMAP, map_argv(NEWUIDMAP, pid, uids))?;
    run_helper(NEWGIDMAP, map_argv(NEWGIDMAP, pid, gids))?;
    let path = format!("/proc/{}/ns/user", holder.pid);
    let ns = std::fs::File::open(&path).map_err(|source| UsernsMapError::OpenNamespace {
        path: path.clone(),
        hint: not_dumpable_hint(&source),
        source,
    })?;
    drop(holder);
    Ok(OwnedFd::from(ns))
}

/// The forked holder; dropping it releases (closes the pipe it waits on)
/// and reaps it, on success and on every error path alike.
struct Holder {
    pid: Pid,
    ready: Option<OwnedFd>,
    release: Option<OwnedFd>,
}

impl Holder {
    fn fork() -> Result<Holder, UsernsMapError> {
        let pipe = || nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC);
        let (ready_r, ready_w) = pipe().map_err(UsernsMapError::Pipe)?;
        let (release_r, release_w) = pipe().map_err(UsernsMapError::Pipe)?;
        let keep = [ready_w.as_raw_fd(), release_r.as_raw_fd()];
        // Not while a spawn's child has the provider non-dumpable: the
        // holder would keep the flag, and its namespace could not be opened
        // (clone_exec.rs).
        let _serialised = crate::host::clone_exec::fork_lock();
        // SAFETY: the provider is multi-threaded; the child only makes
        // direct syscalls (close_range, unshare, write, read, _exit) on
        // values prepared before fork — no allocation, no lock — and never
        // returns into Rust code of the parent.
        match unsafe { fork() }.map_err(UsernsMapError::Fork)? {
            ForkResult::Child => holder_child(&keep),
            ForkResult::Parent { child } => Ok(Holder {
                pid: child,
                ready: Some(ready_r),
                release: Some(release_w),
            }),
        }
    }

    /// Reads the holder's one-byte report: 0, or the errno of its unshare.
    fn wait_ready(&self) -> Result<(), UsernsMapError> {
        let mut byte = [0u8; 1];
        let Some(ready) = &self.ready else {
            return Err(UsernsMapError::HolderGone);
        };
        match nix::unistd::read(ready, &mut byte) {
            Ok(1) if byte[0] == 0 => Ok(()),
            Ok(1) => Err(UsernsMapError::Unshare(nix::Error::from_raw(i32::from(
                byte[0],
            )))),
            _ => Err(UsernsMapError::HolderGone),
        }
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        drop(self.release.take());
        drop(self.ready.take());
        let _ = waitpid(self.pid, None);
    }
}

/// The holder: only async-signal-safe calls, then `_exit`. Closes every
/// descriptor but its two pipe ends first, so it holds none of the
/// provider's (another run's channel would otherwise see EOF late).
fn holder_child(keep: &[RawFd; 2]) -> ! {
    let (ready_w, release_r) = (keep[0], keep[1]);
    close_all_but(keep);
    // SAFETY: direct syscalls in the forked child; the descriptors are the
    // pipe ends kept above; `_exit` never returns.
    unsafe {
        let report: u8 = if libc::unshare(libc::CLONE_NEWUSER) == 0 {
            0
        } else {
            u8::try_from(*libc::__errno_location()).unwrap_or(u8::MAX)
        };
        libc::write(ready_w, (&report as *const u8).cast(), 1);
        let mut byte = 0u8;
        // Blocks until the launcher closes its end (EOF) or exits.
        libc::read(release_r, (&mut byte as *mut u8).cast(), 1);
        libc::_exit(0)
    }
}

/// Closes every descriptor except the two of `keep` (either order).
/// Async-signal-safe.
fn close_all_but(keep: &[RawFd; 2]) {
    let (low, high) = (keep[0].min(keep[1]), keep[0].max(keep[1]));
    let ranges = [(3, low - 1), (low + 1, high - 1), (high + 1, RawFd::MAX)];
    for (first, last) in ranges {
        if first <= last {
            // SAFETY: a direct syscall in the forked child; closing numbers
            // nothing in this process will use again (it only reads, writes
            // the kept pipe ends and exits).
            unsafe {
                libc::syscall(
                    libc::SYS_close_range,
                    first as libc::c_uint,
                    last as libc::c_uint,
                    0 as libc::c_uint,
                )
            };
        }
    }
}

/// Runs a setuid map helper with an empty environment and `/` as its
/// directory; its stderr (bounded) names what it refused.
fn run_helper(helper: &'static str, argv: Vec<String>) -> Result<(), UsernsMapError> {
    let out = Command::new(helper)
        .args(&argv[1..])
        .env_clear()
        .current_dir("/")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|source| UsernsMapError::HelperStart { helper, source })?;
    if out.status.success() {
        return Ok(());
    }
    let message = String::from_utf8_lossy(&out.stderr);
    let message: String = message
        .trim()
        .chars()
        .take(MAX_HELPER_MESSAGE_BYTES)
        .collect();
    Err(UsernsMapError::HelperFailed {
        helper,
        args: argv[1..].join(" "),
        status: out.status,
        message,
    })
}

/// In the forked bwrap child, first (before `die_with_parent`: a change of
/// credentials clears the parent-death signal): join the run's namespace,
/// drop every supplementary group (the provider's groups would otherwise
/// follow the sandbox, shown as the overflow gid inside but checked as the
/// host gids they are), become the run's gid and uid. With `mntns` (a
/// namespace holder's, namespace_holder.rs) the child joins that mount
/// namespace too, between the two: it needs CAP_SYS_ADMIN in the holder's
/// user namespace, which joining it gave, and which becoming the run's uid
/// takes away. Async-signal-safe: setns, setgroups, setresgid, setresuid —
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
