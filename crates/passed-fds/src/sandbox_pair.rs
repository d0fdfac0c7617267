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
//! wakes: no descriptor passing, and the maker holds no descriptor of its
//! own. It lives as long as the provider (its parent-death signal is
//! `SIGKILL`, tied to the thread that made it, which only waits for it);
//! one that ends or stops answering is replaced at the next request.
//!
//! The maker runs on memory it shares with every thread here, so it must
//! not touch anything another thread could hold: it allocates nothing,
//! takes no lock, touches no Rust thread-local and makes raw syscalls
//! only. The one thread-local it does write, `errno` (through `syscall`),
//! is that of the thread that cloned it, which only waits in `waitpid`
//! with every signal blocked and reads no `errno` until the maker is gone.

use std::ffi::c_void;
use std::io;
use std::os::fd::{AsFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, Ordering};
use std::sync::{mpsc, Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use nix::sys::socket::SockType;

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
    /// The request was given up (the maker did not answer): a pair it made
    /// is closed by its reaper.
    abandoned: AtomicBool,
    /// Held to reap the maker and to kill it, so a kill never reaches a pid
    /// that was reaped and reused. The maker never takes it.
    reaping: Mutex<()>,
}

/// The running maker.
struct Maker {
    exchange: Arc<Exchange>,
    pid: libc::pid_t,
}

/// The current maker, made at the first request. Requests are serialised:
/// one exchange slot, and each takes microseconds.
static MAKER: Mutex<Option<Maker>> = Mutex::new(None);

/// The current maker's pid, for [`is_maker`] (0 before the first).
static MAKER_PID: AtomicI32 = AtomicI32::new(0);

/// A connected pair of `kind` made in the maker's empty network namespace:
/// `(host end, sandbox end)`, both close-on-exec, the sandbox end already
/// bound to an automatic name ([`crate::take_automatic_name`]).
pub fn sandbox_pair(kind: SockType) -> io::Result<(OwnedFd, OwnedFd)> {
    let mut current = MAKER.lock().unwrap_or_else(PoisonError::into_inner);
    // A maker can end between two requests (killed): the request then
    // fails with `Ended` and is made once more by a new one.
    let mut attempts = 0;
    let (host, sandbox) = loop {
        attempts += 1;
        let alive = current
            .as_ref()
            .is_some_and(|m| m.exchange.state.load(Ordering::Acquire) != ENDED);
        if !alive {
            *current = None;
            *current = Some(start()?);
        }
        let Some(maker) = current.as_ref() else {
            return Err(io::Error::other("pair maker missing"));
        };
        match request(&maker.exchange, kind as libc::c_int) {
            Ok(pair) => break pair,
            Err(Failed::Ended) if attempts < 2 => {}
            Err(Failed::Ended) => return Err(io::Error::other("the pair maker ended")),
            Err(Failed::Os(errno)) => return Err(io::Error::from_raw_os_error(errno)),
            Err(Failed::Silent) => {
                abandon(maker);
                *current = None;
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
    Ok((host, sandbox))
}

/// Whether `pid` is the current maker's: a socket whose peer it is was made
/// by this process (`settle`'s test for the sandbox's own channel ends).
pub(crate) fn is_maker(pid: libc::pid_t) -> bool {
    pid != 0 && pid == MAKER_PID.load(Ordering::Acquire)
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
    let errno = ex.errno.load(Ordering::Relaxed);
    let (a, b) = (
        ex.fds[0].load(Ordering::Relaxed),
        ex.fds[1].load(Ordering::Relaxed),
    );
    // Back to idle, unless the maker ended meanwhile (ENDED stays: the
    // answer read above is whole either way).
    let _ = ex
        .state
        .compare_exchange(ANSWERED, IDLE, Ordering::AcqRel, Ordering::Acquire);
    if errno != 0 {
        return Err(Failed::Os(errno));
    }
    // SAFETY: the maker made these two descriptors in our table for this
    // request, and nothing else owns them.
    Ok(unsafe { (OwnedFd::from_raw_fd(a), OwnedFd::from_raw_fd(b)) })
}

/// Gives up on a maker that did not answer: kills it, and marks its request
/// abandoned, so that a pair it made after all is closed when it is reaped.
/// Under `reaping`, so the pid killed is the maker's (at worst a zombie):
/// its reaper takes the lock before it reaps.
fn abandon(maker: &Maker) {
    let _reaping = maker
        .exchange
        .reaping
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    maker.exchange.abandoned.store(true, Ordering::Release);
    if maker.exchange.state.load(Ordering::Acquire) != ENDED {
        // SAFETY: kill(2) on the maker's pid, not yet reaped (see above).
        unsafe { libc::kill(maker.pid, libc::SIGKILL) };
    }
}

/// Starts a maker from a thread of its own, which then waits for it to end.
fn start() -> io::Result<Maker> {
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
    MAKER_PID.store(pid, Ordering::Release);
    Ok(Maker { exchange, pid })
}

/// Clones the maker into a new user and network namespace (as root, where
/// a user namespace is refused, a network namespace alone: root may make
/// one). Runs on the maker's own thread, whose signals it blocks first so
/// that the maker starts with all of them blocked (no handler of this
/// process can run in it before it has reset them).
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
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            break;
        }
    }
    Err(last)
}

