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
//! and hands them to the closer (closer.rs), which closes them off the
//! receiving thread, from a thread that exits holding their last
//! references, where the kernel waits for no linger (settle.rs: whatever
//! they hold queued inside, and a copy the sandbox kept to set the linger
//! again, G1).
use std::io;
use std::mem::size_of;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

mod closer;
mod drain;
mod name_taken;
mod out_of_band;
mod refuse;
mod sandbox_pair;
mod settle;
pub use drain::{
    drain, drain_and_close, drain_listener, drain_own_records_and_close, drain_with_peer,
    unreceived,
};
pub use name_taken::take_automatic_name;
pub use out_of_band::read_out_of_band_inline;
pub use refuse::refuse_passed_descriptors;
pub use sandbox_pair::{
    pair_namespace, sandbox_pair, sandbox_pair_in, ChannelNamespace, PairNamespace,
};

use nix::sys::socket::{setsockopt, sockopt, MsgFlags};

/// The kernel's cap on descriptors in one message (`SCM_MAX_FD`). With room
/// for all of them the control data is never truncated (`MSG_CTRUNC`), so
/// the kernel never drops a passed descriptor itself, in this thread.
const SCM_MAX_FD: usize = 253;
/// The control buffer, in u64 words: room for one SCM_RIGHTS header with
/// [`SCM_MAX_FD`] descriptors (16 + 253 × 4 bytes) and then some.
const CONTROL_WORDS: usize = (16 + SCM_MAX_FD * 4) / 8 + 8;

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
/// set it again before the close, which the exiting thread's close ignores
/// (as in [`neutralise`]).
pub fn release_kept(fd: OwnedFd) {
    let graceful = libc::linger {
        l_onoff: 0,
        l_linger: 0,
    };
    let _ = setsockopt(&fd, sockopt::Linger, &graceful);
    closer::hand_over(vec![fd]);
}

/// One `recvmsg`: the bytes, and every descriptor that came with them.
///
/// Read from the control buffer directly rather than through nix's
/// iterator, which yields nothing once `MSG_CTRUNC` is set: when this
/// process is short of descriptor slots the kernel installs the passed
/// descriptors that fit, sets `MSG_CTRUNC` and drops the rest, and the
/// installed ones are still in the buffer (round 15, R15-1: skipped, they
/// stayed open, each cut-short message taking every free slot for good).
fn receive(
    socket: BorrowedFd<'_>,
    buf: &mut [u8],
    flags: MsgFlags,
) -> io::Result<(Received, Vec<OwnedFd>)> {
    // u64s: the control buffer must be aligned for cmsghdr.
    let mut control = [0u64; CONTROL_WORDS];
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // SAFETY: a zeroed msghdr is a valid empty one; filled in below.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&control);
    let flags = (flags | MsgFlags::MSG_CMSG_CLOEXEC).bits();
    // SAFETY: msg points at live buffers of the lengths it states (buf via
    // iov, control), which the kernel writes only during the call.
    let bytes = unsafe { libc::recvmsg(socket.as_raw_fd(), &mut msg, flags) };
    if bytes < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut passed = Vec::new();
    let mut had_cmsg = false;
    // SAFETY: the kernel filled msg_control up to msg_controllen; the CMSG
    // macros walk only within it, and each SCM_RIGHTS header's data holds
    // (cmsg_len - CMSG_LEN(0)) / 4 descriptors installed in this process for
    // this message just now: nothing else knows their numbers, so each is
    // owned here exactly once.
    unsafe {
        let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
        while !cmsg.is_null() {
            had_cmsg = true;
            let header = &*cmsg;
            if header.cmsg_level == libc::SOL_SOCKET && header.cmsg_type == libc::SCM_RIGHTS {
                let data = libc::CMSG_DATA(cmsg).cast::<RawFd>();
                let count = (header.cmsg_len - libc::CMSG_LEN(0) as usize) / size_of::<RawFd>();
                for i in 0..count {
                    passed.push(OwnedFd::from_raw_fd(std::ptr::read_unaligned(data.add(i))));
                }
            }
            cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
        }
    }
    let truncated_control = msg.msg_flags & libc::MSG_CTRUNC != 0;
    let received = Received {
        bytes: usize::try_from(bytes).unwrap_or(0),
        truncated: msg.msg_flags & libc::MSG_TRUNC != 0,
        had_ancillary: had_cmsg || truncated_control,
    };
    Ok((received, passed))
}

/// Makes every socket among `fds` close abortively (`SO_LINGER {1, 0}`: a
/// reset, no wait for unsent data; other descriptors ignore it) and hands
/// them to the closer, which closes them off the calling thread (closer.rs,
/// settle.rs).
pub fn neutralise(fds: Vec<OwnedFd>) {
    if fds.is_empty() {
        return;
    }
    for fd in &fds {
        settle::make_abortive(fd.as_fd());
    }
    closer::hand_over(fds);
}

#[cfg(test)]
mod tests;
