//! Starting bwrap without copying the provider's memory: `clone(2)` with
//! `CLONE_VM | CLONE_VFORK` (what glibc's `posix_spawn` does), then the
//! child's set-up and `execve` on a stack of its own.
//!
//! Why not std's `Command` with `pre_exec`: that forks, and a fork of the
//! Node process copies its page tables and write-protects every private page
//! of every thread; until bwrap's exec each write in the provider takes a
//! copy-on-write fault. That was 2–4 ms of every cold spawn on a quiet host
//! (the launcher's `fork.start → fork.exec_done`, with the calling JS thread
//! waiting for the pid) and more under load (docs/performance.md, "Change:
//! bwrap started without a fork of the provider"). Here the child borrows
//! the provider's memory until its exec, and only the cloning thread waits.
//!
//! What sharing the memory asks of the child, on top of the fork child's
//! async-signal safety (no allocation, no locks):
//! - It runs on the calling thread's TLS, so any glibc call that acts on
//!   "the current thread" acts on the *caller's* thread: glibc's set-id
//!   wrappers would broadcast the change to every thread of the provider
//!   (SIGSETXID). Credentials change here by raw syscalls only
//!   ([`assume_identity`]); `raise`/`abort` would signal the caller's thread,
//!   so nothing here may panic (an `extern "C"` panic aborts).
//! - No handler of the provider may run in it: every signal is blocked
//!   across the clone, and the child resets each caught one to its default
//!   before it unblocks them ([`reset_signals`]).
//! - It writes nothing of the provider's memory but its own stack, the one
//!   error word the caller reads after the clone returns, and what the
//!   caller's set-up writes on purpose (spawn.rs: which cgroup join failed).
//! - Its change of credentials marks the *shared* memory map non-dumpable
//!   (the kernel's `commit_creds` resets the mm's dumpable flag to
//!   `suid_dumpable`), and a non-dumpable provider cannot open the
//!   namespaces of its user namespace holders (which share its memory, and
//!   with it the flag; when they were forked they inherited it, and a
//!   non-root provider's second run failed with EACCES on
//!   `/proc/<holder>/ns/user`). So the caller puts the flag back as soon as
//!   the clone returns, and a holder's creation, from its clone to the open
//!   of its namespace (userns_map.rs), holds [`fork_lock`] as every spawn
//!   here does, so none happens while the flag is off.

use std::ffi::{CStr, CString};
use std::io;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::host::process_identity::Identity;

/// The child's stack. Its work is a few syscalls in shallow frames (well
/// under 16 KiB, also in a debug build); the rest is margin, and the lowest
/// page is a guard, so an overflow faults in the child instead of writing
/// into the provider.
const STACK_BYTES: usize = 256 * 1024;
const GUARD_BYTES: usize = 4096;

/// The error word before the child reaches its exec: a child that died
/// before it (a fault, a signal) leaves it, and the start fails.
const NOT_REACHED: i32 = i32::MIN;

/// Serialises the spawns here with each other (each saves and restores the
/// dumpable flag) and with the creation of user namespace holders, whose
/// `/proc` entries follow the flag (module doc).
static FORK_LOCK: Mutex<()> = Mutex::new(());

/// Held across a user namespace holder's creation (its `/proc` would be
/// closed to the provider while a spawn has the flag off), and across
/// every spawn here.
pub fn fork_lock() -> MutexGuard<'static, ()> {
    FORK_LOCK.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A started, unreaped child: its pid is stable until [`Process::wait`].
#[derive(Debug)]
pub struct Process {
    pid: u32,
    status: Option<ExitStatus>,
}

impl Process {
    pub fn id(&self) -> u32 {
        self.pid
    }

