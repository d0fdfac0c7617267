//! The proxy port's listener, accepted in the engine (issue 19). The
//! in-sandbox relay binds 127.0.0.1:PORT in the sandbox's network namespace
//! and hands that listening socket to the engine once, before the program
//! starts (the first connection to the engine socket: one marker byte with
//! the socket attached, SCM_RIGHTS, answered by one status byte). From then
//! on the engine accepts the program's connections itself: no process of
//! the sandbox is on a stream's connect path or data path (a relay that
//! accepted and handed over each connection cost one process wake-up and a
//! Unix round trip per connect).
//!
//! The passed descriptor is the sandbox's word, so it is vetted before it
//! is served: a listening (`SO_ACCEPTCONN`) TCP stream socket, IPv4, bound
//! to 127.0.0.1 and the run's proxy port, in the network namespace of the
//! process that passed it (never the provider's or another run's: the
//! engine would serve that namespace's clients under this run's policy).
//! Anything else is refused, neutralised, and the relay exits 125 — a
//! mediated run never starts without its frontend.
//!
//! The relay closes its copy before it execs the program, so no process of
//! the sandbox holds the listener. Should one hold a copy anyway (a relay
//! that kept it), what it can do to the shared socket is bounded here: a
//! listener it shuts down (accept fails `EINVAL`) ends this task — no
//! retry loop on a dead listener; options it sets (`SO_LINGER` is copied
//! into every accepted socket) are cleared on each accepted socket, which
//! only the engine holds; the listener itself is closed behind a second
//! reference, off the runtime's threads (`cordon_passed_fds::release_kept`).

use std::io;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::sync::Arc;

use nix::errno::Errno;
use nix::sys::socket::{
    getsockname, getsockopt, setsockopt, sockopt, MsgFlags, SockType, SockaddrIn,
};
use tokio::io::Interest;
use tokio::net::{TcpListener, TcpStream, UnixStream};

use crate::cancel::Alive;
use crate::client_stream::ClientStream;
use crate::network_receipt::{Frontend, StreamProtocol};
use crate::proxy_session::{self, Source};
use crate::refusal::Refusal;
use crate::run_engine::ACCEPT_BACKOFF;
use crate::sandbox_socket::SandboxStream;
use crate::stream_attempt::{until_cancelled, Attempt, RunContext};

/// The byte the relay sends with its listening socket attached.
pub const LISTENER_MARKER: u8 = 1;
/// The engine's answer: serving the listener.
pub const LISTENER_ACCEPTED: u8 = 0;
/// The engine's answer: the descriptor was refused (the relay exits 125).
pub const LISTENER_REFUSED: u8 = 1;

/// Why a passed descriptor is not served as the proxy listener.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ListenerRefusal {
    #[error("the first message on the engine socket carried no listener")]
    Missing,
    #[error("not a TCP stream socket")]
    NotTcp,
    #[error("not listening")]
    NotListening,
    #[error("not bound to 127.0.0.1:{0}")]
    WrongAddress(u16),
    #[error("not in the network namespace of the process that passed it")]
    ForeignNamespace,
}

/// The vetted listener: the registered socket, and a second reference so
/// the last close happens off the runtime's threads.
pub struct ProxyListener {
    listener: Option<TcpListener>,
    last_reference: Option<OwnedFd>,
}

impl Drop for ProxyListener {
    fn drop(&mut self) {
        drop(self.listener.take());
        if let Some(fd) = self.last_reference.take() {
            cordon_passed_fds::release_kept(fd);
        }
    }
}

/// Vets `fd` (the module doc's rules); `relay` is the connection it came on.
pub fn vet(fd: BorrowedFd<'_>, relay: BorrowedFd<'_>, port: u16) -> Result<(), ListenerRefusal> {
    if getsockopt(&fd, sockopt::SockType).ok() != Some(SockType::Stream)
        || getsockopt(&fd, sockopt::TcpNoDelay).is_err()
    {
        return Err(ListenerRefusal::NotTcp);
    }
    if getsockopt(&fd, sockopt::AcceptConn).ok() != Some(true) {
        return Err(ListenerRefusal::NotListening);
    }
    let bound = getsockname::<SockaddrIn>(fd.as_raw_fd()).ok();
    let expected = SocketAddrV4::new(Ipv4Addr::LOCALHOST, port);
    if bound.map(SocketAddrV4::from) != Some(expected) {
        return Err(ListenerRefusal::WrongAddress(port));
    }
    match (socket_namespace(fd), peer_namespace(relay)) {
        (Ok(socket), Ok(peer)) if socket == peer => Ok(()),
        _ => Err(ListenerRefusal::ForeignNamespace),
    }
}

/// (device, inode) of the network namespace a socket belongs to.
fn socket_namespace(fd: BorrowedFd<'_>) -> io::Result<(u64, u64)> {
    // SAFETY: SIOCGSKNS takes no argument; it returns a new descriptor for
    // the socket's network namespace, or -1. `fd` is borrowed for the call.
    let ns = unsafe { nix::libc::ioctl(fd.as_raw_fd(), nix::libc::SIOCGSKNS) };
    if ns < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `ns` was just returned by the kernel to this thread and is
    // owned by nothing else.
    let ns = unsafe { OwnedFd::from_raw_fd(ns) };
    let stat = nix::sys::stat::fstat(&ns)?;
    Ok((stat.st_dev, stat.st_ino))
}

