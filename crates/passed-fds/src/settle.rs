//! What the closer thread does with the descriptors a sandbox passed
//! before it closes them (rounds 14 and 14w: R14-1, R14-2).
//!
//! Why: `SO_LINGER {1, 0}` reaches only the sockets passed directly. A
//! passed Unix socket whose queue holds a lingering TCP socket with unsent
//! data and that socket's never-reading peer drops both when its last
//! reference closes, in the closing thread: `tcp_close` then waits for the
//! linger time (up to 2^31−1 s), holding the closer thread and everything
//! passed beside it, once per message. So every passed Unix socket is
//! emptied first — shut down so nothing more is queued, its queue received,
//! a listener's backlog accepted — and what that yields is settled in turn,
//! on this thread, as deep as the sockets nest (the kernel no longer bounds
//! the nesting: measured here, 6.18), until each close finds nothing to
//! wait for.
//!
//! Left alone: a socket whose peer this process created (a socketpair end
//! or a connection to one of its listeners: fd 3, the fd-4 channel, an fd-4
//! stream, an engine connection). It is one of the sandbox's own channel
//! ends passed back to the host; only the host queues into it (bytes, and
//! on the fd-4 channel the host's own stream ends), and emptying it would
//! cut the program off from its own channel (the egress engine's
//! "ancillary fds" tests pass one). The one such socket that is a datagram
//! socket, and so could be bound and written to by others, is the fd-4
//! channel, which the engine holds and empties itself when the run ends.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};

use nix::sys::socket::{
    getsockname, getsockopt, setsockopt, sockopt, AddressFamily, SockaddrLike, SockaddrStorage,
};

use crate::drain::{accept_all, drain_into, EmptyRead};

/// Sockets one closer thread empties (those passed, every one found queued
/// inside them, each connection accepted from a passed listener's backlog):
/// a bound on one thread's work whatever a sandbox queued. Past it the rest
/// goes, still unemptied, to a fresh closer thread ([`crate::neutralise`])
/// rather than being closed here unemptied (round 15w, R15w-3): the work is
/// finite (what was queued when each socket was shut down), only split.
const MAX_EMPTIED: usize = 65_536;

/// Settles and closes `fds`: each is emptied (if it is a foreign Unix
/// socket), made abortive again right before its close (a sandbox holding a
/// copy may have set `SO_LINGER` since), and closed; what emptying yields
/// joins the work list. Depth-first, so a socket's queue is settled before
/// its siblings and few descriptors are held at once; a listener's backlog
/// is accepted one connection at a time, each emptied and closed before the
/// next (round 15w, R15w-4: accepting it whole first held tens of thousands
/// of descriptors in the provider's table). Sockets that could still linger
/// ([`could_linger`]) close last, after every socket that cannot: a
/// lingering socket's never-reading peer passed beside it then closes
/// first, and its reset ends the other's wait, in whatever order the
/// sandbox passed them.
pub(crate) fn settle_and_close(fds: Vec<OwnedFd>) {
    let mut pending = fds;
    let mut last = Vec::new();
    let mut emptied = 0usize;
    while let Some(fd) = pending.pop() {
        if emptied >= MAX_EMPTIED {
            pending.push(fd);
            pending.append(&mut last);
            crate::neutralise(pending);
            return;
        }
        if is_foreign_unix_socket(fd.as_fd()) {
            emptied += 1 + empty_into(fd.as_fd(), &mut pending);
        }
        make_abortive(fd.as_fd());
        if could_linger(fd.as_fd()) {
            last.push(fd);
        } else {
            drop(fd);
        }
    }
    for fd in last {
        make_abortive(fd.as_fd());
        drop(fd);
    }
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

/// Receives everything queued in `socket` after shutting it, adding each
/// passed descriptor to `pending`; for a listener, accepts its backlog one
/// connection at a time, empties it the same way and closes it (a Unix
/// connection's close cannot wait once its queue is empty). Returns the
/// connections so emptied.
fn empty_into(socket: BorrowedFd<'_>, pending: &mut Vec<OwnedFd>) -> usize {
    if !matches!(getsockopt(&socket, sockopt::AcceptConn), Ok(true)) {
        drain_into(socket, EmptyRead::ByKind, &mut |fds| pending.extend(fds));
        return 0;
    }
    let mut connections = 0;
    accept_all(socket, &mut |conn| {
        connections += 1;
        drain_into(conn.as_fd(), EmptyRead::ByKind, &mut |fds| {
            pending.extend(fds)
        });
        drop(conn);
    });
    connections
}

/// A close that may wait: bytes not yet sent (`SIOCOUTQ` > 0) and none
/// received unread (`SIOCINQ` = 0; with unread bytes `tcp_close` resets at
/// once, linger or not). Errors (not a socket) read as false.
fn could_linger(fd: BorrowedFd<'_>) -> bool {
    matches!(queued(fd, libc::TIOCOUTQ), Some(n) if n > 0) && queued(fd, libc::FIONREAD) == Some(0)
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

/// A Unix socket (the only kind that can queue descriptors) whose peer this
/// process did not create (see the module doc).
fn is_foreign_unix_socket(fd: BorrowedFd<'_>) -> bool {
    let unix = getsockname::<SockaddrStorage>(fd.as_raw_fd())
        .is_ok_and(|addr| addr.family() == Some(AddressFamily::Unix));
    unix && !peer_is_this_process(fd)
}

/// Made by this process: `SO_PEERCRED` names it (a socketpair end made
/// here, or a connection to a listener it made; an unconnected socket
/// reads pid 0), or the socket belongs to one of its pair makers' network
/// namespaces (sandbox_pair.rs), where no sandbox can make one.
fn peer_is_this_process(fd: BorrowedFd<'_>) -> bool {
    getsockopt(&fd, sockopt::PeerCredentials)
        .is_ok_and(|cred| i64::from(cred.pid()) == i64::from(std::process::id()))
        || crate::sandbox_pair::made_here(fd)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::os::fd::AsFd;

    use super::could_linger;

    #[test]
    fn only_a_socket_with_unsent_bytes_and_nothing_unread_could_linger() {
        let (sender, receiver) = crate::tests::lingering_pair();
        assert!(
            could_linger(sender.as_fd()),
            "unsent bytes, nothing to read"
        );
        assert!(
            !could_linger(receiver.as_fd()),
            "unread bytes: closes with a reset"
        );
        let file = std::fs::File::open("/dev/null").unwrap();
        assert!(!could_linger(file.as_fd()), "not a socket");
    }
}
