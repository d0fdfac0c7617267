//! Socket pairs handed to a sandbox (fd 3, the fd-4 channel, each fd-4
//! stream), made in a network namespace of their own (round 16b, R16b-2).
//!
//! Why: a Unix socket belongs to the network namespace of the process that
//! made it, and that namespace answers for it wherever it goes. Made in the
//! provider's namespace, a sandbox's fd 3 told the program which abstract
//! names the host has: `connect` on a connected socket looks the name up
//! before it checks the socket's state, so a host listener of that name
//! gave `EISCONN` and an absent one `ECONNREFUSED`. Device ioctls on the
//! socket (`SIOCGIFCONF`, `SIOCGIFHWADDR`) answer for the socket's
//! namespace too: the host's interfaces, addresses and MAC addresses.
//!
//! A thread of a non-root provider cannot enter another network namespace
//! (`setns` needs `CAP_SYS_ADMIN` over it, and a multi-threaded process may
//! not `unshare` a user namespace), so the pairs are made by a *maker*: a
//! process cloned with `CLONE_VM | CLONE_FILES` into a new user and network
//! namespace, in which there is nothing but a loopback device that is down.
//! It shares this process's memory and descriptor table, so a pair it
//! makes lands in our table, and a request is two atomics and two futex
//! wakes, with no descriptor passing. It lives as long as the provider (its
//! parent-death signal is `SIGKILL`, tied to the thread that made it, which
//! only waits for it), in a session of its own and ignoring every signal
//! that can be ignored, so a Ctrl-C or a signal to the provider's process
//! group passes it by. One that ends or stops answering is replaced at the
//! next request, and so is one made under other credentials than the
//! provider has now: a provider that dropped root after its first spawn
//! must not keep a root maker beside it in shared memory, and the kernel
//! would not even deliver the parent-death signal to it then. So the maker
//! also ends by itself within [`WATCH_EVERY`] once it may no longer signal
//! its provider (`kill(provider, 0)`: the provider is gone or dropped the
//! credentials the maker has; not seen where a root provider's maker is
//! root of the host's user namespace, the fallback without user
//! namespaces).
//!
//! Where no maker can be made (user namespaces refused to this process: a
//! container's seccomp profile, or AppArmor's
//! `apparmor_restrict_unprivileged_userns` on Ubuntu 24.04 for an unconfined
//! Node), pairs are made here, in the provider's namespace, as before the
//! maker existed: a sandbox can then probe the host's abstract names and
//! interfaces again, which `cordon doctor` reports ([`pair_namespace`]).
//!
//! The maker runs on memory it shares with every thread here, so it must
//! not touch anything another thread could hold: it allocates nothing,
//! takes no lock, touches no Rust thread-local and makes raw syscalls
//! only. The one thread-local it does write, `errno` (through `syscall`),
//! is that of the thread that cloned it, which only waits in `waitid`
//! with every signal blocked and reads no `errno` until the maker is gone.
//!
//! Descriptors: the maker's `/proc/<pid>/fd` lists the provider's whole
//! table (it is the same table). A maker killed with `SIGKILL` inside
//! `socketpair` leaves the pair it was making in the table, unowned: only
//! a kill from outside does that, or the kill of a maker that did not
//! answer in [`ANSWER_WITHIN`].

use std::ffi::c_void;
use std::io;
use std::os::fd::{AsFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};
use std::sync::{mpsc, Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::sys::socket::SockType;
use nix::sys::wait::{waitpid, WaitPidFlag};
use nix::unistd::{getegid, geteuid, Pid};

/// `Exchange::state`: no request.
const IDLE: u32 = 0;
/// A request is posted (`kind` set).
const REQUESTED: u32 = 1;
/// The maker answered (`fds` or `errno` set).
const ANSWERED: u32 = 2;
/// The maker has ended (set by the thread that reaped it).
const ENDED: u32 = 3;

/// A maker answers in microseconds; one that has not answered in this long
/// is stopped or starved beyond use: it is killed and the request fails
/// (the next one starts a new maker).
const ANSWER_WITHIN: Duration = Duration::from_secs(2);

/// How often an idle maker looks whether its provider is still there and
/// still of the credentials it was made with (`kill(provider, 0)`): the
/// parent-death signal does not reach a maker made as root once the
/// provider has dropped root (the kernel checks the exiting thread's
/// permission to signal it).
const WATCH_EVERY: Duration = Duration::from_secs(1);

/// The maker's stack: it calls a handful of syscalls and nothing else.
const STACK_BYTES: usize = 64 * 1024;

/// The memory the maker and the requesting threads share. Only atomics:
/// the maker reads and writes it while other threads run.
#[derive(Default)]
struct Exchange {
    state: AtomicU32,
    /// The socket type asked for (`SOCK_STREAM`, `SOCK_SEQPACKET`).
    kind: AtomicI32,
    /// The pair made (descriptors in this process's table).
    fds: [AtomicI32; 2],
    /// 0, or the `errno` of the failed `socketpair`.
    errno: AtomicI32,
    /// This process's pid: the maker ends if its parent is another (the
    /// provider ended before the parent-death signal was set).
    parent: AtomicI32,
    /// Set to end the maker (given up): it exits at its next wake-up. A
    /// kill may not reach it (a provider that dropped root cannot signal a
    /// maker made as root); this needs no permission.
    quit: AtomicU32,
    /// Held to reap the maker and to kill it, so a kill never reaches a pid
    /// that was reaped and reused. The maker never takes it.
    reaping: Mutex<()>,
}

/// The running maker.
struct Maker {
    exchange: Arc<Exchange>,
    pid: libc::pid_t,
    /// This process's effective uid and gid when it made the maker (the
    /// maker's own, outside its user namespace).
    made_as: (libc::uid_t, libc::gid_t),
}

/// Where pairs are made now.
enum Source {
    /// Nothing asked yet, or the last maker was given up.
    Unstarted,
    Maker(Maker),
    /// No maker can be made in this process (the `clone` errno): pairs are
    /// made in its own namespace.
    Here(i32),
}

/// Requests are serialised: one exchange slot, and each takes microseconds.
static SOURCE: Mutex<Source> = Mutex::new(Source::Unstarted);

/// Which namespace the pairs handed to sandboxes are made in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PairNamespace {
    /// An empty one of the pair maker's.
    Empty,
    /// This process's own: no maker can be made (why).
    Provider(String),
    /// No maker could be made now and pairs fail (why).
    Failing(String),
}

