//! The sandbox's side of a proxy stream: the Unix connection the sandbox
//! opened to the engine socket, or — handed over on that connection by the
//! in-sandbox relay (one marker byte carrying one descriptor, SCM_RIGHTS) —
//! the program's own TCP connection to the relay's 127.0.0.1 listener. The
//! relay then leaves the data path: one process hop less each way (issue 19:
//! a connect + 1-byte echo through a copying relay cost 2.4× direct).
//!
//! A passed socket is the sandbox's as much as the engine's: the sandbox may
//! keep a copy and change the shared file's flags and options at any time.
//! So every read and write of it is `MSG_DONTWAIT` (a cleared `O_NONBLOCK`
//! cannot block a runtime worker), and it is closed only through
//! `cordon_passed_fds::release_kept`, off the runtime's threads, behind a
//! second reference the engine held the whole time (an `SO_LINGER` set
//! later cannot block a worker in `tcp_close` either: round 4, R4-4).

use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};

use nix::sys::socket::{
    getsockname, getsockopt, recv, send, setsockopt, sockopt, AddressFamily, MsgFlags, SockType,
    SockaddrLike, SockaddrStorage,
};
use tokio::io::Interest;
use tokio::net::{TcpStream, UnixStream};

use crate::refusal::Refusal;
use crate::sandbox_socket::SandboxStream;

/// The byte the relay sends with the client's socket attached.
pub const HANDOFF_MARKER: u8 = 0;
/// Bytes read by the first read of a connection that does not hand over.
const FIRST_READ_BYTES: usize = 4096;

/// The sandbox's side of one proxy stream.
pub enum ClientStream {
    /// Drained when dropped (sandbox_socket.rs, R5N-1).
    Unix(SandboxStream<UnixStream>),
    Passed(PassedTcp),
    /// Accepted by the engine on the proxy port's listener: no one else
    /// holds this socket (proxy_listener.rs).
    Accepted(TcpStream),
}

/// A TCP socket the relay handed over (see the module doc).
pub struct PassedTcp {
    stream: Option<TcpStream>,
    /// A second reference: the registered one is closed first (never the
    /// last reference, so that close cannot wait), this one off-thread.
    last_reference: Option<OwnedFd>,
}

impl Drop for PassedTcp {
    fn drop(&mut self) {
        drop(self.stream.take());
        if let Some(fd) = self.last_reference.take() {
            cordon_passed_fds::release_kept(fd);
        }
    }
}

/// Takes a new proxy connection: the socket the relay handed over on it, or
/// the connection itself with the first bytes read from it (a client that
/// speaks to the engine socket directly). Waits without a bound: the
/// caller's handshake deadline and the run's stop bound it. A connection
/// not kept is closed off this thread ([`release_connection`]).
pub async fn take(unix: SandboxStream<UnixStream>) -> Result<(ClientStream, Vec<u8>), Refusal> {
    let taken = first_message(&unix).await;
    match taken {
        Ok(FirstMessage::Bytes(bytes)) => Ok((ClientStream::Unix(unix), bytes)),
        Ok(FirstMessage::Handoff(passed)) => {
            release_connection(unix);
            Ok((ClientStream::Passed(passed), Vec::new()))
        }
        Err(refusal) => {
            release_connection(unix);
            Err(refusal)
        }
    }
}

/// Closes a proxy connection: its queue may hold descriptors the sandbox
/// sent after its first message, and the kernel drops those in whichever
/// thread closes it (R4-4, R5N-1). The wrapper's drop shuts it down (the
/// peer can queue nothing more) and receives what is queued through
/// `cordon_passed_fds` — each passed socket made abortive and closed on the
/// closer thread — so the close here drops nothing the sandbox passed.
pub fn release_connection(unix: SandboxStream<UnixStream>) {
    drop(unix);
}

enum FirstMessage {
    Bytes(Vec<u8>),
    Handoff(PassedTcp),
}

async fn first_message(unix: &UnixStream) -> Result<FirstMessage, Refusal> {
    loop {
        unix.readable().await.map_err(|_| Refusal::ProtocolError)?;
        let mut buf = vec![0u8; FIRST_READ_BYTES];
        let received = unix.try_io(Interest::READABLE, || {
            cordon_passed_fds::recv_keeping_one(unix.as_fd(), &mut buf, MsgFlags::MSG_DONTWAIT)
        });
        let (received, kept) = match received {
            Ok(got) => got,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return Err(Refusal::ProtocolError),
        };
        buf.truncate(received.bytes);
        return match kept {
            Some(fd) if buf == [HANDOFF_MARKER] => PassedTcp::adopt(fd)
                .map(FirstMessage::Handoff)
                .ok_or(Refusal::ProtocolError),
            kept => {
                // Not a hand-over: whatever came along is neutralised.
                if let Some(fd) = kept {
                    cordon_passed_fds::neutralise(vec![fd]);
                }
                if buf.is_empty() {
                    return Err(Refusal::ProtocolError);
                }
                Ok(FirstMessage::Bytes(buf))
            }
        };
    }
}

