//! The upstream TCP connect, bounded by the connect deadline **and** the
//! run's cancellation: a non-blocking connect whose completion is awaited
//! with the same poll that watches the cancel pipe, so a run that ends while
//! a stream is still connecting (to an address that never answers) settles
//! at once instead of after the deadline.

use std::io;
use std::net::{SocketAddr, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

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
        Ok(false) => {
            let mut fds = [libc::pollfd {
                fd: socket.as_raw_fd(),
                events: libc::POLLOUT,
                revents: 0,
            }];
            match cancel.wait(&mut fds, deadline_after(timeout)) {
                Ok(Wake::Ready) => pending_error(&socket).map_err(ConnectError::Failed)?,
                Ok(Wake::Cancelled) => return Err(ConnectError::Cancelled),
                Ok(Wake::TimedOut) => return Err(ConnectError::TimedOut),
                Err(e) => return Err(ConnectError::Failed(e)),
            }
        }
        Err(e) => return Err(ConnectError::Failed(e)),
    }
    let stream = TcpStream::from(socket);
    stream
        .set_nonblocking(false)
        .map_err(ConnectError::Failed)?;
    Ok(stream)
}

fn nonblocking_socket(addr: &SocketAddr) -> io::Result<OwnedFd> {
    let domain = if addr.is_ipv4() {
        libc::AF_INET
    } else {
        libc::AF_INET6
    };
    // SAFETY: socket(2) with constant arguments; the result is checked before use.
    let fd = unsafe {
        libc::socket(
            domain,
            libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            0,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just returned by socket(2) and is owned by nothing else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Ok(true): connected at once; Ok(false): in progress.
fn start_connect(socket: &OwnedFd, addr: &SocketAddr) -> io::Result<bool> {
    let rc = match addr {
        SocketAddr::V4(v4) => {
            let sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: v4.port().to_be(),
                sin_addr: libc::in_addr {
                    s_addr: u32::from_ne_bytes(v4.ip().octets()),
                },
                sin_zero: [0; 8],
            };
            let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
            // SAFETY: `sin` is a fully initialised sockaddr_in of the stated length.
            unsafe {
                libc::connect(
                    socket.as_raw_fd(),
                    (&sin as *const libc::sockaddr_in).cast(),
                    len,
                )
            }
        }
        SocketAddr::V6(v6) => {
            let sin6 = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: v6.port().to_be(),
                sin6_flowinfo: v6.flowinfo(),
                sin6_addr: libc::in6_addr {
                    s6_addr: v6.ip().octets(),
                },
                sin6_scope_id: v6.scope_id(),
            };
            let len = std::mem::size_of::<libc::sockaddr_in6>() as libc::socklen_t;
            // SAFETY: `sin6` is a fully initialised sockaddr_in6 of the stated length.
            unsafe {
                libc::connect(
                    socket.as_raw_fd(),
                    (&sin6 as *const libc::sockaddr_in6).cast(),
                    len,
                )
            }
        }
    };
    if rc == 0 {
        return Ok(true);
    }
    let err = io::Error::last_os_error();
    match err.raw_os_error() {
        Some(libc::EINPROGRESS) | Some(libc::EINTR) => Ok(false),
        _ => Err(err),
    }
}

/// The connect's outcome once the socket is writable (SO_ERROR).
fn pending_error(socket: &OwnedFd) -> io::Result<()> {
    let mut value: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into `value`, an int.
    let rc = unsafe {
        libc::getsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_ERROR,
            (&mut value as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    if value != 0 {
        return Err(io::Error::from_raw_os_error(value));
    }
    Ok(())
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