/// Where a sandbox's pairs are made in this process (starting the maker if
/// nothing has yet), for `cordon doctor`.
pub fn pair_namespace() -> PairNamespace {
    if let Err(e) = sandbox_pair(SockType::Stream) {
        return PairNamespace::Failing(e.to_string());
    }
    let source = SOURCE.lock().unwrap_or_else(PoisonError::into_inner);
    match &*source {
        Source::Maker(_) => PairNamespace::Empty,
        Source::Here(errno) => {
            PairNamespace::Provider(io::Error::from_raw_os_error(*errno).to_string())
        }
        Source::Unstarted => {
            PairNamespace::Provider("a user or network namespace count is spent (ENOSPC)".into())
        }
    }
}

/// Which network namespace one pair was made in: what a run's receipt
/// records for its fd 3 (`confinement.channels.namespace`), since a fallback
/// to the provider's namespace is per process and per pair (a namespace
/// count spent at that moment), not per host. Known from where the pair was
/// made, not read back from the socket (no kernel feature needed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChannelNamespace {
    /// A pair maker's, empty.
    Empty,
    /// This process's own (no maker could be made).
    Provider,
}

impl ChannelNamespace {
    pub fn as_str(self) -> &'static str {
        match self {
            ChannelNamespace::Empty => "empty",
            ChannelNamespace::Provider => "provider",
        }
    }
}

/// A connected pair of `kind` made in the maker's empty network namespace
/// (in this process's where no maker can be made: module doc): `(host end,
/// sandbox end)`, both close-on-exec, the sandbox end already bound to an
/// automatic name ([`crate::take_automatic_name`]).
pub fn sandbox_pair(kind: SockType) -> io::Result<(OwnedFd, OwnedFd)> {
    sandbox_pair_in(kind).map(|(host, sandbox, _)| (host, sandbox))
}

/// [`sandbox_pair`], and which namespace the pair was made in.
pub fn sandbox_pair_in(kind: SockType) -> io::Result<(OwnedFd, OwnedFd, ChannelNamespace)> {
    let mut source = SOURCE.lock().unwrap_or_else(PoisonError::into_inner);
    // A maker can end between two requests (killed): the request then
    // fails with `Ended` and is made once more by a new one.
    let mut attempts = 0;
    let (host, sandbox, namespace) = loop {
        attempts += 1;
        if ensure_source(&mut source)?.is_some() {
            let (host, sandbox) = here(kind)?;
            break (host, sandbox, ChannelNamespace::Provider);
        }
        let Source::Maker(maker) = &mut *source else {
            let (host, sandbox) = here(kind)?;
            break (host, sandbox, ChannelNamespace::Provider);
        };
        match request(&maker.exchange, kind as libc::c_int) {
            Ok((host, sandbox)) => break (host, sandbox, ChannelNamespace::Empty),
            Err(Failed::Ended) if attempts < 2 => {}
            Err(Failed::Ended) => return Err(io::Error::other("the pair maker ended")),
            Err(Failed::Os(errno)) => return Err(io::Error::from_raw_os_error(errno)),
            Err(Failed::Silent) => {
                abandon(maker);
                *source = Source::Unstarted;
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "the pair maker did not answer",
                ));
            }
        }
    };
    if !crate::take_automatic_name(sandbox.as_fd()) {
        return Err(io::Error::last_os_error());
    }
    Ok((host, sandbox, namespace))
}

