//! The upstream TCP connect, bounded by the connect deadline **and** the
//! run's cancellation: a non-blocking connect whose completion is awaited
//! with the same poll that watches the cancel pipe, so a run that ends while
//! a stream is still connecting (to an address that never answers) settles
//! at once instead of after the deadline.

use std::io;
use std::net::{SocketAddr, TcpStream};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::time::Duration;

use nix::errno::Errno;
use nix::sys::socket::{
    getsockopt, socket, sockopt, AddressFamily, SockFlag, SockType, SockaddrStorage,
};

use crate::cancel::{deadline_after, CancelWatch, Wake};

/// How a connect attempt ended without a stream.
#[derive(Debug)]
pub enum ConnectError {
    TimedOut,
    Cancelled,
    Failed(io::Error),
}

pub fn connect(
    addr: SocketAddr,
    timeout: Duration,
    cancel: &CancelWatch,
) -> Result<TcpStream, ConnectError> {
    let socket = nonblocking_socket(&addr).map_err(ConnectError::Failed)?;
    match start_connect(&socket, &addr) {
        Ok(true) => {}
        Ok(false) => match cancel.writable(socket.as_fd(), deadline_after(timeout)) {
            Ok(Wake::Ready) => pending_error(&socket).map_err(ConnectError::Failed)?,
            Ok(Wake::Cancelled) => return Err(ConnectError::Cancelled),
            Ok(Wake::TimedOut) => return Err(ConnectError::TimedOut),
            Err(e) => return Err(ConnectError::Failed(e)),
        },
        Err(e) => return Err(ConnectError::Failed(e)),
    }
    let stream = TcpStream::from(socket);
    stream
        .set_nonblocking(false)
        .map_err(ConnectError::Failed)?;
    Ok(stream)
}

fn nonblocking_socket(addr: &SocketAddr) -> io::Result<OwnedFd> {
    let family = if addr.is_ipv4() {
        AddressFamily::Inet
    } else {
        AddressFamily::Inet6
    };
    Ok(socket(
        family,
        SockType::Stream,
        SockFlag::SOCK_NONBLOCK | SockFlag::SOCK_CLOEXEC,
        None,
    )?)
}

/// Ok(true): connected at once; Ok(false): in progress.
fn start_connect(socket: &OwnedFd, addr: &SocketAddr) -> io::Result<bool> {
    match nix::sys::socket::connect(socket.as_raw_fd(), &SockaddrStorage::from(*addr)) {
        Ok(()) => Ok(true),
        Err(Errno::EINPROGRESS | Errno::EINTR) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// The connect's outcome once the socket is writable (SO_ERROR).
fn pending_error(socket: &OwnedFd) -> io::Result<()> {
    match getsockopt(socket, sockopt::SocketError)? {
        0 => Ok(()),
        errno => Err(io::Error::from_raw_os_error(errno)),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::cancel::Canceller;
    use std::io::{Read, Write};
    use std::net::TcpListener;

    #[test]
    fn a_loopback_connect_succeeds_and_carries_bytes() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let c = Canceller::new().unwrap();
        let mut stream = connect(
            listener.local_addr().unwrap(),
            Duration::from_secs(5),
            &c.watch(),
        )
        .unwrap();
        let (mut peer, _) = listener.accept().unwrap();
        stream.write_all(b"hi").unwrap();
        let mut buf = [0u8; 2];
        peer.read_exact(&mut buf).unwrap();
        assert_eq!(&buf, b"hi");
    }

    /// A loopback listener whose accept queue is full, and the connections
    /// that fill it: the kernel drops a further SYN, so a connect to it stays
    /// in progress (as to an address that never answers).
    fn unanswering() -> (OwnedFd, Vec<TcpStream>, SocketAddr) {
        use nix::sys::socket::{bind, getsockname, listen, Backlog, SockaddrIn};
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
        let c = Canceller::new().unwrap();
        let mut held = Vec::new();
        loop {
            match connect(addr, Duration::from_millis(200), &c.watch()) {
                Ok(stream) => held.push(stream),
                Err(ConnectError::TimedOut) => break,
                Err(other) => panic!("filling the accept queue: {other:?}"),
            }
            assert!(held.len() < 16, "the accept queue never filled");
        }
        (listener, held, addr)
    }

    #[test]
    fn cancelling_ends_a_connect_that_is_still_in_progress() {
        let (_listener, _held, addr) = unanswering();
        let c = Canceller::new().unwrap();
        let watch = c.watch();
        let attempt = std::thread::spawn(move || connect(addr, Duration::from_secs(60), &watch));
        std::thread::sleep(Duration::from_millis(50));
        assert!(!attempt.is_finished(), "the connect is in progress");
        c.cancel();
        assert!(matches!(
            attempt.join().unwrap(),
            Err(ConnectError::Cancelled)
        ));
    }

    #[test]
    fn a_refused_port_fails() {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port(); // closed again
        let c = Canceller::new().unwrap();
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        assert!(matches!(
            connect(addr, Duration::from_secs(5), &c.watch()),
            Err(ConnectError::Failed(_))
        ));
    }
}
