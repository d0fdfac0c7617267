//! The fd-4 channel's socket: one `AF_UNIX SOCK_SEQPACKET` pair, made here
//! so the launcher, the engine and the tests agree on its type.
//!
//! Why seqpacket and not datagram (round 15w, R15w-6): the pair used to be
//! made in the provider's network namespace, where the host's abstract Unix
//! names live, and a connected *datagram* socket can still `connect` again
//! or `sendto` any address, so a program could write through its fd 4 to a
//! host service listening on an abstract datagram socket. The pair is now
//! made in an empty namespace (round 16b, R16b-2), and seqpacket stays: a
//! program's fd 4 reaches its engine and nothing else either way. A seqpacket
//! socket keeps the datagram's message boundaries but is bound to its peer
//! for good: `connect` fails (`EISCONN`) and the kernel ignores a `sendto`
//! address (`unix_seqpacket_sendmsg`), so the engine is the only socket fd 4
//! can ever reach. Its sandbox end also gets an automatic name before the
//! hand-over, so it cannot take an abstract name either.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::{Arc, Mutex};

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::socket::{getsockopt, sockopt, SockType};

/// The channel's pair: `(engine end, sandbox end)`, both close-on-exec, the
/// sandbox end already named (`cordon_passed_fds::take_automatic_name`).
/// Made in an empty network namespace (`cordon_passed_fds::sandbox_pair`,
/// round 16b, R16b-2), so that no host name can be probed through it.
pub fn pair() -> io::Result<(OwnedFd, OwnedFd)> {
    pair_in().map(|(engine, sandbox, _)| (engine, sandbox))
}

/// [`pair`], and where it was made: the receipt's
/// `confinement.channels.fd4Namespace` (the provider's own namespace when
/// no pair maker could be made at that moment).
pub fn pair_in() -> io::Result<(OwnedFd, OwnedFd, cordon_passed_fds::ChannelNamespace)> {
    let (engine, sandbox, namespace) = cordon_passed_fds::sandbox_pair_in(SockType::SeqPacket)?;
    // No request carries descriptors (one that does is malformed): where the
    // kernel can (6.16+), sending any fails at the sender, so none is ever
    // received, neutralised or closed here. Before, 12 runs sending 253 per
    // request kept the engine busy with them and stalled other runs' streams
    // for seconds (black-box round of 2026-12-06).
    let _ = cordon_passed_fds::refuse_passed_descriptors(engine.as_fd());
    Ok((engine, sandbox, namespace))
}

/// Whether `fd` is a channel end of the kind `pair` makes: the engine
/// refuses any other (a datagram one would reopen R15w-6).
pub fn is_channel(fd: &OwnedFd) -> bool {
    getsockopt(fd, sockopt::SockType).ok() == Some(SockType::SeqPacket)
}

/// Whether the program can send nothing more on the channel (it shut its
/// end down for writing). A seqpacket socket then reads as zero-length
/// records forever, which would otherwise be taken for junk requests (each
/// a receipt and a quota slot) until the quota ran out. A real zero-length
/// record leaves `POLLRDHUP` clear; the engine's copy of the sandbox end
/// (`RunEngine::hold_fd4_peer`) keeps a plain exit from reading as this.
pub fn peer_shut_down(fd: BorrowedFd<'_>) -> bool {
    // nix names no POLLRDHUP; the kernel's bit (unix_dgram_poll sets it on
    // RCV_SHUTDOWN, which a peer's SHUT_WR sets on a seqpacket socket).
    let rdhup = PollFlags::from_bits_retain(nix::libc::POLLRDHUP);
    let mut fds = [PollFd::new(fd, rdhup)];
    if poll(&mut fds, PollTimeout::ZERO) != Ok(1) {
        return false;
    }
    match fds[0].revents() {
        // nix's `from_bits` refuses a bit it does not name: POLLRDHUP, the
        // only such bit asked for.
        None => true,
        Some(r) => r.contains(PollFlags::POLLHUP),
    }
}

/// The engine's copy of the sandbox's end (`RunEngine::hold_fd4_peer`),
/// shared with the task serving the channel until `finish` takes it.
pub(crate) type PeerCopy = Arc<Mutex<Option<OwnedFd>>>;