/// (device, inode) of the network namespace of the process at the other
/// end of `relay` (it waits for our answer, so its pid is still its own).
fn peer_namespace(relay: BorrowedFd<'_>) -> io::Result<(u64, u64)> {
    let cred = getsockopt(&relay, sockopt::PeerCredentials)?;
    let stat = nix::sys::stat::stat(format!("/proc/{}/ns/net", cred.pid()).as_str())?;
    Ok((stat.st_dev, stat.st_ino))
}

/// Receives the relay's listener on its connection (bounded by the
/// handshake deadline and the stop) and answers it. `None`: refused.
pub async fn receive(
    ctx: &RunContext,
    relay: SandboxStream<UnixStream>,
    port: u16,
) -> Option<ProxyListener> {
    let received = tokio::time::timeout(ctx.handshake_timeout, first_descriptor(&relay));
    let vetted = match until_cancelled(ctx, received).await {
        Some(Ok(Ok(Some(fd)))) => match vet(fd.as_fd(), relay.as_fd(), port) {
            Ok(()) => Ok(fd),
            Err(refusal) => {
                cordon_passed_fds::neutralise(vec![fd]); // never closed here
                Err(refusal)
            }
        },
        _ => Err(ListenerRefusal::Missing),
    };
    let answer = match &vetted {
        Ok(_) => LISTENER_ACCEPTED,
        Err(_) => LISTENER_REFUSED,
    };
    // One byte into an empty socket buffer: it cannot block.
    let _ = relay.try_write(&[answer]);
    let fd = match vetted {
        Ok(fd) => fd,
        Err(_) => return None,
    };
    let Ok(second) = fd.try_clone() else {
        cordon_passed_fds::neutralise(vec![fd]);
        return None;
    };
    let std = std::net::TcpListener::from(fd);
    match std
        .set_nonblocking(true)
        .and_then(|()| TcpListener::from_std(std))
    {
        Ok(listener) => Some(ProxyListener {
            listener: Some(listener),
            last_reference: Some(second),
        }),
        Err(_) => {
            cordon_passed_fds::release_kept(second);
            None
        }
    }
}

/// The descriptor of the first message, if it is the listener marker with
/// exactly one descriptor (anything else that came along is neutralised).
async fn first_descriptor(relay: &UnixStream) -> io::Result<Option<OwnedFd>> {
    loop {
        relay.readable().await?;
        let mut byte = [0u8; 1];
        let got = relay.try_io(Interest::READABLE, || {
            cordon_passed_fds::recv_keeping_one(relay.as_fd(), &mut byte, MsgFlags::MSG_DONTWAIT)
        });
        match got {
            Ok((received, Some(fd))) if received.bytes == 1 && byte[0] == LISTENER_MARKER => {
                return Ok(Some(fd))
            }
            Ok((_, Some(fd))) => {
                cordon_passed_fds::neutralise(vec![fd]);
                return Ok(None);
            }
            Ok((_, None)) => return Ok(None),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
}

/// Accepts the program's connections until the stop, the stream count is
/// spent (then the listener closes: later connects are refused by the
/// kernel), or the listener dies.
pub async fn serve(ctx: Arc<RunContext>, listener: ProxyListener, _alive: Alive) {
    let Some(tcp) = listener.listener.as_ref() else {
        return;
    };
    loop {
        let accepted = tokio::select! {
            biased;
            _ = ctx.cancel.cancelled() => return,
            accepted = tcp.accept() => accepted,
        };
        let client = match accepted {
            Ok((client, _)) => client,
            Err(e) => match Errno::from_raw(e.raw_os_error().unwrap_or(0)) {
                // Not listening any more (shut down by a copy's holder):
                // accept would fail at once, forever.
                Errno::EINVAL | Errno::EBADF | Errno::ENOTSOCK => return,
                Errno::ECONNABORTED | Errno::EINTR | Errno::EAGAIN => continue,
                _ => {
                    tokio::select! {
                        _ = ctx.cancel.cancelled() => return,
                        _ = tokio::time::sleep(ACCEPT_BACKOFF) => continue,
                    }
                }
            },
        };
        // Inherited from the listener, which a copy's holder could set.
        let no_linger = nix::libc::linger {
            l_onoff: 0,
            l_linger: 0,
        };
        let _ = setsockopt(&client, sockopt::Linger, &no_linger);
        // Small proxy replies and request heads must not wait for Nagle.
        let _ = client.set_nodelay(true);
        if !start_session(&ctx, client) {
            return;
        }
    }
}

/// One task per accepted connection, its stream slot taken at accept.
/// False when the stream count is spent for good (stop accepting).
fn start_session(ctx: &Arc<RunContext>, client: TcpStream) -> bool {
    let slot = match ctx.quota.open_stream() {
        Ok(slot) => slot,
        Err(refusal) => {
            Attempt::begin(ctx, Frontend::Proxy, StreamProtocol::Unknown).refuse(ctx, refusal);
            end_gracefully(&client);
            return refusal != Refusal::QuotaStreams;
        }
    };
    let Some(alive) = ctx.tasks.guard() else {
        return false;
    };
    let session_ctx = Arc::clone(ctx);
    tokio::spawn(ctx.timed(async move {
        let _held = (slot, alive);
        let source = Source::Accepted(ClientStream::Accepted(client));
        proxy_session::serve(session_ctx, source).await;
    }));
    true
}

/// A FIN rather than a reset for a client refused at accept: what it sent
/// so far is read first (closing with unread bytes resets).
fn end_gracefully(client: &TcpStream) {
    let _ = nix::sys::socket::shutdown(client.as_raw_fd(), nix::sys::socket::Shutdown::Write);
    let mut sink = [0u8; 4096];
    for _ in 0..16 {
        match client.try_read(&mut sink) {
            Ok(n) if n > 0 => {}
            _ => return,
        }
    }
}