impl PassedTcp {
    /// Only a TCP stream socket (IPv4 or IPv6) is carried; anything else the
    /// sandbox passed is neutralised and the attempt refused.
    fn adopt(fd: OwnedFd) -> Option<Self> {
        let is_tcp = getsockopt(&fd, sockopt::SockType).ok() == Some(SockType::Stream)
            && getsockname::<SockaddrStorage>(fd.as_raw_fd())
                .ok()
                .and_then(|a| a.family())
                .is_some_and(|f| matches!(f, AddressFamily::Inet | AddressFamily::Inet6));
        let second = if is_tcp { fd.try_clone().ok() } else { None };
        let Some(second) = second else {
            cordon_passed_fds::neutralise(vec![fd]);
            return None;
        };
        // Small replies must not wait for Nagle (the relay sets it too).
        let _ = setsockopt(&fd, sockopt::TcpNoDelay, &true);
        let std = std::net::TcpStream::from(fd);
        let registered = std
            .set_nonblocking(true)
            .and_then(|()| TcpStream::from_std(std));
        match registered {
            Ok(stream) => Some(Self {
                stream: Some(stream),
                last_reference: Some(second),
            }),
            Err(_) => {
                cordon_passed_fds::release_kept(second);
                None
            }
        }
    }

    fn stream(&self) -> io::Result<&TcpStream> {
        self.stream
            .as_ref()
            .ok_or_else(|| io::ErrorKind::NotConnected.into())
    }
}

impl ClientStream {
    pub async fn readable(&self) -> io::Result<()> {
        match self {
            ClientStream::Unix(s) => s.readable().await,
            ClientStream::Passed(p) => p.stream()?.readable().await,
            ClientStream::Accepted(s) => s.readable().await,
        }
    }

    pub async fn writable(&self) -> io::Result<()> {
        match self {
            ClientStream::Unix(s) => s.writable().await,
            ClientStream::Passed(p) => p.stream()?.writable().await,
            ClientStream::Accepted(s) => s.writable().await,
        }
    }

    /// One non-blocking read (`WouldBlock` clears the readiness).
    pub fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            ClientStream::Unix(s) => crate::scm_rights::try_read_stream(s, buf),
            ClientStream::Passed(p) => tcp_try_read(p.stream()?, buf),
            ClientStream::Accepted(s) => tcp_try_read(s, buf),
        }
    }

    /// One non-blocking read into the spare capacity of `buf` (empty on
    /// entry). A socket only the engine holds is read without zero-filling
    /// first; a passed one keeps `MSG_DONTWAIT` (its holder may clear
    /// `O_NONBLOCK`), a Unix one keeps its descriptor check, both through
    /// [`Self::try_read`] on a zero-filled buffer.
    pub fn try_read_buf(&self, buf: &mut Vec<u8>) -> io::Result<usize> {
        if let ClientStream::Accepted(s) = self {
            return s.try_read_buf(buf);
        }
        buf.resize(buf.capacity(), 0);
        let read = self.try_read(buf);
        buf.truncate(*read.as_ref().unwrap_or(&0));
        read
    }

    /// One non-blocking write (`WouldBlock` clears the readiness).
    pub fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        match self {
            ClientStream::Unix(s) => s.try_write(buf),
            ClientStream::Passed(p) => tcp_try_write(p.stream()?, buf),
            ClientStream::Accepted(s) => tcp_try_write(s, buf),
        }
    }

    pub fn raw(&self) -> RawFd {
        match self {
            ClientStream::Unix(s) => s.as_raw_fd(),
            ClientStream::Passed(p) => p.stream.as_ref().map_or(-1, |s| s.as_raw_fd()),
            ClientStream::Accepted(s) => s.as_raw_fd(),
        }
    }
}

/// `MSG_DONTWAIT`: whatever the shared file's `O_NONBLOCK` says.
fn tcp_try_read(s: &TcpStream, buf: &mut [u8]) -> io::Result<usize> {
    s.try_io(Interest::READABLE, || {
        Ok(recv(s.as_raw_fd(), buf, MsgFlags::MSG_DONTWAIT)?)
    })
}

/// `MSG_DONTWAIT` as above; `MSG_NOSIGNAL`: a reset peer is an error, not SIGPIPE.
fn tcp_try_write(s: &TcpStream, buf: &[u8]) -> io::Result<usize> {
    let flags = MsgFlags::MSG_DONTWAIT | MsgFlags::MSG_NOSIGNAL;
    s.try_io(Interest::WRITABLE, || Ok(send(s.as_raw_fd(), buf, flags)?))
}
