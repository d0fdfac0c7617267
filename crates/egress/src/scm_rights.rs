//! The fd-4 channel's datagram I/O: receive a request that must carry no
//! ancillary data, and send a response carrying exactly one descriptor via
//! SCM_RIGHTS (`nix`'s `recvmsg`/`sendmsg`, no hand-written cmsg walking).

use std::io::{self, IoSlice, IoSliceMut};
use std::os::fd::{AsRawFd, BorrowedFd, RawFd};

use nix::sys::socket::{recvmsg, sendmsg, ControlMessage, ControlMessageOwned, MsgFlags};

/// The kernel's cap on descriptors in one message (`SCM_MAX_FD`). The
/// control buffer has room for all of them, so a request that smuggles
/// descriptors is never truncated (MSG_CTRUNC): every one is received and
/// closed here instead of staying open in the engine's process.
const SCM_MAX_FD: usize = 253;

/// One received datagram.
#[derive(Debug)]
pub struct Received {
    pub bytes: Vec<u8>,
    /// The datagram was longer than the buffer.
    pub truncated: bool,
    /// Ancillary data was present (any descriptors in it are already closed).
    pub had_ancillary: bool,
}

/// Receives one datagram of at most `max` bytes (non-blocking callers poll first).
pub fn recv_datagram(socket: BorrowedFd<'_>, max: usize) -> io::Result<Received> {
    let mut buf = vec![0u8; max];
    let mut control = nix::cmsg_space!([RawFd; SCM_MAX_FD]);
    let (bytes, flags, had_cmsg) = {
        let mut iov = [IoSliceMut::new(&mut buf)];
        let msg = recvmsg::<()>(
            socket.as_raw_fd(),
            &mut iov,
            Some(&mut control),
            MsgFlags::MSG_CMSG_CLOEXEC | MsgFlags::MSG_DONTWAIT,
        )?;
        let mut had_cmsg = false;
        // Err only with MSG_CTRUNC, which the buffer's size rules out for
        // descriptors; it still counts as ancillary data below.
        if let Ok(cmsgs) = msg.cmsgs() {
            for cmsg in cmsgs {
                had_cmsg = true;
                if let ControlMessageOwned::ScmRights(fds) = cmsg {
                    close_all(&fds);
                }
            }
        }
        (msg.bytes, msg.flags, had_cmsg)
    };
    buf.truncate(bytes);
    Ok(Received {
        bytes: buf,
        truncated: flags.contains(MsgFlags::MSG_TRUNC),
        had_ancillary: had_cmsg || flags.contains(MsgFlags::MSG_CTRUNC),
    })
}

/// Closes descriptors the kernel just installed in this process for a
/// message nobody will act on: nothing else knows their numbers.
fn close_all(fds: &[RawFd]) {
    for &fd in fds {
        let _ = nix::unistd::close(fd);
    }
}

/// Sends `bytes` with `fd` attached (SCM_RIGHTS), or without when `fd` is None.
pub fn send_datagram(
    socket: BorrowedFd<'_>,
    bytes: &[u8],
    fd: Option<BorrowedFd<'_>>,
) -> io::Result<()> {
    let iov = [IoSlice::new(bytes)];
    let attached = fd.map(|fd| [fd.as_raw_fd()]);
    let cmsgs: Vec<ControlMessage<'_>> = attached
        .as_ref()
        .map(|fds| ControlMessage::ScmRights(fds))
        .into_iter()
        .collect();
    sendmsg::<()>(
        socket.as_raw_fd(),
        &iov,
        &cmsgs,
        MsgFlags::MSG_NOSIGNAL,
        None,
    )?;
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use std::os::fd::{AsFd, OwnedFd};
    use std::os::unix::net::UnixDatagram;

    #[test]
    fn smuggled_descriptors_are_all_closed_and_flagged() {
        let (sandbox, engine) = UnixDatagram::pair().unwrap();
        // 64 copies of a pipe's write end in one message (more than a small
        // control buffer holds). Once the receiver closed every one, the read
        // end sees EOF; a single copy left open would make it report EAGAIN.
        let (read_end, write_end) =
            nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC | nix::fcntl::OFlag::O_NONBLOCK)
                .unwrap();
        let copies: Vec<OwnedFd> = (0..64).map(|_| write_end.try_clone().unwrap()).collect();
        let raw: Vec<RawFd> = copies.iter().map(AsRawFd::as_raw_fd).collect();
        sendmsg::<()>(
            sandbox.as_raw_fd(),
            &[IoSlice::new(b"MECQ")],
            &[ControlMessage::ScmRights(&raw)],
            MsgFlags::empty(),
            None,
        )
        .unwrap();
        drop(copies);
        drop(write_end);
        let received = recv_datagram(engine.as_fd(), 64).unwrap();
        assert_eq!(received.bytes, b"MECQ");
        assert!(received.had_ancillary);
        assert!(!received.truncated);
        let mut buf = [0u8; 1];
        assert_eq!(
            nix::unistd::read(&read_end, &mut buf),
            Ok(0),
            "every received write end was closed"
        );
    }

    #[test]
    fn a_plain_datagram_has_no_ancillary_data_and_a_long_one_is_truncated() {
        let (sandbox, engine) = UnixDatagram::pair().unwrap();
        send_datagram(sandbox.as_fd(), b"0123456789", None).unwrap();
        let received = recv_datagram(engine.as_fd(), 4).unwrap();
        assert_eq!(received.bytes, b"0123");
        assert!(received.truncated);
        assert!(!received.had_ancillary);
    }
}
