//! The upstream TCP connect, bounded by the connect deadline. The run's
//! cancellation is the caller's `select!` (every stream task races its work
//! against it), so a run that ends while a stream is still connecting to an
//! address that never answers settles at once instead of after the deadline.

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use tokio::net::{TcpSocket, TcpStream};

/// How a connect attempt ended without a stream.
#[derive(Debug)]
pub enum ConnectError {
    TimedOut,
    Failed(io::Error),
}

pub async fn connect(addr: SocketAddr, timeout: Duration) -> Result<TcpStream, ConnectError> {
    let socket = match addr {
        SocketAddr::V4(_) => TcpSocket::new_v4(),
        SocketAddr::V6(_) => TcpSocket::new_v6(),
    }
    .map_err(ConnectError::Failed)?;
    match tokio::time::timeout(timeout, socket.connect(addr)).await {
        Ok(Ok(stream)) => Ok(stream),
        Ok(Err(e)) => Err(ConnectError::Failed(e)),
        Err(_) => Err(ConnectError::TimedOut),
    }
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

    #[test]
    fn a_refused_port_fails() {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port(); // closed again
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        assert!(matches!(
            runtime().block_on(connect(addr, Duration::from_secs(5))),
            Err(ConnectError::Failed(_))
        ));
    }
}
