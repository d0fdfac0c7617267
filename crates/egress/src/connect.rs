//! The upstream TCP connect, bounded by the connect deadline. The run's
//! cancellation is the caller's `select!` (every stream task races its work
//! against it), so a run that ends while a stream is still connecting to an
//! address that never answers settles at once instead of after the deadline.
//!
//! A loopback (or any fast) connect is usually complete by the time
//! `connect(2)` returns `EINPROGRESS`: the handshake ran in the calling
//! thread's softirq. tokio's `TcpSocket::connect` would still wait for the
//! reactor to report the socket writable — a return to the scheduler, an
//! `epoll_wait` and a wake-up of the other worker for every stream (bench
//! section 8's attribution, docs/network.md). So a zero-timeout `poll(2)`
//! looks first; only a connect still in progress waits for the reactor.

use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsFd, OwnedFd};
use std::time::Duration;

use nix::errno::Errno;
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::socket::{
    self, setsockopt, sockopt, AddressFamily, SockFlag, SockType, SockaddrStorage,
};
use tokio::net::TcpStream;

/// How a connect attempt ended without a stream.
#[derive(Debug)]
pub enum ConnectError {
    TimedOut,
    Failed(io::Error),
}

pub async fn connect(addr: SocketAddr, timeout: Duration) -> Result<TcpStream, ConnectError> {
    let (fd, in_progress) = start(addr).map_err(ConnectError::Failed)?;
    if in_progress && !settled(&fd) {
        let stream = register(fd).map_err(ConnectError::Failed)?;
        return match tokio::time::timeout(timeout, stream.writable()).await {
            Ok(Ok(())) => established(stream),
            Ok(Err(e)) => Err(ConnectError::Failed(e)),
            Err(_) => Err(ConnectError::TimedOut),
        };
    }
    established(register(fd).map_err(ConnectError::Failed)?)
}

/// A non-blocking socket with `TCP_NODELAY` (small proxy exchanges must not
/// wait for Nagle), its connect begun; true while still in progress.
fn start(addr: SocketAddr) -> io::Result<(OwnedFd, bool)> {
    let family = match addr {
        SocketAddr::V4(_) => AddressFamily::Inet,
        SocketAddr::V6(_) => AddressFamily::Inet6,
    };
    let flags = SockFlag::SOCK_NONBLOCK | SockFlag::SOCK_CLOEXEC;
    let fd = socket::socket(family, SockType::Stream, flags, None)?;
    let _ = setsockopt(&fd, sockopt::TcpNoDelay, &true);
    let target = SockaddrStorage::from(addr);
    match socket::connect(std::os::fd::AsRawFd::as_raw_fd(&fd), &target) {
        Ok(()) => Ok((fd, false)),
        Err(Errno::EINPROGRESS) => Ok((fd, true)),
        Err(e) => Err(e.into()),
    }
}

/// True when the connect has already ended, either way (writable, or an
/// error or hang-up reported): a zero-timeout poll, no wait.
fn settled(fd: &OwnedFd) -> bool {
    let mut fds = [PollFd::new(fd.as_fd(), PollFlags::POLLOUT)];
    matches!(poll(&mut fds, PollTimeout::ZERO), Ok(n) if n > 0)
}

fn register(fd: OwnedFd) -> io::Result<TcpStream> {
    TcpStream::from_std(std::net::TcpStream::from(fd))
}

/// The connect's result once it ended: `SO_ERROR`, and a peer (a socket
/// reported writable without one is not connected).
fn established(stream: TcpStream) -> Result<TcpStream, ConnectError> {
    if let Some(e) = stream.take_error().map_err(ConnectError::Failed)? {
        return Err(ConnectError::Failed(e));
    }
    stream.peer_addr().map_err(ConnectError::Failed)?;
    Ok(stream)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use std::net::TcpListener;
    use std::os::fd::AsRawFd;

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    #[test]
    fn a_loopback_connect_succeeds_and_carries_bytes() {
        use std::io::Read;
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let rt = runtime();
        let stream = rt.block_on(connect(addr, Duration::from_secs(5))).unwrap();
        let (mut peer, _) = listener.accept().unwrap();
        rt.block_on(async {
            stream.writable().await.unwrap();
            stream.try_write(b"hi").unwrap();
        });
        let mut buf = [0u8; 2];
        peer.read_exact(&mut buf).unwrap();
        assert_eq!(&buf, b"hi");
    }

    #[test]
    fn the_upstream_socket_has_nagle_off_from_the_start() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let stream = runtime()
            .block_on(connect(addr, Duration::from_secs(5)))
            .unwrap();
        assert!(stream.nodelay().unwrap());
    }

    #[test]
    fn a_refused_port_fails_with_connection_refused() {
        use nix::sys::socket::{
            bind, getsockname, socket, AddressFamily, SockFlag, SockType, SockaddrIn,
        };
        // Bound but never listening, and held for the whole test: the kernel
        // answers a SYN with a reset, and no parallel test can take the port
        // (a listener bound and dropped could be reused before the connect).
        let reserved = socket(
            AddressFamily::Inet,
            SockType::Stream,
            SockFlag::SOCK_CLOEXEC,
            None,
        )
        .unwrap();
        bind(reserved.as_raw_fd(), &SockaddrIn::new(127, 0, 0, 1, 0)).unwrap();
        let port = getsockname::<SockaddrIn>(reserved.as_raw_fd())
            .unwrap()
            .port();
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        match runtime().block_on(connect(addr, Duration::from_secs(5))) {
            Err(ConnectError::Failed(e)) => {
                assert_eq!(e.kind(), std::io::ErrorKind::ConnectionRefused)
            }
            other => panic!("expected a refused connect, got {other:?}"),
        }
        drop(reserved);
    }

    /// A loopback listener whose accept queue is full: the kernel drops a
    /// further SYN, so a connect to it stays in progress (as to an address
    /// that never answers).
    #[test]
    fn a_connect_that_never_completes_ends_at_its_deadline() {
        use nix::sys::socket::{
            bind, getsockname, listen, socket, AddressFamily, Backlog, SockFlag, SockType,
            SockaddrIn,
        };
        let listener = socket(
            AddressFamily::Inet,
            SockType::Stream,
            SockFlag::SOCK_CLOEXEC,
            None,
        )
        .unwrap();
        bind(listener.as_raw_fd(), &SockaddrIn::new(127, 0, 0, 1, 0)).unwrap();
        listen(&listener, Backlog::new(0).unwrap()).unwrap();
        let port = getsockname::<SockaddrIn>(listener.as_raw_fd())
            .unwrap()
            .port();
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let rt = runtime();
        let mut held = Vec::new();
        loop {
            match rt.block_on(connect(addr, Duration::from_millis(200))) {
                Ok(stream) => held.push(stream),
                Err(ConnectError::TimedOut) => break,
                Err(other) => panic!("filling the accept queue: {other:?}"),
            }
            assert!(held.len() < 16, "the accept queue never filled");
        }
    }
}
