//! Copies bytes both ways between the sandbox's side of a stream and the
//! upstream TCP connection, on one thread, with bounded buffers.
//!
//! Both sockets are non-blocking and one `poll` drives both directions, so a
//! peer that stops reading never blocks the other direction (no deadlock with
//! echo-style servers). EOF is propagated as a half-close (`shutdown(Write)`)
//! once that direction's buffer is drained. Every byte is charged to the
//! run's quota before it is forwarded; a spent quota or the run's
//! cancellation ends the stream.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;

use nix::poll::PollFlags;

use crate::cancel::{CancelWatch, Wake};
use crate::network_receipt::StreamEnd;
use crate::quota::{Direction, QuotaState};

/// Per-direction buffer (128 KiB: large enough for loopback throughput,
/// small enough that 32 concurrent streams cost 8 MiB).
pub const RELAY_BUFFER_BYTES: usize = 128 * 1024;

/// Bytes actually delivered each way, and why the stream ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RelayOutcome {
    pub bytes_from_client: u64,
    pub bytes_to_client: u64,
    pub end: StreamEnd,
}

/// One direction: read side → buffer → write side.
struct Pipe {
    buf: Vec<u8>,
    start: usize,
    end: usize,
    read_eof: bool,
    shut_down: bool,
    delivered: u64,
    direction: Direction,
}

impl Pipe {
    fn new(direction: Direction, prefill: &[u8]) -> Self {
        let mut buf = vec![0; RELAY_BUFFER_BYTES.max(prefill.len())];
        buf[..prefill.len()].copy_from_slice(prefill);
        Self {
            buf,
            start: 0,
            end: prefill.len(),
            read_eof: false,
            shut_down: false,
            delivered: 0,
            direction,
        }
    }
    fn pending(&self) -> bool {
        self.start < self.end
    }
    fn wants_read(&self) -> bool {
        !self.read_eof && !self.pending()
    }
    fn done(&self) -> bool {
        self.shut_down
    }
}

enum Step {
    Continue,
    End(StreamEnd),
}

/// Relays until both directions reach EOF, an error, a quota, or cancellation.
/// `prefill` holds client bytes already read (the ClientHello, a rewritten
/// forward head); the caller has charged nothing for them yet.
pub fn relay(
    client: &UnixStream,
    upstream: &TcpStream,
    prefill: &[u8],
    quota: &QuotaState,
    cancel: &CancelWatch,
) -> RelayOutcome {
    let granted = grant(quota, Direction::Out, prefill.len());
    let mut out = Pipe::new(Direction::Out, &prefill[..granted]);
    let mut inbound = Pipe::new(Direction::In, &[]);
    let end = (|| {
        if client.set_nonblocking(true).is_err() || upstream.set_nonblocking(true).is_err() {
            return StreamEnd::Error;
        }
        if granted < prefill.len() {
            out.delivered += write_tail(upstream, &out.buf[..granted]);
            return StreamEnd::QuotaBytesOut;
        }
        loop {
            if out.done() && inbound.done() {
                return StreamEnd::Closed;
            }
            let fds = [
                (
                    client.as_fd(),
                    interest(out.wants_read(), inbound.pending()),
                ),
                (
                    upstream.as_fd(),
                    interest(inbound.wants_read(), out.pending()),
                ),
            ];
            match cancel.wait(&fds, None) {
                Ok(Wake::Ready) => {}
                Ok(Wake::Cancelled) => return StreamEnd::Cancelled,
                Ok(Wake::TimedOut) | Err(_) => return StreamEnd::Error,
            }
            for step in [
                pump(&mut out, client, upstream, quota),
                pump(&mut inbound, upstream, client, quota),
            ] {
                if let Step::End(end) = step {
                    return end;
                }
            }
        }
    })();
    let _ = client.shutdown(Shutdown::Both);
    let _ = upstream.shutdown(Shutdown::Both);
    RelayOutcome {
        bytes_from_client: out.delivered,
        bytes_to_client: inbound.delivered,
        end,
    }
}

fn interest(read: bool, write: bool) -> PollFlags {
    let mut events = PollFlags::empty();
    events.set(PollFlags::POLLIN, read);
    events.set(PollFlags::POLLOUT, write);
    events
}

fn grant(quota: &QuotaState, direction: Direction, wanted: usize) -> usize {
    let granted = quota.grant_bytes(direction, wanted as u64);
    usize::try_from(granted).unwrap_or(0)
}

/// The socket operations the relay needs, over both socket kinds.
pub trait RelaySocket {
    fn read_some(&self, buf: &mut [u8]) -> io::Result<usize>;
    fn write_some(&self, buf: &[u8]) -> io::Result<usize>;
    fn shutdown_write(&self);
}

/// std's two stream sockets: I/O through `&Self`, `shutdown` of their own.
macro_rules! relay_socket {
    ($($socket:ty),*) => {$(
        impl RelaySocket for $socket {
            fn read_some(&self, buf: &mut [u8]) -> io::Result<usize> {
                (&*self).read(buf)
            }
            fn write_some(&self, buf: &[u8]) -> io::Result<usize> {
                (&*self).write(buf)
            }
            fn shutdown_write(&self) {
                let _ = self.shutdown(Shutdown::Write);
            }
        }
    )*};
}

relay_socket!(UnixStream, TcpStream);

/// Moves what it can without blocking: write pending bytes, then read more.
fn pump(pipe: &mut Pipe, from: &dyn RelaySocket, to: &dyn RelaySocket, quota: &QuotaState) -> Step {
    loop {
        while pipe.pending() {
            match to.write_some(&pipe.buf[pipe.start..pipe.end]) {
                Ok(0) => return Step::End(StreamEnd::Error),
                Ok(n) => {
                    pipe.start += n;
                    pipe.delivered += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Step::Continue,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return Step::End(StreamEnd::Error),
            }
        }
        if pipe.read_eof {
            if !pipe.shut_down {
                to.shutdown_write();
                pipe.shut_down = true;
            }
            return Step::Continue;
        }
        pipe.start = 0;
        pipe.end = 0;
        match from.read_some(&mut pipe.buf) {
            Ok(0) => pipe.read_eof = true,
            Ok(n) => {
                let granted = grant(quota, pipe.direction, n);
                pipe.end = granted;
                if granted < n {
                    // Deliver what the quota allows, then end the stream.
                    pipe.delivered += write_tail(to, &pipe.buf[..granted]);
                    pipe.end = 0;
                    return Step::End(match pipe.direction {
                        Direction::Out => StreamEnd::QuotaBytesOut,
                        Direction::In => StreamEnd::QuotaBytesIn,
                    });
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Step::Continue,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return Step::End(StreamEnd::Error),
        }
    }
}

/// Tail bytes before a quota close, on a non-blocking socket: bounded
/// retries (at most ~1 s), then whatever did not fit is dropped.
fn write_tail(to: &dyn RelaySocket, mut bytes: &[u8]) -> u64 {
    let mut written = 0u64;
    let mut waits = 0;
    while !bytes.is_empty() && waits < TAIL_WRITE_WAITS {
        match to.write_some(bytes) {
            Ok(0) => break,
            Ok(n) => {
                bytes = &bytes[n..];
                written += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                waits += 1;
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    written
}

/// 1 ms waits allowed for a quota tail (bounds a stalled peer to ~1 s).
const TAIL_WRITE_WAITS: u32 = 1000;
