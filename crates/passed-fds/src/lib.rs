//! Descriptors a sandbox passes to the host (SCM_RIGHTS) over a socket the
//! host reads: fd 3 (the launcher's protocol pump) and fd 4 (the egress
//! engine's channel).
//!
//! Why: a plain `read()` of such a socket makes the kernel drop any passed
//! descriptors in the reading thread, and dropping the last reference of a
//! TCP socket with `SO_LINGER` set and unsent data waits in `tcp_close` for
//! the linger time (up to 2^31−1 s). The pump thread then never sees EOF,
//! and the run never settles (round 4, R4-4). So the host always receives
//! with a control buffer that has room for every descriptor one message can
//! carry, makes each received socket's close abortive (`SO_LINGER {1, 0}`),
//! and closes them all on a detached thread that nothing joins, which first
//! empties each passed Unix socket whose queue could hold more of them
//! (settle.rs: the nested case, round 14). A close that still blocks (a
//! sandbox that kept a copy of a socket and set its linger again just
//! before the host's close, then closed its own) holds only that thread,
//! and only until the socket's peer in the sandbox is gone.

use std::io::{self, IoSliceMut};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

mod drain;
mod refuse;
mod settle;
pub use drain::{drain, drain_and_close, drain_listener};
pub use refuse::refuse_passed_descriptors;

use nix::sys::socket::{recvmsg, setsockopt, sockopt, ControlMessageOwned, MsgFlags};

/// The kernel's cap on descriptors in one message (`SCM_MAX_FD`). With room
/// for all of them the control data is never truncated (`MSG_CTRUNC`), so
/// the kernel never drops a passed descriptor itself, in this thread.
const SCM_MAX_FD: usize = 253;

/// What one receive got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Received {
    /// Bytes stored in the buffer (0 on a stream: end of stream).
    pub bytes: usize,
    /// A datagram was longer than the buffer (`MSG_TRUNC`).
    pub truncated: bool,
    /// Ancillary data came with the bytes; any descriptors in it are
    /// already neutralised.
    pub had_ancillary: bool,
}

/// Receives into `buf` from `socket` (`recvmsg` with `flags` plus
/// `MSG_CMSG_CLOEXEC`: a passed descriptor never reaches a process the host
/// forks meanwhile), and neutralises every descriptor that came with it.
pub fn recv_neutralising(
    socket: BorrowedFd<'_>,
    buf: &mut [u8],
    flags: MsgFlags,
) -> io::Result<Received> {
    let (received, passed) = receive(socket, buf, flags)?;
    neutralise(passed);
    Ok(received)
}

/// Receives like [`recv_neutralising`], but keeps the descriptor of a
/// message that carried exactly one (the in-sandbox relay handing the
/// engine a client's socket); with more, every one is neutralised. The
/// caller vets what it kept and closes it only through [`release_kept`].
pub fn recv_keeping_one(
    socket: BorrowedFd<'_>,
    buf: &mut [u8],
    flags: MsgFlags,
) -> io::Result<(Received, Option<OwnedFd>)> {
    let (received, mut passed) = receive(socket, buf, flags)?;
    if passed.len() == 1 {
        return Ok((received, passed.pop()));
    }
    neutralise(passed);
    Ok((received, None))
}

/// Closes a socket the sandbox passed and the host kept and used (a relayed
/// TCP client), gracefully — its queued bytes still go out, then a FIN —
/// and never on the calling thread. `SO_LINGER` is cleared first, so the
/// close does not wait for the peer; a sandbox that still holds a copy can
/// set it again before the close, so the close itself runs on a detached
/// thread that nothing joins (as in [`neutralise`]).
pub fn release_kept(fd: OwnedFd) {
    let graceful = libc::linger {
        l_onoff: 0,
        l_linger: 0,
    };
    let _ = setsockopt(&fd, sockopt::Linger, &graceful);
    let _ = std::thread::Builder::new()
        .name("cordon-fd-closer".into())
        .stack_size(64 * 1024)
        .spawn(move || drop(fd));
}

/// One `recvmsg`: the bytes, and every descriptor that came with them.
fn receive(
    socket: BorrowedFd<'_>,
    buf: &mut [u8],
    flags: MsgFlags,
) -> io::Result<(Received, Vec<OwnedFd>)> {
    let mut control = nix::cmsg_space!([RawFd; SCM_MAX_FD]);
    let mut iov = [IoSliceMut::new(buf)];
    let msg = recvmsg::<()>(
        socket.as_raw_fd(),
        &mut iov,
        Some(&mut control),
        flags | MsgFlags::MSG_CMSG_CLOEXEC,
    )?;
    let mut passed = Vec::new();
    let mut had_cmsg = false;
    // Err only with MSG_CTRUNC, which the buffer's size rules out for
    // descriptors; it still counts as ancillary data below.
    if let Ok(cmsgs) = msg.cmsgs() {
        for cmsg in cmsgs {
            had_cmsg = true;
            if let ControlMessageOwned::ScmRights(fds) = cmsg {
                // SAFETY: the kernel installed these descriptors in this
                // process for this message just now; nothing else knows
                // their numbers, so each is owned here exactly once.
                passed.extend(
                    fds.into_iter()
                        .map(|fd| unsafe { OwnedFd::from_raw_fd(fd) }),
                );
            }
        }
    }
    let received = Received {
        bytes: msg.bytes,
        truncated: msg.flags.contains(MsgFlags::MSG_TRUNC),
        had_ancillary: had_cmsg || msg.flags.contains(MsgFlags::MSG_CTRUNC),
    };
    Ok((received, passed))
}

/// Makes every socket among `fds` close abortively (`SO_LINGER {1, 0}`: a
/// reset, no wait for unsent data; other descriptors ignore it) and closes
/// them all on a detached thread, which empties the Unix sockets among them
/// first (settle.rs).
pub fn neutralise(fds: Vec<OwnedFd>) {
    if fds.is_empty() {
        return;
    }
    for fd in &fds {
        settle::make_abortive(fd.as_fd());
    }
    // If no thread can be started, the closure (and the descriptors) drops
    // here: with the linger cleared that is immediate but for the nested
    // case in settle.rs.
    let _ = std::thread::Builder::new()
        .name("cordon-fd-closer".into())
        .stack_size(64 * 1024)
        .spawn(move || settle::settle_and_close(fds));
}

#[cfg(test)]
mod tests;
