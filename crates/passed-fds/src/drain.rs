//! Closing a socket the sandbox can write to (round 5, R5N-1).
//!
//! Why: closing a Unix socket purges its receive queue in the closing
//! thread, and with it every descriptor the sandbox queued there but the
//! host never received; the last reference of a TCP socket with
//! `SO_LINGER` set then waits in `tcp_close` for the linger time. Reads
//! already neutralise what they receive ([`crate::recv_neutralising`]);
//! this is the close: stop the sandbox from queueing more (`shutdown`, after
//! which its sends fail with `EPIPE` and its connects to a listener are
//! refused), receive — neutralising — whatever is queued, then close. A
//! thread that closes a socket after [`drain`] never drops a passed
//! descriptor itself.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};

use nix::sys::socket::{
    accept4, getsockopt, shutdown, sockopt, MsgFlags, Shutdown, SockFlag, SockType,
};

use crate::{neutralise, receive};

/// Bytes per drain receive: queued bytes are discarded; a larger buffer
/// only means fewer receives for a full stream queue.
const DRAIN_CHUNK: usize = 16 * 1024;
/// Receives before the shutdown: a sandbox that keeps sending while this
/// loop runs cannot hold the thread here (the shutdown then ends it).
const BEFORE_SHUTDOWN: usize = 4096;
/// Errors read through (one pending error is reported before the queue; a
/// socket that only errs, e.g. an unconnected one, ends the drain).
const MAX_ERRORS: usize = 8;
/// Empty reads a seqpacket socket is read through after its shutdown at
/// least: its empty queue and a zero-length record both read as 0.
const ZERO_RECORDS: usize = 4096;
/// The smallest skb a zero-length record costs its sender (768 bytes
/// measured on Linux 6.x; a margin below it).
const MIN_RECORD_SKB: usize = 512;
/// [`zero_records`] when `wmem_max` cannot be read (covers 64 MiB).
const ZERO_RECORDS_UNKNOWN: usize = 1 << 18;

/// Empty reads that outnumber the zero-length records any unprivileged
/// sender can queue: its send buffer is at most 2 × `net.core.wmem_max`
/// (`SO_SNDBUF` is capped there and doubled; only `SO_SNDBUFFORCE`, which
/// needs `CAP_NET_ADMIN` in the host, goes past it), plus the one record
/// that may overshoot. A fixed count was outnumbered on a host with a
/// raised `wmem_max` (round 16n, R16n-1: ~11 000 records at 4 MiB). Where
/// the caller holds the peer's copy, [`drain_with_peer`] reads to the real
/// end instead (the fd-4 channel).
pub(crate) fn zero_records() -> usize {
    static BOUND: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *BOUND.get_or_init(|| {
        std::fs::read_to_string("/proc/sys/net/core/wmem_max")
            .ok()
            .and_then(|text| text.trim().parse::<usize>().ok())
            .map_or(ZERO_RECORDS_UNKNOWN, |max| {
                (2 * max / MIN_RECORD_SKB + 2).max(ZERO_RECORDS)
            })
    })
}

/// Empties `socket`'s receive queue, neutralising every passed descriptor,
/// and shuts it down both ways so nothing more can be queued. Non-blocking;
/// bounded by what the queue held when the shutdown landed.
pub fn drain(socket: BorrowedFd<'_>) {
    drain_into(socket, EmptyRead::ByKind, &mut neutralise);
}

/// What a read of no bytes and no descriptors means on a drained socket.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum EmptyRead {
    /// Judged by the socket's kind ([`drain_into`]): a sandbox may have sent
    /// zero-length datagrams or records.
    ByKind,
    /// The end, whatever the kind: a seqpacket socket where only this
    /// process sends, and never an empty record (the fd-4 channel's sandbox
    /// end: [`drain_own_records_and_close`]).
    End,
}

/// [`drain`], handing each message's passed descriptors to `passed`
/// instead (the closer thread settles them itself: settle.rs); returns the
/// receives it made.
///
/// Empty is told apart from what only looks empty (round 15w, R15w-1): an
/// error is not the end (a datagram socket reports `ECONNRESET` once when
/// its peer went, before its queue); a zero-length datagram or record is
/// not either. Before the shutdown only `EAGAIN` is empty. After it a
/// datagram socket still reads `EAGAIN` when empty, a stream reads 0 (its
/// end: a stream has no zero-length messages), and a seqpacket socket reads
/// 0 either way, so it is read through up to [`zero_records`] empty reads
/// (more than its peer's send buffer can queue) — unless `empty` says a 0
/// read is the end.
pub(crate) fn drain_into(
    socket: BorrowedFd<'_>,
    empty: EmptyRead,
    passed: &mut dyn FnMut(Vec<OwnedFd>),
) -> usize {
    // An out-of-band byte's descriptors would be freed inside a read
    // instead of handed over (out_of_band.rs).
    crate::read_out_of_band_inline(socket);
    let kind = getsockopt(&socket, sockopt::SockType).ok();
    let zero_is_end = empty == EmptyRead::End || kind == Some(SockType::Stream);
    let mut buf = vec![0u8; DRAIN_CHUNK];
    let mut receives = 0;
    let mut recv = |buf: &mut [u8]| {
        receives += 1;
        receive(socket, buf, MsgFlags::MSG_DONTWAIT).map(|(received, fds)| {
            passed(fds);
            received
        })
    };
    let (mut errors, mut ended) = (0, false);
    for _ in 0..BEFORE_SHUTDOWN {
        match recv(&mut buf) {
            Ok(r) if zero_is_end && r.bytes == 0 && !r.had_ancillary => {
                ended = true; // the peer is gone: nothing can follow
                break;
            }
            Ok(_) => {}
            Err(e) if e.raw_os_error() == Some(libc::EAGAIN) => break,
            Err(_) => {
                errors += 1;
                if errors > MAX_ERRORS {
                    break;
                }
            }
        }
    }
    let _ = shutdown(socket.as_raw_fd(), Shutdown::Both);
    if ended {
        return receives;
    }
    // What raced in before the shutdown (a finite queue from now on).
    let (mut zeros, mut errors) = (0, 0);
    loop {
        match recv(&mut buf) {
            Ok(r) if r.bytes > 0 || r.had_ancillary => zeros = 0,
            Ok(_) if zero_is_end => break, // a stream's end, or a socket only we send to
            Ok(_) => match kind {
                Some(SockType::Datagram) => {} // a zero-length datagram; empty is EAGAIN
                Some(SockType::SeqPacket) if zeros < zero_records() => zeros += 1,
                _ => break, // a seqpacket socket read through
            },
            Err(e) if e.raw_os_error() == Some(libc::EAGAIN) => break,
            Err(_) => {
                errors += 1;
                if errors > MAX_ERRORS {
                    break;
                }
            }
        }
    }
    receives
}