/// Waits until the maker has ended, marks it ended (closing a pair made
/// for an abandoned request) and reaps it.
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
    if prior == ANSWERED
        && ex.abandoned.load(Ordering::Acquire)
        && ex.errno.load(Ordering::Relaxed) == 0
    {
        for fd in &ex.fds {
            // SAFETY: the abandoned request's pair, which nothing else took.
            drop(unsafe { OwnedFd::from_raw_fd(fd.load(Ordering::Relaxed)) });
        }
    }
    futex_wake(&ex.state);
    let mut status = 0;
    // SAFETY: waitpid on our own child, with a live status pointer.
    unsafe { libc::waitpid(pid, &mut status, libc::__WALL) };
}

/// The maker: resets every signal to its default and unblocks them (it is
/// a plain process for whoever signals it), dies with its parent thread,
/// then makes a pair for each request until it is killed. Raw syscalls
/// only (module doc).
extern "C" fn maker_main(arg: *mut c_void) -> libc::c_int {
    // SAFETY: `arg` is the Exchange the cloning thread keeps alive until
    // this process has ended.
    let ex = unsafe { &*(arg as *const Exchange) };
    // SAFETY: raw syscalls on local memory (module doc: no allocation, no
    // lock, no thread-local of Rust's).
    unsafe {
        let default = KernelSigaction {
            handler: libc::SIG_DFL,
            flags: 0,
            restorer: 0,
            mask: 0,
        };
        for signal in 1..=64 {
            if signal != libc::SIGKILL && signal != libc::SIGSTOP {
                libc::syscall(
                    libc::SYS_rt_sigaction,
                    signal,
                    &default as *const KernelSigaction,
                    std::ptr::null_mut::<KernelSigaction>(),
                    8usize,
                );
            }
        }
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
    loop {
        let state = ex.state.load(Ordering::Acquire);
        if state != REQUESTED {
            futex_wait(&ex.state, state, None);
            continue;
        }
        let kind = ex.kind.load(Ordering::Relaxed);
        let mut fds: [libc::c_int; 2] = [-1, -1];
        // SAFETY: socketpair into a local array.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_socketpair,
                libc::AF_UNIX,
                kind | libc::SOCK_CLOEXEC,
                0,
                fds.as_mut_ptr(),
            )
        };
        let errno = if rc == 0 {
            0
        } else {
            // SAFETY: errno of the cloning thread (module doc), read right
            // after the failed call that set it.
            unsafe { *libc::__errno_location() }.max(1)
        };
        ex.fds[0].store(fds[0], Ordering::Relaxed);
        ex.fds[1].store(fds[1], Ordering::Relaxed);
        ex.errno.store(errno, Ordering::Relaxed);
        ex.state.store(ANSWERED, Ordering::Release);
        futex_wake(&ex.state);
    }
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

    #[test]
    fn a_killed_maker_is_replaced_and_its_pairs_stay_usable() {
        let (host, sandbox) = sandbox_pair(SockType::Stream).unwrap();
        let pid = super::MAKER_PID.load(std::sync::atomic::Ordering::Acquire);
        assert!(super::is_maker(pid));
        // SAFETY: kill(2) of our own maker, not reaped while this test runs
        // (nothing else kills it).
        unsafe { libc::kill(pid, libc::SIGKILL) };
        let mut replaced = false;
        for _ in 0..200 {
            let (_h, _s) = sandbox_pair(SockType::Stream).unwrap();
            if super::MAKER_PID.load(std::sync::atomic::Ordering::Acquire) != pid {
                replaced = true;
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(replaced, "a new maker");
        assert_eq!(nix::unistd::write(&sandbox, b"x"), Ok(1));
        let mut buf = [0u8; 1];
        assert_eq!(nix::unistd::read(&host, &mut buf), Ok(1));
    }
}
