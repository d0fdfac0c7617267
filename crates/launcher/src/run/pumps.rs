//! The three byte pumps between the host and the sandbox, one thread each:
//! fd 3 → host (`protocol` readable side), the stderr pipe → host, and
//! host → fd 3 (`protocol` writable side). An owner with an event loop
//! reads fd 3 on it instead of the first thread (owner_reader.rs; the
//! addon does).
//!
//! Backpressure: a reader delivers one chunk per credit; the owner grants a
//! credit when its consumer wants more, so at most one chunk is in flight
//! per stream (and one more held by the reader: it reads before it waits
//! for the credit, so a grant finds it blocked in the kernel, not on the
//! gate, and wakes no thread — one hop less per tool call). Once the sandbox is reaped the readers drain to EOF without
//! credits: what is left is bounded by the kernel's pipe and socket buffers,
//! and the last frame is never lost. The writer takes one chunk at a time
//! and reports completion only when the kernel accepted all of it.

use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

use nix::errno::Errno;
use nix::sys::socket::{self, MsgFlags};

use crate::events::{Event, EventSink, Stream};

/// Bytes read per chunk: large enough that a 1 GiB flood is ~16k events,
/// small enough to keep per-stream memory tiny.
pub const READ_CHUNK_BYTES: usize = 64 * 1024;
/// Chunks smaller than this share no capacity with the read buffer.
const SHRINK_BELOW_BYTES: usize = READ_CHUNK_BYTES / 2;

/// Credit-based flow control for one reader.
#[derive(Debug, Default)]
pub struct Gate {
    state: Mutex<GateState>,
    changed: Condvar,
}

#[derive(Debug, Default)]
struct GateState {
    credit: bool,
    drain: bool,
    /// The reader is blocked in `acquire` (only then is a wake-up needed).
    waiting: bool,
}

impl Gate {
    /// A gate holding one initial credit.
    pub fn new() -> Gate {
        Gate {
            state: Mutex::new(GateState {
                credit: true,
                drain: false,
                waiting: false,
            }),
            changed: Condvar::new(),
        }
    }

    /// The consumer wants (at most) one more chunk.
    pub fn grant(&self) {
        self.update(|s| s.credit = true);
    }

    /// The sandbox is gone: read to EOF regardless of credits.
    pub fn drain(&self) {
        self.update(|s| s.drain = true);
    }

    fn update(&self, f: impl FnOnce(&mut GateState)) {
        if let Ok(mut s) = self.state.lock() {
            f(&mut s);
            if s.waiting {
                self.changed.notify_all();
            }
        }
    }

    fn acquire(&self) {
        let Ok(mut s) = self.state.lock() else { return };
        while !s.credit && !s.drain {
            s.waiting = true;
            match self.changed.wait(s) {
                Ok(next) => s = next,
                Err(_) => return,
            }
        }
        s.waiting = false;
        s.credit = false;
    }
}

/// Starts the reader for `stream`; it ends with exactly one `End` event.
pub fn spawn_reader(
    stream: Stream,
    fd: Arc<OwnedFd>,
    gate: Arc<Gate>,
    sink: Arc<dyn EventSink>,
    counter: Arc<AtomicU64>,
) -> std::io::Result<JoinHandle<()>> {
    let name = match stream {
        Stream::Protocol => "cordon-fd3-out",
        Stream::Stderr => "cordon-stderr",
    };
    std::thread::Builder::new()
        .name(name.into())
        .spawn(move || loop {
            let chunk = read_chunk(&fd, stream);
            gate.acquire();
            match chunk {
                Ok(bytes) if bytes.is_empty() => {
                    sink.emit(Event::End {
                        stream,
                        error: None,
                    });
                    return;
                }
                Ok(bytes) => {
                    counter.fetch_add(bytes.len() as u64, Ordering::Relaxed);
                    sink.emit(Event::Data { stream, bytes });
                }
                Err(e) => {
                    // EOF above means the queue is empty and the sandbox can
                    // send nothing more; an error does not, so whatever it
                    // queued is received and neutralised here, and nothing
                    // more accepted, before any thread closes fd 3 (R5N-1).
                    if matches!(stream, Stream::Protocol) {
                        cordon_passed_fds::drain(fd.as_fd());
                    }
                    sink.emit(Event::End {
                        stream,
                        error: Some(e.to_string()),
                    });
                    return;
                }
            }
        })
}

