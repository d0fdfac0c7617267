//! The relay process: accept on the sandbox's 127.0.0.1:PORT, connect each
//! connection to the engine socket, and copy both ways — all in one thread
//! with one `poll(2)` loop (the relay runs under the sandbox's own rlimits,
//! e.g. 256 MiB of address space under readOnly(): a thread per direction
//! with default 8 MiB stacks ran out of address space and aborted below the
//! default 32-stream quota). EOF is passed on as a half-close so
//! request/response protocols finish.
//!
//! Nothing here panics or aborts on a per-connection failure: a connection
//! whose buffers cannot be allocated, whose engine connect fails, or whose
//! socket errors is closed alone; at the connection cap (or short of memory
//! or descriptors) the relay stops accepting and later connections wait in
//! the listen backlog, so each one still reaches the engine (and gets its
//! receipt, e.g. `quota-concurrent-streams`) once a slot frees.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::net::UnixStream;
use std::path::Path;

use nix::poll::{PollFd, PollFlags, PollTimeout};

use crate::fds::{close_all_but, interest, poll, ready};

/// Connections carried at once (the engine enforces the run's real stream
/// quotas; this only bounds the relay's own memory: 2 × BUFFER_BYTES each).
/// Also capped by half the descriptor limit.
pub const MAX_CONNECTIONS: usize = 1024;
/// Copy buffer per direction.
const BUFFER_BYTES: usize = 32 * 1024;
/// While accepting is paused for lack of memory or descriptors, retry after
/// this long even if no connection closes.
const RETRY_MS: u8 = 100;
/// Reads per direction per poll round, so one fast stream cannot starve the rest.
const READS_PER_ROUND: usize = 4;

pub fn serve(listener: &TcpListener, engine: &Path) {
    close_all_but(listener.as_raw_fd());
    if listener.set_nonblocking(true).is_err() {
        return;
    }
    let cap = MAX_CONNECTIONS.min(crate::fds::descriptor_limit().saturating_sub(8) / 2);
    let mut conns: Vec<Connection> = Vec::new();
    let mut paused = false;
    loop {
        let accepting = conns.len() < cap && !paused;
        let timeout = if paused {
            PollTimeout::from(RETRY_MS)
        } else {
            PollTimeout::NONE
        };
        let Ok(woken) = wait(listener, &conns, accepting, timeout) else {
            continue; // EINTR; nothing else is expected from valid descriptors
        };
        let before = conns.len();
        let mut woken_conns = woken.connections.iter();
        conns.retain_mut(|c| {
            let ready = woken_conns.next().copied().unwrap_or(false);
            !ready || c.step() // dropping a finished one closes both sockets
        });
        if conns.len() < before {
            paused = false; // a slot (and its memory and descriptors) freed
        }
        if woken.listener || paused {
            paused = !accept_some(listener, engine, &mut conns, cap);
        }
    }
}

/// What one poll round woke.
struct Woken {
    listener: bool,
    /// Per connection, in `conns` order.
    connections: Vec<bool>,
}

/// One `poll(2)` over the listener (while accepting) and each connection's
/// two sockets. An entry with no interest is left out: poll would still
/// report errors and hang-ups on it, and a direction that has ended must not
/// wake the loop again.
fn wait(
    listener: &TcpListener,
    conns: &[Connection],
    accepting: bool,
    timeout: PollTimeout,
) -> io::Result<Woken> {
    let mut fds = Vec::with_capacity(1 + 2 * conns.len());
    // Whose entry each one is: None for the listener, else the connection's index.
    let mut owners = Vec::with_capacity(fds.capacity());
    if accepting {
        fds.push(PollFd::new(listener.as_fd(), PollFlags::POLLIN));
        owners.push(None);
    }
    for (i, c) in conns.iter().enumerate() {
        let client = interest(c.up.wants_read(), c.down.wants_write());
        let engine = interest(c.down.wants_read(), c.up.wants_write());
        for (fd, events) in [(c.client.as_fd(), client), (c.engine.as_fd(), engine)] {
            if !events.is_empty() {
                fds.push(PollFd::new(fd, events));
                owners.push(Some(i));
            }
        }
    }
    poll(&mut fds, timeout)?;
    let mut woken = Woken {
        listener: false,
        connections: vec![false; conns.len()],
    };
    for (fd, owner) in fds.iter().zip(owners) {
        if ready(fd) {
            match owner {
                None => woken.listener = true,
                Some(i) => woken.connections[i] = true,
            }
        }
    }
    Ok(woken)
}

