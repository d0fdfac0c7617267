//! A socket handed to a sandbox, bound to an automatic name first (round
//! 15w, R15w-6).
//!
//! Why: the provider makes the sandbox's fd 3, fd 4 and fd-4 stream ends
//! (socketpairs) in its own network namespace, and an abstract Unix name is
//! bound in the namespace of the socket, not of the process: a sandbox that
//! bound its fd 3 to a name took that name in the provider's namespace
//! (a host service binding it later got `EADDRINUSE`). A socket that already
//! has a name cannot be bound again (`EINVAL`), so each end is given the
//! kernel's automatic name (`bind` with the family alone) before it is
//! handed over. Nothing can reach a socket through that name: a connected
//! datagram socket takes datagrams only from its peer (`EPERM` for
//! others), a stream socket that does not listen refuses connections.

use std::os::fd::{AsRawFd, BorrowedFd};

use nix::sys::socket::{bind, UnixAddr};

/// Binds `socket` (a Unix socket without a name) to an automatic abstract
/// name; false if the kernel refused (the caller then refuses to hand it
/// over: a sandbox could take a name with it).
pub fn take_automatic_name(socket: BorrowedFd<'_>) -> bool {
    // The family alone: the kernel picks the name (unix(7), "autobind").
    bind(socket.as_raw_fd(), &UnixAddr::new_unnamed()).is_ok()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::os::fd::{AsFd, AsRawFd};
    use std::os::unix::net::{UnixDatagram, UnixStream};

    use super::take_automatic_name;

    /// Binds `fd` to the abstract name `name` (what a sandbox would try).
    fn bind_abstract(fd: i32, name: &[u8]) -> nix::Result<()> {
        nix::sys::socket::bind(fd, &nix::sys::socket::UnixAddr::new_abstract(name)?)
    }

    #[test]
    fn a_named_end_cannot_be_bound_to_a_name_of_the_sandboxs_choosing() {
        let name = format!("cordon-test-squat-{}", std::process::id());
        let (_host, sandbox) = UnixStream::pair().unwrap();
        assert!(take_automatic_name(sandbox.as_fd()));
        assert!(bind_abstract(sandbox.as_raw_fd(), name.as_bytes()).is_err());
        // Control: an end without a name takes it.
        let (_host, bare) = UnixStream::pair().unwrap();
        assert!(bind_abstract(bare.as_raw_fd(), name.as_bytes()).is_ok());
    }

    #[test]
    fn a_named_connected_datagram_end_takes_datagrams_only_from_its_peer() {
        let (host, sandbox) = UnixDatagram::pair().unwrap();
        assert!(take_automatic_name(sandbox.as_fd()));
        let name = sandbox.local_addr().unwrap();
        let stranger = UnixDatagram::unbound().unwrap();
        use std::os::linux::net::SocketAddrExt;
        let abstract_name = name.as_abstract_name().unwrap().to_vec();
        let to = std::os::unix::net::SocketAddr::from_abstract_name(&abstract_name).unwrap();
        assert!(stranger.send_to_addr(b"forged", &to).is_err());
        host.send(b"real").unwrap();
        let mut buf = [0u8; 8];
        assert_eq!(sandbox.recv(&mut buf).unwrap(), 4);
    }
}