/// One chunk of `stream`. fd 3 is a socket the sandbox can pass
/// descriptors over (SCM_RIGHTS): it is received with a control buffer and
/// every passed descriptor neutralised (`cordon_passed_fds`), never with
/// `read()`, which would drop them here, where a lingering TCP socket's
/// close can hold this thread (and the run) for as long as the sandbox set.
fn read_chunk(fd: &OwnedFd, stream: Stream) -> std::io::Result<Vec<u8>> {
    let mut buf = vec![0u8; READ_CHUNK_BYTES];
    loop {
        let got = match stream {
            Stream::Protocol => {
                cordon_passed_fds::recv_neutralising(fd.as_fd(), &mut buf, MsgFlags::empty())
                    .map(|r| r.bytes)
                    .map_err(|e| Errno::from_raw(e.raw_os_error().unwrap_or(libc::EIO)))
            }
            Stream::Stderr => nix::unistd::read(fd, &mut buf),
        };
        match got {
            Ok(n) if n < SHRINK_BELOW_BYTES => return Ok(buf[..n].to_vec()),
            Ok(n) => {
                buf.truncate(n);
                return Ok(buf);
            }
            Err(Errno::EINTR) => {}
            Err(errno) => return Err(errno.into()),
        }
    }
}

/// A request to the host → fd 3 writer.
#[derive(Debug)]
pub enum WriteCmd {
    Data(Vec<u8>),
    /// Half-close: `shutdown(SHUT_WR)`; the runner sees EOF, fd 3 → host stays open.
    Shutdown,
}

impl WriteCmd {
    /// The bytes it carries (a half-close carries none).
    pub(crate) fn len(&self) -> usize {
        match self {
            WriteCmd::Data(bytes) => bytes.len(),
            WriteCmd::Shutdown => 0,
        }
    }
}

/// Byte counters shared with the receipt.
#[derive(Debug, Default)]
pub struct WriterCounters {
    pub written: AtomicU64,
    pub discarded: AtomicU64,
}

/// Starts the writer; it exits when every sender of `commands` is dropped.
pub fn spawn_writer(
    fd: Arc<OwnedFd>,
    commands: Receiver<WriteCmd>,
    sink: Arc<dyn EventSink>,
    counters: Arc<WriterCounters>,
    queued: Arc<AtomicUsize>,
) -> std::io::Result<JoinHandle<()>> {
    std::thread::Builder::new()
        .name("cordon-fd3-in".into())
        .spawn(move || {
            let mut peer_closed = false;
            while let Ok(cmd) = commands.recv() {
                match cmd {
                    WriteCmd::Data(bytes) => {
                        let sent = if peer_closed {
                            0
                        } else {
                            send_all(&fd, &bytes)
                        };
                        peer_closed |= sent < bytes.len();
                        counters.written.fetch_add(sent as u64, Ordering::Relaxed);
                        let dropped = (bytes.len() - sent) as u64;
                        counters.discarded.fetch_add(dropped, Ordering::Relaxed);
                        // Done before its event: a direct write may follow it now.
                        queued.fetch_sub(1, Ordering::AcqRel);
                        sink.emit(Event::WriteDone {
                            discarded: dropped > 0,
                        });
                    }
                    WriteCmd::Shutdown => {
                        let _ = socket::shutdown(fd.as_raw_fd(), socket::Shutdown::Write);
                        queued.fetch_sub(1, Ordering::AcqRel);
                        sink.emit(Event::ShutdownDone);
                    }
                }
            }
        })
}

/// Sends all of `bytes`, returning how many were accepted before the peer
/// went away (EPIPE/ECONNRESET/any error ends the attempt). Blocks until
/// the socket takes them, whatever its mode: an owner that polls fd 3 on
/// its loop (owner_reader.rs; libuv's poll makes the descriptor
/// non-blocking) turns a full buffer into EAGAIN, which waits for room
/// here instead of counting the rest as discarded.
pub(crate) fn send_all(fd: &OwnedFd, bytes: &[u8]) -> usize {
    let mut sent = 0;
    while sent < bytes.len() {
        // MSG_NOSIGNAL turns a closed peer into EPIPE instead of a
        // process-killing SIGPIPE.
        match socket::send(
            fd.as_raw_fd(),
            &bytes[sent..],
            socket::MsgFlags::MSG_NOSIGNAL,
        ) {
            Ok(0) => break,
            Ok(n) => sent += n,
            Err(Errno::EINTR) => {}
            Err(Errno::EAGAIN) => wait_writable(fd),
            Err(_) => break,
        }
    }
    sent
}

/// Waits until `fd` can take bytes, or has an error or hang-up (which the
/// next send reports).
fn wait_writable(fd: &OwnedFd) {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    let mut fds = [PollFd::new(fd.as_fd(), PollFlags::POLLOUT)];
    let _ = poll(&mut fds, PollTimeout::NONE);
}
