//! The relay process: accept on the sandbox's 127.0.0.1:PORT and hand each
//! accepted connection's socket to the engine — one connection to the
//! engine socket per client, carrying one marker byte with the client's
//! socket attached (SCM_RIGHTS) — then close both. The engine relays the
//! program's socket itself, so the relay is in no stream's data path (a
//! copying relay added two process hops each way: issue 19 measured a
//! connect + 1-byte echo at 2.4× direct, 1.7× of it without the relay),
//! holds no buffer and no connection, and costs the sandbox one thread
//! and two descriptors whatever the number of streams.
//!
//! Nothing here panics or aborts on a per-connection failure: a client
//! whose hand-over fails is closed alone (it sees the connection end); out
//! of descriptors or memory, accepting pauses briefly and later connections
//! wait in the listen backlog, so each still reaches the engine.

use std::io::{self, IoSlice, Read};
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use nix::sys::socket::{sendmsg, ControlMessage, MsgFlags};

use crate::fds::close_all_but;

/// The byte sent with the client's socket (the engine's `HANDOFF_MARKER`).
const HANDOFF_MARKER: u8 = 0;
/// Pause after an accept or hand-over that failed for lack of descriptors
/// or memory, so the relay does not spin on a full backlog.
const RETRY: Duration = Duration::from_millis(100);

pub fn serve(listener: &TcpListener, engine: &Path) {
    close_all_but(listener.as_raw_fd());
    loop {
        let client = match listener.accept() {
            Ok((client, _)) => client,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) if e.kind() == io::ErrorKind::ConnectionAborted => continue,
            Err(e) => {
                if short_of_resources(&e) {
                    std::thread::sleep(RETRY);
                }
                continue;
            }
        };
        // Small proxy replies and request heads must not wait for Nagle
        // (the option is the socket's: it holds for the engine too).
        let _ = client.set_nodelay(true);
        // On failure the client is closed (it sees the connection end):
        // the engine stopped listening (its stream quota is spent), or the
        // relay is short of descriptors (then pause rather than repeat it).
        if let Err(e) = hand_over(&client, engine) {
            end_gracefully(&client);
            if short_of_resources(&e) {
                std::thread::sleep(RETRY);
            }
        }
    }
}

/// A FIN rather than a reset for a client the engine never took: what it
/// sent so far is drained first (closing with unread bytes resets).
fn end_gracefully(client: &TcpStream) {
    let _ = client.shutdown(std::net::Shutdown::Write);
    if client.set_nonblocking(true).is_err() {
        return;
    }
    let mut sink = [0u8; 4096];
    for _ in 0..16 {
        match (&*client).read(&mut sink) {
            Ok(n) if n > 0 => {}
            _ => return,
        }
    }
}

fn short_of_resources(e: &io::Error) -> bool {
    let errno = nix::errno::Errno::from_raw(e.raw_os_error().unwrap_or(0));
    matches!(
        errno,
        nix::errno::Errno::EMFILE
            | nix::errno::Errno::ENFILE
            | nix::errno::Errno::ENOBUFS
            | nix::errno::Errno::ENOMEM
    )
}

/// One connection to the engine, one marker byte carrying the client's
/// socket; both of the relay's copies close on return. The engine reads
/// the message even after this end closed.
fn hand_over(client: &TcpStream, engine: &Path) -> io::Result<()> {
    let channel = UnixStream::connect(engine)?;
    let fds = [client.as_raw_fd()];
    sendmsg::<()>(
        channel.as_raw_fd(),
        &[IoSlice::new(&[HANDOFF_MARKER])],
        &[ControlMessage::ScmRights(&fds)],
        MsgFlags::MSG_NOSIGNAL,
        None,
    )?;
    Ok(())
}