    /// SIGKILL, unless already reaped (then the pid may be another's).
    pub fn kill(&mut self) -> io::Result<()> {
        if self.status.is_some() {
            return Ok(());
        }
        let pid = nix::unistd::Pid::from_raw(self.pid as libc::pid_t);
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL)?;
        Ok(())
    }

    /// Blocks until the child exits and reaps it; later calls return the
    /// same status. A process that discards its children's statuses
    /// (SIGCHLD ignored, SA_NOCLDWAIT: only native code can set that under
    /// Node) gets an error that says so (black-box round on the start, F2).
    pub fn wait(&mut self) -> io::Result<ExitStatus> {
        if let Some(status) = self.status {
            return Ok(status);
        }
        let mut raw: libc::c_int = 0;
        loop {
            // SAFETY: `raw` is a valid, writable c_int for the call; the pid
            // is this process's own unreaped child.
            let rc = unsafe { libc::waitpid(self.pid as libc::pid_t, &mut raw, 0) };
            if rc >= 0 {
                break;
            }
            let error = io::Error::last_os_error();
            if error.kind() != io::ErrorKind::Interrupted {
                return Err(explain_lost_status(error));
            }
        }
        let status = ExitStatus::from_raw(raw);
        self.status = Some(status);
        Ok(status)
    }
}

/// What the child execs: the program and its argv and environment, as
/// C strings made before the clone (the child must not allocate).
#[derive(Debug)]
pub struct ExecImage {
    program: CString,
    _argv: Vec<CString>,
    _envp: Vec<CString>,
    argv_ptrs: Vec<*const libc::c_char>,
    envp_ptrs: Vec<*const libc::c_char>,
}

impl ExecImage {
    /// Fails (InvalidInput) on a NUL inside any string.
    pub fn new(
        program: &std::path::Path,
        argv: impl IntoIterator<Item = impl AsRef<std::ffi::OsStr>>,
        envp: impl IntoIterator<Item = impl AsRef<std::ffi::OsStr>>,
    ) -> io::Result<Self> {
        use std::os::unix::ffi::OsStrExt;
        let c = |s: &std::ffi::OsStr| {
            CString::new(s.as_bytes()).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))
        };
        let program = c(program.as_os_str())?;
        let argv = argv
            .into_iter()
            .map(|a| c(a.as_ref()))
            .collect::<io::Result<Vec<_>>>()?;
        let envp = envp
            .into_iter()
            .map(|a| c(a.as_ref()))
            .collect::<io::Result<Vec<_>>>()?;
        let ptrs = |list: &[CString]| {
            let mut ptrs: Vec<*const libc::c_char> = list.iter().map(|s| s.as_ptr()).collect();
            ptrs.push(std::ptr::null());
            ptrs
        };
        Ok(Self {
            argv_ptrs: ptrs(&argv),
            envp_ptrs: ptrs(&envp),
            program,
            _argv: argv,
            _envp: envp,
        })
    }

    pub fn program(&self) -> &CStr {
        &self.program
    }
}

/// Shared with the child through its argument pointer: the caller's frame
/// outlives the child's use of it (the caller is suspended until the child
/// execs or exits).
struct ChildState<'a, F> {
    image: &'a ExecImage,
    set_up: F,
    error: AtomicI32,
}

/// Clones a child that shares this process's memory until its exec, runs
/// `set_up` in it, resets its signals and execs `image`. Returns once the
/// exec succeeded (or failed: then with the child's errno, the child
/// reaped).
///
/// # Safety
///
/// `set_up` runs in a child that shares the caller's memory *and* thread
/// state (module doc): it may make only direct syscalls on data prepared
/// before the call; it must not allocate, take a lock, panic (the panic
/// machinery would run on the caller's thread state), or call a glibc
/// function that acts on "the current thread" (set-id wrappers, `raise`).
pub unsafe fn spawn<F>(image: &ExecImage, set_up: F) -> io::Result<Process>
where
    F: FnMut() -> io::Result<()>,
{
    let serialised = fork_lock();
    // SAFETY: the caller's contract, passed on; the lock is held.
    unsafe { spawn_locked(image, set_up, &serialised) }
}