/// Makes `source` a live maker, or `Here` where none can be made. A maker
/// that ended, or that was made under other credentials than this
/// process's now, is replaced. `Some(errno)`: no maker for now (a count
/// spent), this request's pair is made here.
fn ensure_source(source: &mut Source) -> io::Result<Option<i32>> {
    let now_as = (geteuid().as_raw(), getegid().as_raw());
    match &*source {
        Source::Here(_) => return Ok(None),
        Source::Maker(maker) => {
            let ended = maker.exchange.state.load(Ordering::Acquire) == ENDED;
            if !ended && maker.made_as == now_as {
                return Ok(None);
            }
            if !ended {
                abandon(maker);
            }
        }
        Source::Unstarted => {}
    }
    *source = Source::Unstarted;
    match start(now_as) {
        Ok(maker) => *source = Source::Maker(maker),
        // Refused by policy (seccomp, AppArmor, SELinux, user namespaces
        // off): for good in this process. A namespace count spent (ENOSPC,
        // EUSERS): this request's pair is made here, and the next request
        // tries a maker again. Anything else (EAGAIN, ENOMEM) is this
        // request's failure.
        Err(e) => match e.raw_os_error() {
            Some(errno @ (libc::EPERM | libc::EINVAL | libc::EACCES | libc::ENOSYS)) => {
                *source = Source::Here(errno)
            }
            Some(errno @ (libc::ENOSPC | libc::EUSERS)) => return Ok(Some(errno)),
            _ => return Err(e),
        },
    }
    Ok(None)
}

/// A pair made in this process's network namespace (no maker here).
fn here(kind: SockType) -> io::Result<(OwnedFd, OwnedFd)> {
    use nix::sys::socket::{socketpair, AddressFamily, SockFlag};
    Ok(socketpair(
        AddressFamily::Unix,
        kind,
        None,
        SockFlag::SOCK_CLOEXEC,
    )?)
}

/// Why a request got no pair.
enum Failed {
    /// The maker has ended.
    Ended,
    /// It did not answer in time.
    Silent,
    /// `socketpair` failed with this errno.
    Os(i32),
}

/// Posts a request for a pair of `kind` and waits for the answer.
fn request(ex: &Exchange, kind: libc::c_int) -> Result<(OwnedFd, OwnedFd), Failed> {
    ex.kind.store(kind, Ordering::Relaxed);
    // The maker's socketpair writes straight into `fds`: a maker killed
    // after the call leaves them there for its reaper to close.
    ex.fds[0].store(-1, Ordering::Relaxed);
    ex.fds[1].store(-1, Ordering::Relaxed);
    if ex
        .state
        .compare_exchange(IDLE, REQUESTED, Ordering::AcqRel, Ordering::Acquire)
        .is_err()
    {
        return Err(Failed::Ended);
    }
    futex_wake(&ex.state);
    let deadline = Instant::now() + ANSWER_WITHIN;
    loop {
        let state = ex.state.load(Ordering::Acquire);
        match state {
            ANSWERED => break,
            ENDED => return Err(Failed::Ended),
            _ => {}
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(Failed::Silent);
        }
        futex_wait(&ex.state, state, Some(left));
    }
    // Whoever moves the state off ANSWERED owns the pair: this request by
    // taking it back to IDLE, or the reaper by ending it (which closes the
    // pair). So a maker killed right after its answer leaks nothing, and
    // nothing is closed twice.
    if ex
        .state
        .compare_exchange(ANSWERED, IDLE, Ordering::AcqRel, Ordering::Acquire)
        .is_err()
    {
        return Err(Failed::Ended);
    }
    let errno = ex.errno.load(Ordering::Relaxed);
    let (a, b) = (
        ex.fds[0].load(Ordering::Relaxed),
        ex.fds[1].load(Ordering::Relaxed),
    );
    if errno != 0 {
        return Err(Failed::Os(errno));
    }
    // SAFETY: the maker made these two descriptors in our table for this
    // request, and nothing else owns them (taken off ANSWERED above).
    Ok(unsafe { (OwnedFd::from_raw_fd(a), OwnedFd::from_raw_fd(b)) })
}

/// Gives up on a maker (it did not answer, or it was made under other
/// credentials): tells it to quit and kills it (a kill this process may
/// no longer be allowed to send); a pair it made after all is closed by
/// its reaper. The kill is under `reaping`, so the pid killed is the
/// maker's (at worst a zombie): its reaper takes the lock before it reaps.
fn abandon(maker: &Maker) {
    maker.exchange.quit.store(1, Ordering::Release);
    futex_wake(&maker.exchange.state);
    let _reaping = maker
        .exchange
        .reaping
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if maker.exchange.state.load(Ordering::Acquire) != ENDED {
        // The maker's pid, not yet reaped (see above); refused where this
        // process may no longer signal it, which `quit` covers.
        let _ = kill(Pid::from_raw(maker.pid), Signal::SIGKILL);
    }
}

