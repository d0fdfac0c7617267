//! The sandbox's side of a proxy stream: the program's TCP connection to
//! the proxy port, accepted by the engine on the listener the relay handed
//! over (proxy_listener.rs), or a Unix connection the program opened to the
//! engine socket itself.
//!
//! A connection to the engine socket no longer hands a client's socket
//! over (one marker byte carrying it, SCM_RIGHTS): the relay stopped doing
//! so when the listener moved into the engine, and since 2026-12-06 the
//! engine socket refuses passed descriptors on every connection after the
//! relay's (run_engine.rs, Linux 6.16+; older kernels still deliver them,
//! and every one is neutralised). An adopted socket was the sandbox's as
//! much as the engine's, and what a sandbox passed was closed in the
//! provider, at a cost the sandbox chose (W26-1).

use std::io;
use std::os::fd::{AsFd, AsRawFd, RawFd};

use nix::sys::socket::{recv, send, MsgFlags};
use tokio::io::Interest;
use tokio::net::{TcpStream, UnixStream};

use crate::refusal::Refusal;
use crate::sandbox_socket::SandboxStream;

/// Bytes read by the first read of a connection.
const FIRST_READ_BYTES: usize = 4096;

/// The sandbox's side of one proxy stream.
pub enum ClientStream {
    /// Drained when dropped (sandbox_socket.rs, R5N-1).
    Unix(SandboxStream<UnixStream>),
    /// Accepted by the engine on the proxy port's listener: no one else
    /// holds this socket (proxy_listener.rs).
    Accepted(TcpStream),
}

/// Takes a new proxy connection with the first bytes read from it (a client
/// that speaks to the engine socket directly). Waits without a bound: the
/// caller's handshake deadline and the run's stop bound it. A connection
/// not kept is closed off this thread ([`release_connection`]).
pub async fn take(unix: SandboxStream<UnixStream>) -> Result<(ClientStream, Vec<u8>), Refusal> {
    match first_message(&unix).await {
        Ok(bytes) => Ok((ClientStream::Unix(unix), bytes)),
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

/// The first bytes of a connection; descriptors that came with them (an
/// older kernel) are neutralised, and a connection that sent none is
/// refused.
async fn first_message(unix: &UnixStream) -> Result<Vec<u8>, Refusal> {
    loop {
        unix.readable().await.map_err(|_| Refusal::ProtocolError)?;
        let mut buf = vec![0u8; FIRST_READ_BYTES];
        let received = unix.try_io(Interest::READABLE, || {
            cordon_passed_fds::recv_neutralising(unix.as_fd(), &mut buf, MsgFlags::MSG_DONTWAIT)
        });
        let received = match received {
            Ok(got) => got,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return Err(Refusal::ProtocolError),
        };
        buf.truncate(received.bytes);
        if buf.is_empty() {
            return Err(Refusal::ProtocolError);
        }
        return Ok(buf);
    }
}

impl ClientStream {
    pub async fn readable(&self) -> io::Result<()> {
        match self {
            ClientStream::Unix(s) => s.readable().await,
            ClientStream::Accepted(s) => s.readable().await,
        }
    }

    pub async fn writable(&self) -> io::Result<()> {
        match self {
            ClientStream::Unix(s) => s.writable().await,
            ClientStream::Accepted(s) => s.writable().await,
        }
    }

    /// One non-blocking read (`WouldBlock` clears the readiness).
    pub fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            ClientStream::Unix(s) => crate::scm_rights::try_read_stream(s, buf),
            ClientStream::Accepted(s) => tcp_try_read(s, buf),
        }
    }

    /// One non-blocking read into the spare capacity of `buf` (empty on
    /// entry). A socket only the engine holds is read without zero-filling
    /// first; a Unix one keeps its descriptor check, through
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
            ClientStream::Accepted(s) => tcp_try_write(s, buf),
        }
    }

    pub fn raw(&self) -> RawFd {
        match self {
            ClientStream::Unix(s) => s.as_raw_fd(),
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