/// [`spawn`] for a caller that already holds [`fork_lock`] (its guard is
/// the proof): the user namespace holder's map helpers, started while the
/// holder's creation holds it (userns_map.rs).
///
/// # Safety
///
/// As [`spawn`].
pub unsafe fn spawn_locked<F>(
    image: &ExecImage,
    set_up: F,
    _serialised: &MutexGuard<'static, ()>,
) -> io::Result<Process>
where
    F: FnMut() -> io::Result<()>,
{
    let stack = ChildStack::new()?;
    let dumpable = Dumpable::read()?;
    let mut state = ChildState {
        image,
        set_up,
        error: AtomicI32::new(NOT_REACHED),
    };
    let blocked = BlockedSignals::all()?;
    // SAFETY: `trampoline::<F>` receives `state`, which lives in this frame
    // until after clone returns; with CLONE_VFORK clone returns only once the
    // child has exec'd or exited, so the child never sees it dangle. The
    // stack is a fresh mapping of STACK_BYTES whose top is 16-byte aligned
    // (page-aligned mapping). CLONE_VM without CLONE_THREAD/CLONE_FILES/
    // CLONE_FS/CLONE_SIGHAND: the child has its own descriptor table,
    // filesystem context and signal dispositions, and shares only memory.
    let pid = unsafe {
        libc::clone(
            trampoline::<F>,
            stack.top(),
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            (&mut state as *mut ChildState<'_, F>).cast(),
        )
    };
    let clone_error = io::Error::last_os_error();
    // Before anything else of the provider: the child's set-id turned the
    // shared map's flag off (module doc). Best effort: it cannot fail for
    // 0 or 1.
    if let Some(value) = Dumpable::read()
        .ok()
        .and_then(|now| dumpable.restore_from(now))
    {
        let _ = Dumpable::set(value);
    }
    drop(blocked);
    drop(stack);
    if pid < 0 {
        return Err(clone_error);
    }
    let mut process = Process {
        pid: pid as u32,
        status: None,
    };
    match state.error.load(Ordering::SeqCst) {
        0 => Ok(process),
        errno => {
            let _ = process.wait();
            Err(match errno {
                NOT_REACHED => io::Error::other("the child ended before its exec"),
                errno => io::Error::from_raw_os_error(errno),
            })
        }
    }
}

/// An error from waiting for a child this process started (here, or std's
/// `Command` in the backend probe and the map helpers), explained when it is
/// ECHILD because this process has the kernel discard its children's exit
/// statuses: a bare "No child processes" names no cause.
pub(crate) fn explain_lost_status(error: io::Error) -> io::Error {
    if error.raw_os_error() == Some(libc::ECHILD) && sigchld_discarded() {
        return io::Error::other(
            "the kernel reaped the child and discarded its exit status: this process \
             ignores SIGCHLD or set SA_NOCLDWAIT (leave SIGCHLD at its default or \
             handle it)",
        );
    }
    error
}

/// Runs in the child: a session and process group of its own, so a signal
/// to the provider's process group (a Ctrl-C in its terminal, `kill --
/// -<pgid>`) reaches the provider alone, which decides what its runs get
/// (its stop ladder), instead of killing bwrap and the sandbox under it
/// (black-box round on the start, F6); bwrap's child and the map helpers
/// (userns_map.rs) call it. The sandbox still ends with the provider
/// (run/child_fds.rs `die_with_parent`). The pair maker and the session holders
/// leave the group the same way. A direct syscall: the child shares the
/// provider's memory (module doc).
pub fn leave_provider_session() -> std::io::Result<()> {
    // SAFETY: setsid takes no argument and changes only this process.
    if unsafe { libc::syscall(libc::SYS_setsid) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Whether this process has the kernel discard its children's exit
/// statuses (SIGCHLD ignored, or SA_NOCLDWAIT).
fn sigchld_discarded() -> bool {
    // SAFETY: a query (null new action) into a zeroed stack value.
    unsafe {
        let mut current: libc::sigaction = std::mem::zeroed();
        libc::sigaction(libc::SIGCHLD, std::ptr::null(), &mut current) == 0
            && (current.sa_sigaction == libc::SIG_IGN || current.sa_flags & libc::SA_NOCLDWAIT != 0)
    }
}

/// The provider's dumpable flag as the kernel reports it: 0, 1, or 2 (the
/// `suid_dumpable` value a change of credentials sets when that sysctl is 2,
/// as on Ubuntu with apport: read as a bool it would look unchanged).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Dumpable(libc::c_int);

impl Dumpable {
    fn read() -> io::Result<Self> {
        // SAFETY: PR_GET_DUMPABLE takes no pointer and returns the value.
        let value = unsafe { libc::prctl(libc::PR_GET_DUMPABLE) };
        if value < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Self(value))
    }

    fn set(value: libc::c_int) -> io::Result<()> {
        // SAFETY: PR_SET_DUMPABLE with an integer 0 or 1.
        if unsafe { libc::prctl(libc::PR_SET_DUMPABLE, value as libc::c_ulong) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Pure: what to set after a spawn that found the flag at `self` and
    /// leaves it at `now`, if anything. prctl can set 0 and 1 only: a flag
    /// that was 2 before (never the case for an ordinary provider) cannot be
    /// put back, and 0 is the safe side then.
    fn restore_from(self, now: Self) -> Option<libc::c_int> {
        match (self.0, now.0) {
            (before, now) if before == now => None,
            (1, _) => Some(1),
            _ => Some(0),
        }
    }
}

/// The child's entry, on its own stack. Never returns into the caller's
/// code: it execs, or stores its errno and `_exit`s.
extern "C" fn trampoline<F>(arg: *mut libc::c_void) -> libc::c_int
where
    F: FnMut() -> io::Result<()>,
{
    // SAFETY: `arg` is the `ChildState<F>` of `spawn`'s suspended frame
    // (see there), exclusively the child's while the caller waits.
    let state = unsafe { &mut *arg.cast::<ChildState<'_, F>>() };
    let outcome = (state.set_up)()
        .map(|()| drain_pending_signals())
        .and_then(|()| reset_signals());
    let errno = match outcome {
        Ok(()) => {
            // Stored before the exec: after a successful exec this frame is
            // gone, and the caller reads 0.
            state.error.store(0, Ordering::SeqCst);
            let image = state.image;
            // SAFETY: NUL-terminated strings and NULL-terminated pointer
            // arrays built before the clone, alive in the caller's frame.
            unsafe {
                libc::execve(
                    image.program.as_ptr(),
                    image.argv_ptrs.as_ptr(),
                    image.envp_ptrs.as_ptr(),
                )
            };
            io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO)
        }
        Err(error) => error.raw_os_error().unwrap_or(libc::EIO),
    };
    state.error.store(errno, Ordering::SeqCst);
    // SAFETY: `_exit` ends only this child (its own thread group), running
    // no atexit handler or destructor of the provider's.
    unsafe { libc::_exit(127) }
}

/// In the child: the provider's identity becomes `identity`, all three ids
/// of each and no supplementary groups (`groups` false: only the ids, for a
/// child that is not allowed setgroups). Raw syscalls, not glibc's wrappers:
/// those would change every thread of the provider (module doc).
pub fn assume_identity(identity: Identity, groups: bool) -> io::Result<()> {
    let raw = |rc: libc::c_long| {
        if rc < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    };
    // SAFETY: direct syscalls with integer arguments (setgroups with an
    // empty list and a null pointer, which the kernel does not read).
    unsafe {
        if groups {
            raw(libc::syscall(
                libc::SYS_setgroups,
                0,
                std::ptr::null::<libc::gid_t>(),
            ))?;
        }
        let (uid, gid) = (identity.uid, identity.gid);
        raw(libc::syscall(libc::SYS_setresgid, gid, gid, gid))?;
        raw(libc::syscall(libc::SYS_setresuid, uid, uid, uid))
    }
}

/// In the child, last before the exec: every signal the provider catches
/// back to its default action (no provider handler can run in the child),
/// SIGPIPE, SIGTERM, SIGINT, SIGHUP and SIGCHLD to the default whatever they
/// were (an ignored SIGCHLD would have the kernel reap bwrap's own children
/// before bwrap could wait for them),
/// then an empty mask. bwrap and the sandbox inherit the mask and every
/// *ignored* disposition through exec: a host that blocks signals for its
/// own `sigwait` (`cordon run` blocks SIGTERM/SIGINT/SIGHUP), or runs with
/// SIGTERM ignored, would hand the program a SIGTERM that never arrives, and
/// the stop ladder's graceful rung would do nothing. SIGPIPE is reset as
/// std's spawn did before this module. Other ignored dispositions stay
/// (Node's SIGXFSZ: documented EFBIG behaviour rests on it).
fn reset_signals() -> io::Result<()> {
    // SAFETY: sigaction on zeroed stack values (a valid empty sigaction);
    // SIG_DFL runs no handler code. Numbers glibc reserves for itself are
    // refused with EINVAL, which is ignored.
    unsafe {
        let mut default: libc::sigaction = std::mem::zeroed();
        default.sa_sigaction = libc::SIG_DFL;
        for signal in 1..libc::SIGRTMAX() + 1 {
            let mut current: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(signal, std::ptr::null(), &mut current) != 0 {
                continue;
            }
            let forced = matches!(
                signal,
                libc::SIGPIPE | libc::SIGTERM | libc::SIGINT | libc::SIGHUP | libc::SIGCHLD
            );
            let caught =
                current.sa_sigaction != libc::SIG_DFL && current.sa_sigaction != libc::SIG_IGN;
            if forced || caught {
                libc::sigaction(signal, &default, std::ptr::null_mut());
            }
        }
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        set_mask(&empty, None)
    }
}

/// In the child, after its set-up and before it unblocks anything: every
/// signal that became pending while all were blocked is taken and dropped.
/// Until its set-up left the provider's process group (`setsid`, spawn.rs
/// and userns_map.rs), a signal to that group (a Ctrl-C) reached the child
/// too and waited, blocked, to kill it once unblocked, ending the launch
/// (black-box round on the holder, F1). Nothing else can have signalled it:
/// no one but the kernel and this process knows its pid before the clone
/// returns. A direct `rt_sigtimedwait` with a zero timeout, until none is
/// left.
fn drain_pending_signals() {
    let zero = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    let all: u64 = u64::MAX;
    // SAFETY: a set of the kernel's size on this stack, no siginfo wanted,
    // a zero timeout: returns a pending signal's number, or fails (EAGAIN)
    // when none is left.
    while unsafe {
        libc::syscall(
            libc::SYS_rt_sigtimedwait,
            &all as *const u64,
            std::ptr::null_mut::<libc::siginfo_t>(),
            &zero as *const libc::timespec,
            KERNEL_SIGSET_BYTES,
        )
    } > 0
    {}
}

/// `rt_sigprocmask(SIG_SETMASK)` itself, not glibc's wrapper, which takes
/// glibc's own signals (SIGCANCEL, SIGSETXID) out of any set it is given;
/// blocking them too across the clone is what glibc's `posix_spawn` does.
fn set_mask(mask: &libc::sigset_t, previous: Option<&mut libc::sigset_t>) -> io::Result<()> {
    let previous = previous.map_or(std::ptr::null_mut(), |p| p as *mut libc::sigset_t);
    // SAFETY: valid sigset pointers (or null for the old mask); the size is
    // the kernel's sigset (64 signals), which the libc type covers.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_rt_sigprocmask,
            libc::SIG_SETMASK,
            mask as *const libc::sigset_t,
            previous,
            KERNEL_SIGSET_BYTES,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The kernel's `sigset_t` (`_NSIG / 8`), which `rt_sigprocmask` requires.
const KERNEL_SIGSET_BYTES: usize = 8;

/// Every signal blocked on the calling thread while it exists (the child
/// inherits the mask, so no handler runs in it before [`reset_signals`]);
/// the previous mask is restored on drop (also around the user namespace
/// holder's clone, userns_map.rs).
pub(crate) struct BlockedSignals(libc::sigset_t);

impl BlockedSignals {
    pub(crate) fn all() -> io::Result<Self> {
        // SAFETY: sigset_t is plain data; all-zero is a valid empty set.
        let (mut all, mut previous) = unsafe {
            (
                std::mem::zeroed::<libc::sigset_t>(),
                std::mem::zeroed::<libc::sigset_t>(),
            )
        };
        // Every bit, not sigfillset: glibc's leaves out its own SIGCANCEL
        // and SIGSETXID (32, 33), whose handlers the child would otherwise
        // inherit unblocked (white-box round on the holder, F2).
        // SAFETY: writes within the set's own bytes.
        unsafe {
            std::ptr::write_bytes(
                (&mut all as *mut libc::sigset_t).cast::<u8>(),
                0xff,
                std::mem::size_of::<libc::sigset_t>(),
            )
        };
        set_mask(&all, Some(&mut previous))?;
        Ok(Self(previous))
    }
}

impl Drop for BlockedSignals {
    fn drop(&mut self) {
        let _ = set_mask(&self.0, None);
    }
}

/// An anonymous mapping for the child's stack, its lowest page a guard
/// (also the user namespace holder's, userns_map.rs).
pub(crate) struct ChildStack {
    base: std::ptr::NonNull<libc::c_void>,
}

// SAFETY: a private mapping only this value refers to.
unsafe impl Send for ChildStack {}

impl ChildStack {
    pub(crate) fn new() -> io::Result<Self> {
        use nix::sys::mman::{mmap_anonymous, mprotect, MapFlags, ProtFlags};
        let length = std::num::NonZeroUsize::new(STACK_BYTES).ok_or(io::ErrorKind::InvalidInput)?;
        // SAFETY: a new private anonymous mapping at an address the kernel
        // chooses: it cannot alias anything of the process.
        let base = unsafe {
            mmap_anonymous(
                None,
                length,
                ProtFlags::PROT_READ | ProtFlags::PROT_WRITE,
                MapFlags::MAP_PRIVATE | MapFlags::MAP_STACK,
            )
        }?;
        let stack = Self { base };
        // SAFETY: the first page of the mapping just made, which nothing
        // else refers to.
        unsafe { mprotect(base, GUARD_BYTES, ProtFlags::PROT_NONE) }?;
        Ok(stack)
    }

    /// The highest address (stacks grow down on x86_64 and aarch64).
    pub(crate) fn top(&self) -> *mut libc::c_void {
        // SAFETY: one past the end of the mapping, which is in bounds of
        // the same allocation for pointer arithmetic.
        unsafe { self.base.as_ptr().cast::<u8>().add(STACK_BYTES).cast() }
    }
}

impl Drop for ChildStack {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, unmapped once; the child that
        // used it has exec'd or exited (CLONE_VFORK here; userns_map.rs
        // drops the holder's only after reaping it).
        let _ = unsafe { nix::sys::mman::munmap(self.base, STACK_BYTES) };
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

    fn image(argv: &[&str]) -> ExecImage {
        ExecImage::new(
            std::path::Path::new(argv[0]),
            argv,
            std::iter::empty::<&str>(),
        )
        .unwrap()
    }

    fn sh(script: &str) -> ExecImage {
        image(&["/bin/sh", "-c", script])
    }

    /// Every test's set-up is a few direct syscalls or an atomic store.
    fn start<F: FnMut() -> io::Result<()>>(image: &ExecImage, set_up: F) -> io::Result<Process> {
        // SAFETY: the callers' closures only store to atomics or make
        // direct syscalls (kill, the raw set-ids), none of which allocates,
        // locks or panics.
        unsafe { spawn(image, set_up) }
    }

    #[test]
    fn a_started_program_runs_and_is_reaped_once() {
        let mut process = start(&image(&["/bin/true"]), || Ok(())).unwrap();
        assert!(process.id() > 0);
        assert!(process.wait().unwrap().success());
        // Reaped: a second wait returns the same status, a kill does nothing.
        assert!(process.wait().unwrap().success());
        process.kill().unwrap();
    }

    #[test]
    fn an_exec_failure_is_the_childs_errno_and_leaves_no_zombie() {
        let err = start(&image(&["/nonexistent/cordon-program"]), || Ok(())).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::ENOENT));
        // The child was reaped inside spawn: this thread has no child left.
        let tid = nix::unistd::gettid();
        let children = std::fs::read_to_string(format!("/proc/self/task/{tid}/children")).unwrap();
        assert_eq!(children.trim(), "", "an unreaped child");
    }

    #[test]
    fn a_set_up_failure_stops_before_the_exec() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("ran");
        let script = format!("touch {}", marker.display());
        let err = start(&sh(&script), || {
            Err(io::Error::from_raw_os_error(libc::EPERM))
        })
        .unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::EPERM));
        assert!(!marker.exists());
    }

    /// What makes the start cheap: the child writes the provider's own
    /// memory until its exec (a fork's child would write a copy).
    #[test]
    fn the_child_shares_the_callers_memory_until_its_exec() {
        let seen = AtomicBool::new(false);
        let mut process = start(&image(&["/bin/true"]), || {
            seen.store(true, Ordering::SeqCst);
            Ok(())
        })
        .unwrap();
        assert!(seen.load(Ordering::SeqCst));
        process.wait().unwrap();
    }

    /// A provider that ignores SIGCHLD (or sets SA_NOCLDWAIT) has the kernel
    /// reap its children and discard their statuses (whatever their exit
    /// signal: checked by hand): the wait says why instead of a bare ECHILD.
    /// Run in a process of its own: the disposition is process-wide, and the
    /// other tests' std children need SIGCHLD.
    #[test]
    fn a_caller_that_ignores_sigchld_is_told_why_the_status_is_gone() {
        const INNER: &str = "CORDON_TEST_CLONE_EXEC_SIGCHLD_IGNORED";
        const NAME: &str =
            "host::clone_exec::tests::a_caller_that_ignores_sigchld_is_told_why_the_status_is_gone";
        if std::env::var_os(INNER).is_some() {
            // SAFETY: SIG_IGN runs no handler code.
            unsafe { libc::signal(libc::SIGCHLD, libc::SIG_IGN) };
            let error = start(&sh("exit 7"), || Ok(())).unwrap().wait().unwrap_err();
            assert!(error.to_string().contains("ignores SIGCHLD"), "{error}");
            return;
        }
        crate::live_support::run_inner_test(NAME, INNER);
    }

    static HANDLER_RAN: AtomicBool = AtomicBool::new(false);

    extern "C" fn on_usr1(_: libc::c_int) {
        HANDLER_RAN.store(true, Ordering::SeqCst);
    }

    /// A provider's handler must never run in the child (it would run on the
    /// provider's memory and thread state): the signal is blocked through
    /// the set-up, and what became pending meanwhile (a signal to the
    /// provider's process group before the child left it) is dropped before
    /// anything is unblocked, so the child reaches its exec (black-box round
    /// on the holder, F1: SIGUSR1 used to end it there).
    #[test]
    fn a_signal_sent_to_the_child_never_runs_the_providers_handler() {
        // SAFETY: installs a handler that only stores to an atomic.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_usr1 as *const () as libc::sighandler_t;
            assert_eq!(
                libc::sigaction(libc::SIGUSR1, &action, std::ptr::null_mut()),
                0
            );
        }
        let mut process = start(&image(&["/bin/true"]), || {
            // SAFETY: direct syscalls to this (child) process.
            unsafe {
                libc::kill(libc::getpid(), libc::SIGUSR1);
                libc::kill(libc::getpid(), libc::SIGINT);
            }
            Ok(())
        })
        .unwrap();
        assert!(process.wait().unwrap().success());
        assert!(!HANDLER_RAN.load(Ordering::SeqCst));
    }

    /// The exec'd program starts with an empty mask, SIGPIPE and SIGTERM at
    /// their defaults even when the caller blocked or ignored them, and
    /// another ignored signal (as Node's SIGXFSZ) still ignored.
    #[test]
    fn the_program_gets_an_empty_mask_and_default_stop_signals() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("status");
        let script = format!(
            "grep -E '^Sig(Blk|Ign)' /proc/self/status > {}",
            out.display()
        );
        // SIGTERM blocked on a thread of its own (a mask is per thread); the
        // dispositions are the process's: SIGPIPE the test harness ignores
        // already, SIGUSR2 no other test uses.
        let status = std::thread::spawn(move || {
            // SAFETY: sets dispositions to SIG_IGN (no handler code) and
            // blocks SIGTERM on this thread only.
            unsafe {
                libc::signal(libc::SIGPIPE, libc::SIG_IGN);
                libc::signal(libc::SIGUSR2, libc::SIG_IGN);
                let mut set: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut set);
                libc::sigaddset(&mut set, libc::SIGTERM);
                libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
            }
            start(&sh(&script), || Ok(())).unwrap().wait().unwrap()
        })
        .join()
        .unwrap();
        assert!(status.success());
        let text = std::fs::read_to_string(&out).unwrap();
        let field = |name: &str| {
            let line = text.lines().find(|l| l.starts_with(name)).unwrap();
            u64::from_str_radix(line.split_whitespace().nth(1).unwrap(), 16).unwrap()
        };
        assert_eq!(field("SigBlk:"), 0, "{text}");
        let ignored = field("SigIgn:");
        let bit = |signal: libc::c_int| 1u64 << (signal - 1);
        assert_eq!(ignored & bit(libc::SIGPIPE), 0, "{text}");
        assert_eq!(ignored & bit(libc::SIGTERM), 0, "{text}");
        assert_ne!(ignored & bit(libc::SIGUSR2), 0, "{text}");
    }

    #[test]
    fn the_dumpable_flag_is_put_back_to_what_it_was_whatever_the_child_left() {
        let (zero, one, two) = (Dumpable(0), Dumpable(1), Dumpable(2));
        assert_eq!(one.restore_from(one), None);
        assert_eq!(one.restore_from(zero), Some(1));
        // suid_dumpable=2: read as a bool, 2 looked like 1 (white-box F1).
        assert_eq!(one.restore_from(two), Some(1));
        assert_eq!(zero.restore_from(zero), None);
        assert_eq!(zero.restore_from(two), Some(0));
        assert_eq!(zero.restore_from(one), Some(0));
        assert_eq!(two.restore_from(zero), Some(0));
    }

    /// As root, with `fs.suid_dumpable` at 2 for the spawn (Ubuntu's with
    /// apport): the child's set-id leaves the shared map at 2, and the caller
    /// still goes back to 1.
    #[test]
    fn the_dumpable_flag_comes_back_from_a_suid_dumpable_of_2() {
        const SYSCTL: &str = "/proc/sys/fs/suid_dumpable";
        if !nix::unistd::geteuid().is_root() || std::fs::metadata(SYSCTL).is_err() {
            return;
        }
        let nobody = Identity {
            uid: 65534,
            gid: 65534,
        };
        let host = std::fs::read_to_string(SYSCTL).unwrap();
        std::fs::write(SYSCTL, "2").unwrap();
        let spawned = start(&image(&["/bin/true"]), || assume_identity(nobody, true));
        // Put back at once: the sysctl is the host's.
        std::fs::write(SYSCTL, host.trim()).unwrap();
        assert!(spawned.unwrap().wait().unwrap().success());
        let _serialised = fork_lock();
        assert_eq!(Dumpable::read().unwrap(), Dumpable(1));
    }

    /// The child's set-id turns the shared map non-dumpable; the caller
    /// puts it back (a non-root provider's later namespace holders share
    /// the flag, and it could not open their namespaces).
    #[test]
    fn the_callers_dumpable_flag_survives_a_childs_identity_change() {
        if !nix::unistd::geteuid().is_root() {
            return;
        }
        // Read under the lock: another test's spawn may be in its window.
        let dumpable = || {
            let _serialised = fork_lock();
            nix::sys::prctl::get_dumpable().unwrap()
        };
        assert!(dumpable());
        let nobody = Identity {
            uid: 65534,
            gid: 65534,
        };
        let mut process = start(&image(&["/bin/true"]), || assume_identity(nobody, true)).unwrap();
        assert!(process.wait().unwrap().success());
        assert!(dumpable());
    }

    /// As root: the child's change of identity is the child's alone. glibc's
    /// set-id wrappers would broadcast it to every thread of the caller,
    /// whose memory (and thread list) the child shares.
    #[test]
    fn the_childs_identity_change_leaves_every_caller_thread_root() {
        if !nix::unistd::geteuid().is_root() {
            return;
        }
        // More than one thread in the caller, as in the provider.
        let (stop_tx, stop_rx) = std::sync::mpsc::channel::<()>();
        let other = std::thread::spawn(move || stop_rx.recv());
        let nobody = Identity {
            uid: 65534,
            gid: 65534,
        };
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("ids");
        std::fs::set_permissions(
            dir.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o777),
        )
        .unwrap();
        let script = format!("id -u > {}", out.display());
        let mut process = start(&sh(&script), || assume_identity(nobody, true)).unwrap();
        assert!(process.wait().unwrap().success());
        assert_eq!(std::fs::read_to_string(&out).unwrap().trim(), "65534");
        for task in std::fs::read_dir("/proc/self/task").unwrap() {
            // Other tests' threads come and go meanwhile: one that ended
            // between the listing and the read has nothing left to check.
            let Ok(status) = std::fs::read_to_string(task.unwrap().path().join("status")) else {
                continue;
            };
            let uid = status.lines().find(|l| l.starts_with("Uid:")).unwrap();
            assert_eq!(uid.split_whitespace().nth(1), Some("0"), "{status}");
        }
        stop_tx.send(()).unwrap();
        let _ = other.join();
    }
}