/// Starts a maker from a thread of its own, which then waits for it to end.
fn start(made_as: (libc::uid_t, libc::gid_t)) -> io::Result<Maker> {
    let exchange = Arc::new(Exchange::default());
    exchange
        .parent
        .store(std::process::id() as libc::pid_t, Ordering::Relaxed);
    let ours = Arc::clone(&exchange);
    let (started_tx, started_rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("cordon-pair-maker".into())
        .spawn(move || {
            let mut stack = vec![0u8; STACK_BYTES];
            let started = clone_maker(&ours, &mut stack);
            let pid = started.as_ref().ok().copied();
            let _ = started_tx.send(started);
            if let Some(pid) = pid {
                reap(&ours, pid);
            }
            // The stack is freed here, after the maker that ran on it ended.
            drop(stack);
        })?;
    let pid = started_rx
        .recv()
        .map_err(|_| io::Error::other("the pair maker's thread ended"))??;
    Ok(Maker {
        exchange,
        pid,
        made_as,
    })
}

/// Clones the maker into a new user and network namespace (as root, where
/// a user namespace is refused, a network namespace alone: root may make
/// one). Runs on the maker's own thread, whose signals it blocks first so
/// that the maker starts with all of them blocked (no handler of this
/// process can run in it before it has set them aside).
fn clone_maker(exchange: &Arc<Exchange>, stack: &mut [u8]) -> io::Result<libc::pid_t> {
    // SAFETY: sigfillset on a local set, pthread_sigmask on this thread.
    unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_BLOCK, &all, std::ptr::null_mut());
    }
    // The top of the stack, 16-byte aligned (the stack grows down).
    let top = stack.as_mut_ptr_range().end as usize & !15;
    let arg = Arc::as_ptr(exchange) as *mut c_void;
    let shared = libc::CLONE_VM | libc::CLONE_FILES | libc::CLONE_NEWNET;
    let mut last = io::Error::other("no clone tried");
    for flags in [shared | libc::CLONE_NEWUSER, shared] {
        // SAFETY: `maker_main` runs on `stack`, which outlives the maker
        // (the caller frees it after reaping it), and uses only `arg`, an
        // Exchange kept alive by the caller's Arc until then. No exit
        // signal: it is reaped with __WALL by this thread.
        let pid = unsafe { libc::clone(maker_main, top as *mut c_void, flags, arg) };
        if pid > 0 {
            return Ok(pid);
        }
        last = io::Error::last_os_error();
        if !geteuid().is_root() {
            break;
        }
    }
    Err(last)
}

/// Waits until the maker has ended, marks it ended (closing a pair it made
/// that no request took) and reaps it.
fn reap(ex: &Exchange, pid: libc::pid_t) {
    loop {
        // SAFETY: waitid on our own child with a zeroed siginfo; WNOWAIT
        // leaves it unreaped, so its pid stays its own until the reap below.
        let rc = unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT | libc::__WALL,
            )
        };
        if rc == 0 || io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            break;
        }
    }
    let _reaping = ex.reaping.lock().unwrap_or_else(PoisonError::into_inner);
    let prior = ex.state.swap(ENDED, Ordering::AcqRel);
    // A pair no request took: answered (request(): whoever moves the state
    // off ANSWERED owns the pair), or made by a maker killed before it
    // could answer (its socketpair wrote `fds`, reset to -1 per request).
    if prior == ANSWERED || prior == REQUESTED {
        for fd in &ex.fds {
            let fd = fd.swap(-1, Ordering::AcqRel);
            if fd >= 0 {
                // SAFETY: a descriptor of that pair, which nothing else owns.
                drop(unsafe { OwnedFd::from_raw_fd(fd) });
            }
        }
    }
    futex_wake(&ex.state);
    let _ = waitpid(Pid::from_raw(pid), Some(WaitPidFlag::__WALL));
}

/// The maker: leaves the provider's session and process group, ignores
/// every signal that can be ignored (the provider's group signals and a
/// Ctrl-C are not for it; `SIGKILL` still ends it), dies with its parent
/// thread, then makes a pair for each request until it is told to quit,
/// killed, or finds its provider gone or of other credentials
/// ([`WATCH_EVERY`]). Raw syscalls only (module doc).
extern "C" fn maker_main(arg: *mut c_void) -> libc::c_int {
    // SAFETY: `arg` is the Exchange the cloning thread keeps alive until
    // this process has ended.
    let ex = unsafe { &*(arg as *const Exchange) };
    // SAFETY: raw syscalls on local memory (module doc: no allocation, no
    // lock, no thread-local of Rust's).
    unsafe {
        let ignore = KernelSigaction {
            handler: libc::SIG_IGN,
            flags: 0,
            restorer: 0,
            mask: 0,
        };
        for signal in 1..=64 {
            if signal != libc::SIGKILL && signal != libc::SIGSTOP {
                libc::syscall(
                    libc::SYS_rt_sigaction,
                    signal,
                    &ignore as *const KernelSigaction,
                    std::ptr::null_mut::<KernelSigaction>(),
                    8usize,
                );
            }
        }
        libc::syscall(libc::SYS_setsid);
        // No capability: a pair needs none, and without CAP_KILL a root
        // maker's `kill(provider, 0)` fails once the provider drops root
        // (the watch below), also where it is root of the host's user
        // namespace (the fallback without user namespaces).
        let header = CapHeader {
            version: LINUX_CAPABILITY_VERSION_3,
            pid: 0,
        };
        let none = [CapData::default(); 2];
        libc::syscall(libc::SYS_capset, &header as *const CapHeader, none.as_ptr());
        libc::syscall(libc::SYS_prctl, libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        libc::syscall(libc::SYS_prctl, libc::PR_SET_NAME, c"cordon-pairs".as_ptr());
        let none: u64 = 0;
        libc::syscall(
            libc::SYS_rt_sigprocmask,
            libc::SIG_SETMASK,
            &none as *const u64,
            std::ptr::null_mut::<u64>(),
            8usize,
        );
        // The provider ended before the parent-death signal was set.
        if libc::syscall(libc::SYS_getppid) != i64::from(ex.parent.load(Ordering::Relaxed)) {
            libc::syscall(libc::SYS_exit, 0);
        }
    }
    let parent = ex.parent.load(Ordering::Relaxed);
    loop {
        if ex.quit.load(Ordering::Acquire) != 0 {
            // SAFETY: exit(2) of this process only.
            unsafe { libc::syscall(libc::SYS_exit, 0) };
        }
        let state = ex.state.load(Ordering::Acquire);
        if state != REQUESTED {
            futex_wait(&ex.state, state, Some(WATCH_EVERY));
            // SAFETY: getppid and kill(pid, 0), which sends nothing: the
            // provider is gone (reparented), or this maker may no longer
            // signal it (it dropped the credentials the maker has).
            unsafe {
                if libc::syscall(libc::SYS_getppid) != i64::from(parent)
                    || libc::syscall(libc::SYS_kill, parent, 0) != 0
                {
                    libc::syscall(libc::SYS_exit, 0);
                }
            }
            continue;
        }
        let kind = ex.kind.load(Ordering::Relaxed);
        // SAFETY: socketpair into the shared `fds` (two AtomicI32, laid out
        // as two c_int): the kernel writes both before the call returns, so
        // a kill lands before or after the whole pair, never between.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_socketpair,
                libc::AF_UNIX,
                kind | libc::SOCK_CLOEXEC,
                0,
                ex.fds[0].as_ptr(),
            )
        };
        let errno = if rc == 0 {
            0
        } else {
            // SAFETY: errno of the cloning thread (module doc), read right
            // after the failed call that set it.
            unsafe { *libc::__errno_location() }.max(1)
        };
        ex.errno.store(errno, Ordering::Relaxed);
        ex.state.store(ANSWERED, Ordering::Release);
        futex_wake(&ex.state);
    }
}

