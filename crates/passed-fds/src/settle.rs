//! How the closer closes the descriptors a sandbox passed: from a thread
//! that exits holding the last references (G1, found by reading at the
//! stop of 2026-12-06; rounds 14 and 14w, R14-1, R14-2, before it).
//!
//! Why: the last close of a TCP socket with `SO_LINGER` set and bytes
//! unsent waits in `tcp_close` for the linger time (up to 2^31−1 s), except
//! in a task that is exiting: `inet_release` never lingers for a task with
//! `PF_EXITING`. A sandbox can reach such a close in ways no flag set
//! before it stops: the socket passed directly (with its linger set again
//! through a copy the sandbox kept), queued inside a passed Unix socket or
//! a passed listener's backlog, nested as deep as it likes, or queued on a
//! zero-length record the sandbox made itself: it sends the socket out of
//! band on one end of a pair, takes the out-of-band byte from the other
//! end (`recv(MSG_OOB)`), and passes that end. The kernel then frees the
//! record's descriptors inside the next ordinary read of that end and
//! never hands them to the reader, `SO_OOBINLINE` or not. The closer before
//! this one emptied each passed Unix socket by reading it, to reach what
//! was queued inside; such a read held it in `tcp_close` for the linger,
//! one thread per message a sandbox sent so.
//!
//! So nothing passed is read. The closer (closer.rs) starts a thread that
//! takes a private copy of the descriptor table (`unshare(CLONE_FILES)`);
//! the shared table's copies are then closed (each only a reference less)
//! and that thread exits. Its table is released in its exit, and every last
//! close that leads to — the passed sockets, whatever their queues and
//! backlogs hold, as deep as they nest — runs in the exiting thread's task
//! work, where the kernel waits for no linger. The private copy holds the
//! rest of the provider's table too, for the thread's few microseconds: a
//! descriptor the provider closes meanwhile is released when the thread
//! exits (the same as across any `fork` the provider makes).

use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};
use std::sync::mpsc;

use nix::sched::{unshare, CloneFlags};
use nix::sys::socket::{setsockopt, sockopt};

/// Closes `fds` so that no last close among them, or among what they hold,
/// waits for a linger (module doc). Blocks the calling thread only until
/// the exiting thread has its private table. `Err(fds)`: no thread could be
/// started, nothing was closed.
pub(crate) fn close_from_exiting_thread(fds: Vec<OwnedFd>) -> Result<(), Vec<OwnedFd>> {
    let (ready, unshared) = mpsc::sync_channel::<bool>(1);
    let (go, exit) = mpsc::sync_channel::<Option<Vec<OwnedFd>>>(1);
    let started = std::thread::Builder::new()
        .name("cordon-fd-exit".into())
        .stack_size(64 * 1024)
        .spawn(move || {
            let private = unshare(CloneFlags::CLONE_FILES).is_ok();
            let _ = ready.send(private);
            // Until the shared copies are closed: returning ends the thread,
            // and its table with it. Without a private table (`ENOMEM`, or
            // a seccomp filter that refuses `unshare`) the descriptors come
            // here and close on this thread, as every close did before G1:
            // a lingering socket then holds this thread, and only it.
            if let Ok(Some(fds)) = exit.recv() {
                drop(fds);
            }
        });
    if started.is_err() {
        return Err(fds);
    }
    if unshared.recv() == Ok(true) {
        drop(fds);
        let _ = go.send(None);
    } else if let Err(mpsc::SendError(Some(fds))) = go.send(Some(fds)) {
        // The thread is gone without taking them (it cannot panic first).
        return Err(fds);
    }
    Ok(())
}

/// `SO_LINGER {1, 0}`: the close resets instead of waiting for unsent data
/// (ENOTSOCK and the like for anything but a socket: nothing to do).
pub(crate) fn make_abortive(fd: BorrowedFd<'_>) {
    let abort = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    let _ = setsockopt(&fd, sockopt::Linger, &abort);
}

/// `SIOCOUTQ` (`TIOCOUTQ`) or `SIOCINQ` (`FIONREAD`) of `fd`; None on error.
/// On a Unix socket `SIOCOUTQ` is the memory of what it sent and its peer
/// has not received yet: zero-length records count too (see `unreceived`).
pub(crate) fn queued(fd: BorrowedFd<'_>, request: libc::Ioctl) -> Option<libc::c_int> {
    let mut n: libc::c_int = 0;
    // SAFETY: a valid descriptor and a pointer to a live c_int, the
    // argument both requests write.
    let rc = unsafe { libc::ioctl(fd.as_raw_fd(), request, std::ptr::addr_of_mut!(n)) };
    (rc == 0).then_some(n)
}
