//! The fd-4 channel's datagram I/O: receive a request that must carry no
//! ancillary data, and send a response carrying exactly one descriptor via
//! SCM_RIGHTS (`nix`'s `sendmsg`; receiving through `cordon_passed_fds`,
//! which neutralises whatever the sandbox attached).

use std::io::{self, IoSlice};
use std::os::fd::{AsRawFd, BorrowedFd};

use cordon_passed_fds::recv_neutralising;
use nix::sys::socket::{sendmsg, ControlMessage, MsgFlags};

/// One received datagram.
#[derive(Debug)]
pub struct Received {
    pub bytes: Vec<u8>,
    /// The datagram was longer than the buffer.
    pub truncated: bool,
    /// Ancillary data was present (any descriptors in it are already
    /// neutralised: see `cordon_passed_fds`).
    pub had_ancillary: bool,
}

/// Receives one datagram of at most `max` bytes (non-blocking callers poll
/// first). Descriptors the sandbox attached are never closed on this thread
/// (a runtime worker): a passed TCP socket with `SO_LINGER` set would block
/// it in `tcp_close` for the linger time (round 4, R4-4).
pub fn recv_datagram(socket: BorrowedFd<'_>, max: usize) -> io::Result<Received> {
    let mut buf = vec![0u8; max];
    let received = recv_neutralising(socket, &mut buf, MsgFlags::MSG_DONTWAIT)?;
    buf.truncate(received.bytes);
    Ok(Received {
        bytes: buf,
        truncated: received.truncated,
        had_ancillary: received.had_ancillary,
    })
}

/// One non-blocking read of a Unix stream the sandbox writes to (its proxy
/// connection, its end of an fd-4 stream): bytes can carry SCM_RIGHTS on a
/// stream too, and a plain `read` would have the kernel drop them here.
pub fn try_read_stream(stream: &tokio::net::UnixStream, buf: &mut [u8]) -> io::Result<usize> {
    use std::os::fd::AsFd;
    stream.try_io(tokio::io::Interest::READABLE, || {
        recv_neutralising(stream.as_fd(), buf, MsgFlags::MSG_DONTWAIT).map(|r| r.bytes)
    })
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
    use std::os::fd::{AsFd, OwnedFd, RawFd};
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
        // Closed on a detached closer thread (cordon_passed_fds): wait for
        // EOF, bounded.
        let mut buf = [0u8; 1];
        let mut fds = [nix::poll::PollFd::new(
            read_end.as_fd(),
            nix::poll::PollFlags::POLLIN,
        )];
        nix::poll::poll(&mut fds, 5000u16).unwrap();
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