/// Bytes (skb memory) `sender` has sent that its connected peer has not
/// received: 0 exactly when the peer's receive queue holds nothing of it,
/// zero-length records included (each costs its skb). None on error.
pub fn unreceived(sender: BorrowedFd<'_>) -> Option<usize> {
    crate::settle::queued(sender, libc::TIOCOUTQ).and_then(|n| usize::try_from(n).ok())
}

/// [`drain`] for a seqpacket socket whose peer's copy the caller holds
/// (the fd-4 channel: round 16n, R16n-1): after the shutdown its empty
/// queue and a zero-length record both read as 0, and a peer with a large
/// send buffer (`SO_SNDBUF` up to 2 × `wmem_max`) can queue more of them
/// than any fixed number of empty reads, so the end is where the peer has
/// nothing left unreceived ([`unreceived`]), not a count.
pub fn drain_with_peer(socket: BorrowedFd<'_>, peer: BorrowedFd<'_>) {
    let _ = shutdown(socket.as_raw_fd(), Shutdown::Both);
    let mut buf = vec![0u8; DRAIN_CHUNK];
    // Each receive takes one record, so `unreceived` falls with every one;
    // reads that leave it where it was (nothing of the peer's queued here)
    // end the loop after a few, as errors do.
    let mut stalls = 0;
    while let Some(left) = unreceived(peer).filter(|&n| n > 0) {
        match receive(socket, &mut buf, MsgFlags::MSG_DONTWAIT) {
            Ok((_, fds)) => neutralise(fds),
            Err(e) if e.raw_os_error() == Some(libc::EAGAIN) => break,
            Err(_) => {}
        }
        if unreceived(peer).is_some_and(|now| now >= left) {
            stalls += 1;
            if stalls > MAX_ERRORS {
                break;
            }
        }
    }
}

/// [`drain`], then the close itself on the detached closer thread: for a
/// socket closed once per run (a datagram channel, whose queue a
/// zero-length datagram can hide the rest of from [`drain`]).
pub fn drain_and_close(socket: OwnedFd) {
    drain(socket.as_fd());
    crate::neutralise(vec![socket]);
}

/// [`drain_and_close`] for a seqpacket socket whose every record was sent
/// by this process and is never empty (the sandbox's end of the fd-4
/// channel: only its peer, the engine's end, can queue there, and every
/// reply is 8 bytes). A 0 read is its end, as on a stream, so the drain
/// stops there. [`drain`] instead reads a seqpacket
/// socket through `BEFORE_SHUTDOWN` + [`zero_records`] empty reads, because
/// a sandbox sender may queue zero-length records. On this socket that was
/// ~20 000 `recvmsg` calls and ~15 ms on every mediated run's teardown.
/// Non-blocking; bounded by what the queue held when the shutdown landed.
pub fn drain_own_records_and_close(socket: OwnedFd) {
    drain_own_records(socket.as_fd());
    crate::neutralise(vec![socket]);
}

/// The drain of [`drain_own_records_and_close`]; returns the receives it
/// made.
pub(crate) fn drain_own_records(socket: BorrowedFd<'_>) -> usize {
    drain_into(socket, EmptyRead::End, &mut neutralise)
}

/// For a listening Unix socket the sandbox can connect to: refuses new
/// connections (`shutdown`), then accepts and [`drain`]s each connection
/// still in its backlog — a connection not yet accepted has a queue of its
/// own, purged when the listener closes. Non-blocking.
pub fn drain_listener(listener: BorrowedFd<'_>) {
    accept_all(listener, &mut |conn| drain(conn.as_fd()));
}

/// [`drain_listener`], handing each connection still in the backlog to
/// `accepted` (the closer thread settles it itself: settle.rs).
pub(crate) fn accept_all(listener: BorrowedFd<'_>, accepted: &mut dyn FnMut(OwnedFd)) {
    let _ = shutdown(listener.as_raw_fd(), Shutdown::Read);
    loop {
        match accept4(listener, SockFlag::SOCK_CLOEXEC | SockFlag::SOCK_NONBLOCK) {
            Ok(conn) => accepted(conn),
            Err(nix::errno::Errno::EINTR) => {}
            Err(_) => return,
        }
    }
}