/// Nothing more can come on the channel: the program shut its end down for
/// writing, and every record it sent has been received (`unreceived` on the
/// peer's copy; round 16n, R16n-2: a zero-length record still queued after
/// the shutdown was taken for the end, and the records behind it got no
/// receipt). Checked before each receive: after the shutdown no record can
/// be added, so the two checks cannot be raced. Without a peer copy (an
/// engine embedded without one) the shutdown alone is all that is known.
pub(crate) fn ended(channel: BorrowedFd<'_>, peer: &PeerCopy) -> bool {
    if !peer_shut_down(channel) {
        return false;
    }
    match peer.lock() {
        Ok(copy) => copy
            .as_ref()
            .is_none_or(|p| cordon_passed_fds::unreceived(p.as_fd()) == Some(0)),
        Err(_) => true,
    }
}

/// What the program has queued on the channel and the engine has not
/// received yet (`unreceived` on the peer's copy); `None` without a copy.
pub(crate) fn queued(peer: &PeerCopy) -> Option<usize> {
    let copy = peer.lock().ok()?;
    cordon_passed_fds::unreceived(copy.as_ref()?.as_fd())
}

/// Whether an empty read (zero bytes, no ancillary data) was the channel's
/// end rather than a zero-length record: nothing was queued just before the
/// read (`queued_before`), and now the program has shut its end down with
/// nothing left. [`ended`] before the read does not settle it alone: the
/// program can shut down between that check and the read, which then
/// returns the end (0 bytes) and was taken for one more junk request (a
/// third `protocol-error` receipt in network.test.js, CI run 74). A record
/// sent and the channel shut down in that same gap reads as the end too:
/// that junk record then has no receipt.
pub(crate) fn empty_read_was_the_end(
    channel: BorrowedFd<'_>,
    peer: &PeerCopy,
    queued_before: Option<usize>,
) -> bool {
    queued_before == Some(0) && ended(channel, peer)
}