/// `_LINUX_CAPABILITY_VERSION_3` (linux/capability.h): two data words.
const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;

/// The kernel's `struct __user_cap_header_struct`.
#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

/// The kernel's `struct __user_cap_data_struct`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// The kernel's `struct sigaction` for `rt_sigaction` (x86_64 and the
/// generic layout: handler, flags, restorer, mask), not libc's.
#[repr(C)]
struct KernelSigaction {
    handler: libc::sighandler_t,
    flags: libc::c_ulong,
    restorer: usize,
    mask: u64,
}

/// Sleeps while `word` holds `expected`, at most `timeout`.
fn futex_wait(word: &AtomicU32, expected: u32, timeout: Option<Duration>) {
    let ts = timeout.map(|t| libc::timespec {
        tv_sec: t.as_secs() as libc::time_t,
        tv_nsec: libc::c_long::from(t.subsec_nanos() as i32),
    });
    let ts_ptr = ts
        .as_ref()
        .map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: futex(2) on a live atomic; a spurious or early return is
    // handled by every caller's loop.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT,
            expected,
            ts_ptr,
        );
    }
}

/// Wakes every waiter on `word`.
fn futex_wake(word: &AtomicU32) {
    // SAFETY: futex(2) on a live atomic.
    unsafe {
        libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAKE, i32::MAX);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::os::fd::{AsFd, AsRawFd};

    use nix::sys::socket::{
        bind, connect, listen, socket, socketpair, AddressFamily, Backlog, SockFlag, SockType,
        UnixAddr,
    };

    use super::sandbox_pair;

    /// `SO_NETNS_COOKIE` (asm-generic/socket.h, Linux 5.14): a number for the
    /// socket's network namespace that no other namespace ever gets.
    const SO_NETNS_COOKIE: libc::c_int = 71;

    /// The network namespace cookie of `socket`.
    fn namespace_cookie(socket: std::os::fd::BorrowedFd<'_>) -> u64 {
        let mut cookie: u64 = 0;
        let mut len = std::mem::size_of::<u64>() as libc::socklen_t;
        // SAFETY: getsockopt into a live u64, with its length.
        let rc = unsafe {
            libc::getsockopt(
                socket.as_raw_fd(),
                libc::SOL_SOCKET,
                SO_NETNS_COOKIE,
                std::ptr::addr_of_mut!(cookie).cast(),
                &mut len,
            )
        };
        assert_eq!(
            rc,
            0,
            "SO_NETNS_COOKIE: {}",
            std::io::Error::last_os_error()
        );
        cookie
    }

    /// `socket` belongs to another network namespace than this process's.
    fn made_elsewhere(socket: std::os::fd::BorrowedFd<'_>) -> bool {
        let (_a, plain) = plain_pair();
        namespace_cookie(socket) != namespace_cookie(plain.as_fd())
    }

    /// A listener of `kind` bound to the abstract `name` in this process's
    /// (the provider's) network namespace.
    fn host_listener(kind: SockType, name: &str) -> std::os::fd::OwnedFd {
        let fd = socket(AddressFamily::Unix, kind, SockFlag::SOCK_CLOEXEC, None).unwrap();
        bind(
            fd.as_raw_fd(),
            &UnixAddr::new_abstract(name.as_bytes()).unwrap(),
        )
        .unwrap();
        listen(&fd, Backlog::new(1).unwrap()).unwrap();
        fd
    }

    /// A stream pair made here, in this process's network namespace.
    fn plain_pair() -> (std::os::fd::OwnedFd, std::os::fd::OwnedFd) {
        socketpair(
            AddressFamily::Unix,
            SockType::Stream,
            None,
            SockFlag::SOCK_CLOEXEC,
        )
        .unwrap()
    }

    fn connect_errno(fd: &impl AsRawFd, name: &str) -> nix::errno::Errno {
        connect(
            fd.as_raw_fd(),
            &UnixAddr::new_abstract(name.as_bytes()).unwrap(),
        )
        .unwrap_err()
    }

    #[test]
    fn a_pair_tells_no_host_listener_from_an_absent_name() {
        for kind in [SockType::Stream, SockType::SeqPacket] {
            let name = format!("cordon-pair-oracle-{}-{kind:?}", std::process::id());
            let _listener = host_listener(kind, &name);
            let absent = format!("{name}-absent");
            let (_host, sandbox) = sandbox_pair(kind).unwrap();
            assert_eq!(
                connect_errno(&sandbox, &name),
                connect_errno(&sandbox, &absent),
                "{kind:?}"
            );
            // Control: a pair made here tells them apart (the test can fail).
            let (_a, b) =
                socketpair(AddressFamily::Unix, kind, None, SockFlag::SOCK_CLOEXEC).unwrap();
            assert_ne!(connect_errno(&b, &name), connect_errno(&b, &absent));
        }
    }

    #[test]
    fn a_pair_tells_which_namespace_it_is_in() {
        let (host, _sandbox, namespace) = super::sandbox_pair_in(SockType::Stream).unwrap();
        assert_eq!(namespace, super::ChannelNamespace::Empty);
        // The maker's namespace, not this process's (a pair made here differs).
        assert!(made_elsewhere(host.as_fd()));
        let (_a, plain) = plain_pair();
        assert!(!made_elsewhere(plain.as_fd()));
    }

    #[test]
    fn a_pair_is_connected_named_and_close_on_exec() {
        let (host, sandbox) = sandbox_pair(SockType::Stream).unwrap();
        assert_eq!(nix::unistd::write(&sandbox, b"hi"), Ok(2));
        let mut buf = [0u8; 2];
        assert_eq!(nix::unistd::read(&host, &mut buf), Ok(2));
        assert_eq!(&buf, b"hi");
        let name: UnixAddr = nix::sys::socket::getsockname(sandbox.as_raw_fd()).unwrap();
        assert!(name.as_abstract().is_some(), "autobound");
        for fd in [host.as_fd(), sandbox.as_fd()] {
            let flags = nix::fcntl::fcntl(fd, nix::fcntl::FcntlArg::F_GETFD).unwrap();
            assert_ne!(flags & libc::FD_CLOEXEC, 0);
        }
    }

    #[test]
    fn pairs_from_many_threads_leave_no_descriptor_behind() {
        drop(sandbox_pair(SockType::Stream).unwrap());
        let before = std::fs::read_dir("/proc/self/fd").unwrap().count();
        let threads: Vec<_> = (0..8)
            .map(|_| {
                std::thread::spawn(|| {
                    for _ in 0..50 {
                        let kind = SockType::SeqPacket;
                        drop(sandbox_pair(kind).unwrap());
                        drop(sandbox_pair(SockType::Stream).unwrap());
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        // Other tests of this binary run beside this one and open their own
        // descriptors: allow for theirs, not for 800 pairs.
        let after = std::fs::read_dir("/proc/self/fd").unwrap().count();
        assert!(after < before + 40, "{before} → {after}");
    }

    /// The live maker's pid (starting one if needed).
    fn maker_pid() -> libc::pid_t {
        drop(sandbox_pair(SockType::Stream).unwrap());
        match &*super::SOURCE.lock().unwrap() {
            super::Source::Maker(m) => m.pid,
            _ => panic!("no maker on this host"),
        }
    }

    fn alive(pid: libc::pid_t) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|s| !s.rsplit(") ").next().unwrap_or("").starts_with('Z'))
    }

    #[test]
    fn a_killed_maker_is_replaced_and_its_pairs_stay_usable_and_ours() {
        let (host, sandbox) = sandbox_pair(SockType::Stream).unwrap();
        let pid = maker_pid();
        // SAFETY: kill(2) of our own maker, not reaped while this test runs
        // (nothing else kills it; a replacement made meanwhile has its own).
        unsafe { libc::kill(pid, libc::SIGKILL) };
        let mut replaced = false;
        for _ in 0..200 {
            if maker_pid() != pid {
                replaced = true;
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(replaced, "a new maker");
        assert_eq!(nix::unistd::write(&sandbox, b"x"), Ok(1));
        let mut buf = [0u8; 1];
        assert_eq!(nix::unistd::read(&host, &mut buf), Ok(1));
        // The new maker's pair is in an empty namespace too, not in the
        // old maker's.
        let (_h, fresh) = sandbox_pair(SockType::Stream).unwrap();
        assert!(made_elsewhere(fresh.as_fd()));
        assert_ne!(
            namespace_cookie(fresh.as_fd()),
            namespace_cookie(sandbox.as_fd())
        );
    }

    #[test]
    fn the_maker_has_a_session_of_its_own_and_outlives_signals_sent_to_its_group() {
        let pid = maker_pid();
        // SAFETY: getsid and getpgid of a live pid.
        let (sid, group) = unsafe { (libc::getsid(pid), libc::getpgid(pid)) };
        assert_eq!((sid, group), (pid, pid), "setsid");
        // SAFETY: getpgrp has no preconditions.
        assert_ne!(group, unsafe { libc::getpgrp() });
        for signal in [
            libc::SIGINT,
            libc::SIGTERM,
            libc::SIGHUP,
            libc::SIGTSTP,
            libc::SIGUSR1,
        ] {
            // SAFETY: kill(2) of our own maker with a signal it ignores.
            unsafe { libc::kill(pid, signal) };
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(alive(pid), "a signal other than SIGKILL ended the maker");
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
        assert!(status.contains("State:\tS"), "{status}");
        // No capability left, in its own user namespace or the host's.
        for set in ["CapInh", "CapPrm", "CapEff"] {
            assert!(
                status.contains(&format!("{set}:\t0000000000000000")),
                "{set}: {status}"
            );
        }
    }

    /// Run by the test below in a process of its own (it changes the
    /// process's credentials): a maker made as root is replaced once the
    /// provider drops to uid 65534, and the new one runs as 65534.
    #[test]
    #[ignore = "run by a_provider_that_drops_root_gets_a_maker_of_its_new_credentials"]
    fn drop_root_child() {
        let before = maker_pid();
        println!("maker {before}");
        let uid_of = |pid: libc::pid_t| {
            let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
            status
                .lines()
                .find(|l| l.starts_with("Uid:"))
                .unwrap()
                .split_whitespace()
                .nth(2)
                .unwrap()
                .to_string()
        };
        assert_eq!(uid_of(before), "0");
        drop_to_nobody();
        let after = maker_pid();
        assert_ne!(before, after);
        assert_eq!(uid_of(after), "65534");
        assert!(gone_within(before, 1000), "the root maker is still alive");
    }

    /// The whole process drops root for good, to uid and gid 65534.
    fn drop_to_nobody() {
        // SAFETY: setgroups/setresgid/setresuid through glibc (every thread).
        unsafe {
            assert_eq!(libc::setgroups(0, std::ptr::null()), 0);
            assert_eq!(libc::setresgid(65534, 65534, 65534), 0);
            assert_eq!(libc::setresuid(65534, 65534, 65534), 0);
        }
    }

    /// Whether `pid` has ended (or is a zombie) within `ms`.
    fn gone_within(pid: libc::pid_t, ms: u64) -> bool {
        for _ in 0..ms / 5 {
            if !alive(pid) {
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        false
    }

    /// Run by the test below in a process of its own (it installs a seccomp
    /// filter and changes the process's credentials): where a root provider
    /// may not make a user namespace (container seccomp, AppArmor), the maker
    /// is cloned with CLONE_NEWNET alone, as real root. It must still hold no
    /// capability, make pairs in an empty namespace, and end once its
    /// provider drops root (it then cannot be signalled by the provider, and
    /// the parent-death signal is not delivered across that drop).
    #[test]
    #[ignore = "run by a_root_maker_without_a_user_namespace_holds_nothing_and_ends_with_the_drop"]
    fn no_userns_child() {
        use seccompiler::{SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompRule};
        let newuser = libc::CLONE_NEWUSER as u64;
        let refuse_newuser = SeccompRule::new(vec![SeccompCondition::new(
            0,
            SeccompCmpArgLen::Qword,
            SeccompCmpOp::MaskedEq(newuser),
            newuser,
        )
        .unwrap()])
        .unwrap();
        // Every thread: the maker's own thread is started by the first pair.
        crate::tests::refuse_in_every_thread(libc::SYS_clone, vec![refuse_newuser]);
        let (_host, sandbox) = sandbox_pair(SockType::Stream).unwrap();
        let pid = maker_pid();
        println!("maker {pid}");
        let ns =
            |pid: &str, kind: &str| std::fs::read_link(format!("/proc/{pid}/ns/{kind}")).unwrap();
        assert_eq!(
            ns(&pid.to_string(), "user"),
            ns("self", "user"),
            "no user namespace"
        );
        assert_ne!(
            ns(&pid.to_string(), "net"),
            ns("self", "net"),
            "a network namespace"
        );
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
        assert!(status.contains("Uid:\t0\t0\t0\t0"), "real root: {status}");
        for set in ["CapInh", "CapPrm", "CapEff", "CapAmb"] {
            assert!(
                status.contains(&format!("{set}:\t0000000000000000")),
                "{set}: {status}"
            );
        }
        // The pair's namespace is the maker's, empty: a host listener's name
        // and an absent one answer alike.
        let name = format!("cordon-no-userns-oracle-{}", std::process::id());
        let absent = format!("{name}-absent");
        let listener = host_listener(SockType::Stream, &name);
        assert_eq!(
            connect_errno(&sandbox, &name),
            connect_errno(&sandbox, &absent)
        );
        let (_a, here) = plain_pair();
        assert_ne!(
            connect_errno(&here, &name),
            connect_errno(&here, &absent),
            "control: a pair made here tells them apart"
        );
        drop(listener);
        drop_to_nobody();
        assert!(
            gone_within(pid, 2000),
            "the root maker is still alive 2 s after its provider dropped root"
        );
    }

    #[test]
    fn a_root_maker_without_a_user_namespace_holds_nothing_and_ends_with_the_drop() {
        if is_root_or_skip(
            "a_root_maker_without_a_user_namespace_holds_nothing_and_ends_with_the_drop",
            "needs a root provider (only root clones CLONE_NEWNET alone)",
        ) {
            run_alone("sandbox_pair::tests::no_userns_child");
        }
    }

    /// Whether this provider is root; if not, the calling test `test` skips
    /// (a failure under CI, which runs as root: cordon_launcher::test_skip).
    fn is_root_or_skip(test: &str, reason: &str) -> bool {
        let root = nix::unistd::geteuid().is_root();
        if !root {
            cordon_launcher::test_skip::skip(test, reason);
        }
        root
    }

    /// Runs one ignored test of this binary in a process of its own and
    /// asserts that it passed within 20 s. Its output goes to a file, not a
    /// pipe: its maker shares its descriptor table, so a maker that outlived
    /// it would hold a pipe open and a read to EOF would never end. A maker
    /// the child printed (`maker <pid>`) and left behind is killed.
    fn run_alone(test: &str) {
        run_alone_under(&[], test);
    }

    /// [`run_alone`], the child started through `wrapper` (a command that
    /// execs the rest of its arguments, such as `unshare -U -r`).
    fn run_alone_under(wrapper: &[&str], test: &str) {
        let path = std::env::temp_dir().join(format!(
            "cordon-pair-child-{}-{}",
            std::process::id(),
            test.rsplit("::").next().unwrap_or(test)
        ));
        let out = std::fs::File::create(&path).unwrap();
        let exe = std::env::current_exe().unwrap();
        let (program, wrapped) = match wrapper.split_first() {
            Some((first, rest)) => (std::path::PathBuf::from(first), rest),
            None => (exe.clone(), &[][..]),
        };
        let mut command = std::process::Command::new(program);
        command.args(wrapped);
        if !wrapper.is_empty() {
            command.arg(&exe);
        }
        let mut child = command
            .args(["--exact", test, "--ignored", "--nocapture"])
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break Some(status);
            }
            if std::time::Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        };
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let _ = std::fs::remove_file(&path);
        for pid in text.lines().filter_map(|l| l.strip_prefix("maker ")) {
            if let Ok(pid) = pid.trim().parse::<libc::pid_t>() {
                if alive(pid) {
                    // SAFETY: kill(2) of the child's maker, which outlived it.
                    unsafe { libc::kill(pid, libc::SIGKILL) };
                }
            }
        }
        assert!(
            status.is_some_and(|s| s.success()) && text.contains("1 passed"),
            "{test}: {status:?}\n{text}"
        );
    }

    /// Run by the test below in a user namespace of its own, whose root may
    /// set that namespace's counts: with `max_net_namespaces` at 0 no maker
    /// can be cloned (ENOSPC), so that one pair is made in this process's
    /// namespace and says so; with the count back, the next request clones a
    /// maker again and its pair is an empty namespace's.
    #[test]
    #[ignore = "run by a_spent_namespace_count_puts_that_pair_alone_in_the_provider_namespace"]
    fn spent_count_child() {
        let limit = "/proc/sys/user/max_net_namespaces";
        std::fs::write(limit, "0").unwrap();
        let (_host, spent, first) = super::sandbox_pair_in(SockType::Stream).unwrap();
        assert_eq!(first, super::ChannelNamespace::Provider, "made here");
        assert!(
            !made_elsewhere(spent.as_fd()),
            "no maker: not a maker's namespace"
        );
        assert!(
            matches!(&*super::SOURCE.lock().unwrap(), super::Source::Unstarted),
            "a spent count is not remembered as a refusal"
        );
        std::fs::write(limit, "64").unwrap();
        let (_host, sandbox, second) = super::sandbox_pair_in(SockType::Stream).unwrap();
        println!("maker {}", maker_pid());
        assert_eq!(second, super::ChannelNamespace::Empty, "a maker again");
        assert!(made_elsewhere(sandbox.as_fd()), "the maker's namespace");
    }

    #[test]
    fn a_spent_namespace_count_puts_that_pair_alone_in_the_provider_namespace() {
        let unshare = "/usr/bin/unshare";
        if !std::path::Path::new(unshare).exists() {
            cordon_launcher::test_skip::skip(
                "a_spent_namespace_count_puts_that_pair_alone_in_the_provider_namespace",
                "no /usr/bin/unshare (util-linux) to start a user namespace",
            );
            return;
        }
        run_alone_under(
            &[unshare, "--user", "--map-root-user"],
            "sandbox_pair::tests::spent_count_child",
        );
    }

    #[test]
    fn a_provider_that_drops_root_gets_a_maker_of_its_new_credentials() {
        if is_root_or_skip(
            "a_provider_that_drops_root_gets_a_maker_of_its_new_credentials",
            "needs a root provider to drop from",
        ) {
            run_alone("sandbox_pair::tests::drop_root_child");
        }
    }
}