/// Accepts until the backlog is empty or the cap is reached. Returns false
/// when it stopped for lack of memory or descriptors (accepting pauses).
fn accept_some(
    listener: &TcpListener,
    engine: &Path,
    conns: &mut Vec<Connection>,
    cap: usize,
) -> bool {
    while conns.len() < cap {
        // Reserve the buffers before taking the connection off the backlog:
        // short of memory, it waits there instead of being reset.
        let Some((up, down)) = Pipe::new().zip(Pipe::new()) else {
            return false;
        };
        if conns.try_reserve(1).is_err() {
            return false;
        }
        let client = match listener.accept() {
            Ok((client, _)) => client,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return true,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) if e.kind() == io::ErrorKind::ConnectionAborted => continue,
            Err(_) => return false, // EMFILE/ENFILE/ENOBUFS/ENOMEM: retry later
        };
        // Small proxy replies and request heads must not wait for Nagle.
        let _ = client.set_nodelay(true);
        let Ok(engine) = UnixStream::connect(engine) else {
            // The client is closed (it sees a reset); out of descriptors is
            // the only expected cause, so pause rather than repeat it.
            return false;
        };
        if client.set_nonblocking(true).is_err() || engine.set_nonblocking(true).is_err() {
            continue;
        }
        conns.push(Connection {
            client,
            engine,
            up,
            down,
        });
    }
    true
}

struct Connection {
    client: TcpStream,
    engine: UnixStream,
    /// client → engine
    up: Pipe,
    /// engine → client
    down: Pipe,
}

impl Connection {
    /// Moves what can move now. False when the connection is finished:
    /// both directions forwarded their EOF or failed. A direction fails
    /// alone, so a refusal the engine sends while closing on a client that
    /// is still writing (an oversized head) is still delivered.
    fn step(&mut self) -> bool {
        self.up.pump(&self.client, &self.engine);
        self.down.pump(&self.engine, &self.client);
        !(self.up.done() && self.down.done())
    }
}

/// One direction: a fixed buffer, filled only when empty.
struct Pipe {
    buf: Vec<u8>,
    start: usize,
    end: usize,
    eof: bool,
    shut: bool,
}

impl Pipe {
    /// None when the buffer cannot be allocated (no abort on allocation failure).
    fn new() -> Option<Pipe> {
        let mut buf = Vec::new();
        buf.try_reserve_exact(BUFFER_BYTES).ok()?;
        buf.resize(BUFFER_BYTES, 0);
        Some(Pipe {
            buf,
            start: 0,
            end: 0,
            eof: false,
            shut: false,
        })
    }

    fn wants_read(&self) -> bool {
        !self.eof && self.start == self.end
    }

    fn wants_write(&self) -> bool {
        self.start < self.end || (self.eof && !self.shut)
    }

    fn done(&self) -> bool {
        self.shut
    }

    /// Copies until blocked; an error ends this direction only (its
    /// buffered bytes are dropped and the other side's write half closed).
    fn pump<F, T>(&mut self, from: F, to: T)
    where
        F: Read,
        T: Write + HalfClose + Copy,
    {
        if self.shut {
            return;
        }
        if self.copy(from, to).is_err() {
            (self.start, self.end, self.eof, self.shut) = (0, 0, true, true);
            to.close_write();
        }
    }

    fn copy<F, T>(&mut self, mut from: F, mut to: T) -> io::Result<()>
    where
        F: Read,
        T: Write + HalfClose,
    {
        let mut reads = 0;
        loop {
            if self.start < self.end {
                match to.write(&self.buf[self.start..self.end]) {
                    Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                    Ok(n) => self.start += n,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
                continue;
            }
            if self.eof {
                if !self.shut {
                    to.close_write();
                    self.shut = true;
                }
                return Ok(());
            }
            if reads == READS_PER_ROUND {
                return Ok(());
            }
            match from.read(&mut self.buf) {
                Ok(0) => self.eof = true,
                Ok(n) => {
                    (self.start, self.end) = (0, n);
                    reads += 1;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

/// `shutdown(SHUT_WR)` on either socket type.
trait HalfClose {
    fn close_write(&self);
}

impl HalfClose for &TcpStream {
    fn close_write(&self) {
        let _ = self.shutdown(Shutdown::Write);
    }
}

impl HalfClose for &UnixStream {
    fn close_write(&self) {
        let _ = self.shutdown(Shutdown::Write);
    }
}