/// Empties the engine's end and closes it off this thread: to the real end
/// of what the program queued when the peer's copy is there (round 16n,
/// R16n-1: a count of empty reads can be outnumbered by zero-length
/// records), else as any socket the sandbox writes to.
pub(crate) fn close(channel: OwnedFd, peer: &PeerCopy) {
    if let Ok(copy) = peer.lock() {
        if let Some(p) = copy.as_ref() {
            cordon_passed_fds::drain_with_peer(channel.as_fd(), p.as_fd());
            cordon_passed_fds::neutralise(vec![channel]);
            return;
        }
    }
    cordon_passed_fds::drain_and_close(channel);
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use nix::errno::Errno;
    use nix::sys::socket::{accept, bind, connect, listen, recv, sendto, socket, Backlog};
    use nix::sys::socket::{socketpair, AddressFamily, MsgFlags, SockFlag, UnixAddr};
    use std::os::fd::AsRawFd;

    fn bound(kind: SockType, name: &str) -> (OwnedFd, UnixAddr) {
        let addr = UnixAddr::new_abstract(name.as_bytes()).unwrap();
        let flags = SockFlag::SOCK_CLOEXEC | SockFlag::SOCK_NONBLOCK;
        let socket = socket(AddressFamily::Unix, kind, flags, None).unwrap();
        bind(socket.as_raw_fd(), &addr).unwrap();
        (socket, addr)
    }

    /// The property the type is chosen for: host sockets on abstract names
    /// in this namespace get nothing through the sandbox end — a datagram
    /// one nothing by `sendto`, a seqpacket listener no connection — and
    /// what `sendto` sends reaches the engine end instead.
    #[test]
    fn the_sandbox_end_reaches_the_engine_and_nothing_else() {
        let tag = std::process::id();
        let (datagram, datagram_addr) = bound(SockType::Datagram, &format!("cordon-fd4-d-{tag}"));
        let (listener, listener_addr) = bound(SockType::SeqPacket, &format!("cordon-fd4-l-{tag}"));
        listen(&listener, Backlog::new(4).unwrap()).unwrap();
        let (engine, sandbox) = pair().unwrap();
        assert!(is_channel(&engine) && is_channel(&sandbox));
        let raw = sandbox.as_raw_fd();
        // A host listener of that name and no name at all look the same
        // from the sandbox's end (round 16b, R16b-2: the pair is made in an
        // empty network namespace, where neither exists).
        let absent = UnixAddr::new_abstract(format!("cordon-fd4-none-{tag}").as_bytes()).unwrap();
        assert_eq!(connect(raw, &listener_addr), connect(raw, &absent));
        assert_eq!(
            accept(&listener).err(),
            Some(Errno::EAGAIN),
            "no connection"
        );
        assert!(connect(raw, &datagram_addr).is_err());
        assert_eq!(
            sendto(raw, b"x", &datagram_addr, MsgFlags::MSG_NOSIGNAL),
            Ok(1)
        );
        let mut buf = [0u8; 4];
        assert_eq!(
            recv(datagram.as_raw_fd(), &mut buf, MsgFlags::MSG_DONTWAIT),
            Err(Errno::EAGAIN),
            "the host's abstract datagram socket received nothing"
        );
        assert_eq!(
            recv(engine.as_raw_fd(), &mut buf, MsgFlags::MSG_DONTWAIT),
            Ok(1)
        );
        assert_eq!(&buf[..1], b"x");
    }

    #[test]
    fn an_empty_read_is_the_end_only_when_nothing_was_queued_and_the_program_shut_down() {
        let (engine, sandbox) = pair().unwrap();
        let peer: PeerCopy = Arc::new(Mutex::new(Some(sandbox.try_clone().unwrap())));
        let send_empty =
            || nix::sys::socket::send(sandbox.as_raw_fd(), b"", MsgFlags::MSG_NOSIGNAL);
        let read = || recv(engine.as_raw_fd(), &mut [0u8; 8], MsgFlags::MSG_DONTWAIT);
        // A zero-length record, no shutdown: data.
        assert_eq!(send_empty(), Ok(0));
        let before = queued(&peer);
        assert!(before.is_some_and(|n| n > 0), "{before:?}");
        assert_eq!(read(), Ok(0));
        assert!(!empty_read_was_the_end(engine.as_fd(), &peer, before));
        // A zero-length record, then the shutdown (before the engine read):
        // the read takes the record, which is still data.
        assert_eq!(send_empty(), Ok(0));
        nix::sys::socket::shutdown(sandbox.as_raw_fd(), nix::sys::socket::Shutdown::Write).unwrap();
        let before = queued(&peer);
        assert_eq!(read(), Ok(0));
        assert!(!empty_read_was_the_end(engine.as_fd(), &peer, before));
        // Nothing queued, shut down: the empty read is the end.
        let before = queued(&peer);
        assert_eq!(before, Some(0));
        assert_eq!(read(), Ok(0));
        assert!(empty_read_was_the_end(engine.as_fd(), &peer, before));
    }

    #[test]
    fn a_zero_length_record_is_not_a_shutdown_but_shutting_down_is() {
        let (engine, sandbox) = pair().unwrap();
        assert!(!peer_shut_down(engine.as_fd()));
        assert_eq!(
            nix::sys::socket::send(sandbox.as_raw_fd(), b"", MsgFlags::MSG_NOSIGNAL),
            Ok(0)
        );
        assert!(
            !peer_shut_down(engine.as_fd()),
            "a zero-length record is data"
        );
        nix::sys::socket::shutdown(sandbox.as_raw_fd(), nix::sys::socket::Shutdown::Write).unwrap();
        assert!(peer_shut_down(engine.as_fd()));
    }

    /// The same through a datagram pair, to show the test can fail: the
    /// host's socket receives what `sendto` sends.
    #[test]
    fn a_datagram_pair_would_reach_the_host_socket_and_is_not_a_channel() {
        let name = format!("cordon-fd4-dd-{}", std::process::id());
        let (datagram, addr) = bound(SockType::Datagram, &name);
        let (a, b) = socketpair(
            AddressFamily::Unix,
            SockType::Datagram,
            None,
            SockFlag::SOCK_CLOEXEC,
        )
        .unwrap();
        assert!(!is_channel(&a));
        assert_eq!(
            sendto(b.as_raw_fd(), b"y", &addr, MsgFlags::MSG_NOSIGNAL),
            Ok(1)
        );
        let mut buf = [0u8; 4];
        assert_eq!(
            recv(datagram.as_raw_fd(), &mut buf, MsgFlags::MSG_DONTWAIT),
            Ok(1)
        );
    }
}
