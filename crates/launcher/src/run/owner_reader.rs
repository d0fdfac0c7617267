//! fd 3 read on the owner's own event loop instead of a launcher thread.
//!
//! Why: with the reader thread (pumps.rs) a frame from the sandbox wakes
//! that thread, which then wakes the owner's thread through its event
//! queue: two wake-ups per frame, each a halted vCPU's IPI on a VM
//! (docs/performance.md › "Goals of issue 23 not met, and why"). An owner
//! with an event loop (the addon: Node's libuv loop) polls fd 3 itself, so
//! the sandbox's send wakes the thread that consumes the frame, once.
//!
//! The launcher keeps what decides the receipt and the teardown: the reads
//! themselves ([`ReaderParts::read_once`]: passed descriptors neutralised,
//! bytes counted, `Data`/`End` emitted in order — each read and its event
//! under one lock, so two readers never reorder chunks), and the end: once
//! the sandbox is gone its teardown reads what is left to the end on its
//! own thread ([`drain_to_end`]), so a busy or stalled owner loop delays
//! only the events, never the teardown, the receipt or a deadline's end.
//! The owner only decides *when* to read while the sandbox lives: when its
//! consumer wants a chunk (a credit).

use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use nix::errno::Errno;
use nix::sys::socket::MsgFlags;

use crate::events::{Event, EventSink, Stream};
use crate::run::pumps::READ_CHUNK_BYTES;

/// An owner that reads fd 3 on its own loop while the sandbox lives.
pub trait OwnerReader: Send + Sync {
    /// Hands fd 3 over, once, when the sandbox was released (called from a
    /// launcher thread; must not block). The owner reads with
    /// [`ReaderParts::read_once`] when its consumer wants a chunk, until it
    /// reports the end; it may stop earlier with [`ReaderParts::abandon`].
    fn start(&self, parts: ReaderParts);
}

/// fd 3's reading, shared by the owner's loop and the launcher's teardown.
#[derive(Clone)]
pub struct ReaderParts(Arc<ReaderCore>);

struct ReaderCore {
    fd: Arc<OwnedFd>,
    sink: Arc<dyn EventSink>,
    counter: Arc<AtomicU64>,
    state: Mutex<ReadState>,
}

/// Bytes an owner's own read may take at once ([`ReaderParts::read_for_owner`]):
/// 4 event chunks, so a bulk stream costs a quarter of the calls and
/// `Buffer`s. The addon asks for that much only when its consumer takes
/// the chunk at once (a flowing stream with nothing buffered), so what a
/// stream buffers stays as with event chunks; every run keeps this reused
/// buffer (zeroed lazily by the kernel: a run that reads small frames
/// touches a page of it).
pub const OWNER_READ_BYTES: usize = 4 * READ_CHUNK_BYTES;

/// From this many queued bytes an owner's read goes straight into a fresh
/// buffer of the owner's ([`ReaderParts::read_for_owner`]).
pub const OWNER_FRESH_BYTES: usize = 16 * 1024;

struct ReadState {
    /// One chunk's buffer, reused: a frame costs a copy of its own size,
    /// not a fresh zeroed chunk. [`OWNER_READ_BYTES`] long; event chunks
    /// use the first [`READ_CHUNK_BYTES`].
    buf: Vec<u8>,
    /// `End` was emitted (or the owner abandoned): nothing more is read.
    ended: bool,
    /// The teardown reads to the end ([`drain_to_end`]): its chunks go
    /// through the event sink, so the owner takes no more for itself
    /// ([`ReaderParts::read_for_owner`]) — one could overtake them.
    teardown_reads: bool,
}

/// What one [`ReaderParts::read_once`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadStep {
    /// One chunk was emitted as `Data`.
    Emitted,
    /// A message of descriptors alone was received and neutralised:
    /// nothing for the consumer (its credit stands).
    Nothing,
    /// Nothing to read now: wait until fd 3 is readable.
    WouldBlock,
    /// The stream is over (`End` emitted, by this reader or the other):
    /// read no more.
    Ended,
}

impl ReaderParts {
    pub(crate) fn new(
        fd: Arc<OwnedFd>,
        sink: Arc<dyn EventSink>,
        counter: Arc<AtomicU64>,
    ) -> ReaderParts {
        ReaderParts(Arc::new(ReaderCore {
            fd,
            sink,
            counter,
            state: Mutex::new(ReadState {
                buf: vec![0u8; OWNER_READ_BYTES],
                ended: false,
                teardown_reads: false,
            }),
        }))
    }

    /// fd 3's number, for the owner's poll (valid while the parts live).
    pub fn raw_fd(&self) -> std::os::fd::RawFd {
        self.0.fd.as_raw_fd()
    }

    /// Reads one chunk without blocking and emits it (see [`ReadStep`]).
    pub fn read_once(&self) -> ReadStep {
        let core = &self.0;
        let Ok(mut st) = core.state.lock() else {
            return ReadStep::Ended;
        };
        match core.read_locked(&mut st, READ_CHUNK_BYTES, |bytes| bytes.to_vec()) {
            Ok(bytes) => {
                // Under the lock: the other reader's next chunk follows this one.
                core.sink.emit(Event::Data {
                    stream: Stream::Protocol,
                    bytes,
                });
                ReadStep::Emitted
            }
            Err(step) => step,
        }
    }

    /// Reads one chunk without blocking for an owner that delivers it
    /// itself, at once, on the thread the sink's events arrive on: `Ok` is
    /// the chunk and its length, counted as any chunk; `Err` is every other
    /// step (`End` and errors are still emitted through the sink). A chunk
    /// the sink still holds could be overtaken, so once the teardown reads
    /// ([`drain_to_end`]) this reports `Ended` without reading, and the
    /// teardown's own chunks (and `End`) follow through the sink.
    ///
    /// At most `limit` bytes (1 to [`OWNER_READ_BYTES`]). With at least
    /// [`OWNER_FRESH_BYTES`] queued, they are received straight into
    /// `fresh(len)` (a buffer the owner made, of `len` bytes; its chunk may
    /// hold fewer, the length says) — no copy; fewer are received into the
    /// reused buffer and copied out by `take`, cheaper than a fresh buffer
    /// per small frame. Both run under the lock.
    pub fn read_for_owner<T: AsMut<[u8]>>(
        &self,
        limit: usize,
        fresh: impl FnOnce(usize) -> Option<T>,
        take: impl FnOnce(&[u8]) -> T,
    ) -> Result<(T, usize), ReadStep> {
        let core = &self.0;
        let Ok(mut st) = core.state.lock() else {
            return Err(ReadStep::Ended);
        };
        if st.teardown_reads {
            return Err(ReadStep::Ended);
        }
        let limit = limit.clamp(1, OWNER_READ_BYTES);
        let queued = core.queued_bytes().min(limit);
        if queued >= OWNER_FRESH_BYTES {
            if let Some(mut chunk) = fresh(queued) {
                let n = core.receive(&mut st.ended, chunk.as_mut())?;
                return Ok((chunk, n));
            }
        }
        core.read_locked(&mut st, limit, |bytes| (take(bytes), bytes.len()))
    }

    /// The owner cannot read any more (it could not poll fd 3): the stream
    /// ends with `why`, after the queue was drained as on a read error.
    pub fn fail(&self, why: String) {
        let core = &self.0;
        if let Ok(mut st) = core.state.lock() {
            if !st.ended {
                cordon_passed_fds::drain(core.fd.as_fd());
                core.end(&mut st.ended, Some(why));
            }
        }
    }

    /// The owner stops reading before the end (the run settled, or its loop
    /// is going away): what is queued is received and neutralised, so the
    /// owner's drop of fd 3 never drops a passed descriptor. No `End`.
    pub fn abandon(self) {
        let core = &self.0;
        if let Ok(mut st) = core.state.lock() {
            if !st.ended {
                cordon_passed_fds::drain(core.fd.as_fd());
                st.ended = true;
            }
        }
    }
}

impl ReaderCore {
    /// One non-blocking read of at most `limit` bytes: the chunk's bytes go
    /// to `take` (counted), anything else is the step (the end emitted here).
    fn read_locked<T>(
        &self,
        st: &mut ReadState,
        limit: usize,
        take: impl FnOnce(&[u8]) -> T,
    ) -> Result<T, ReadStep> {
        let ReadState { buf, ended, .. } = st;
        let n = self.receive(ended, &mut buf[..limit])?;
        Ok(take(&buf[..n]))
    }

    /// Receives into `buf` without blocking: the bytes received (counted),
    /// or the step (the end emitted here).
    fn receive(&self, ended: &mut bool, buf: &mut [u8]) -> Result<usize, ReadStep> {
        if *ended {
            return Err(ReadStep::Ended);
        }
        let got = loop {
            let flags = MsgFlags::MSG_DONTWAIT;
            match cordon_passed_fds::recv_neutralising(self.fd.as_fd(), buf, flags) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                other => break other,
            }
        };
        match got {
            Ok(r) if r.bytes == 0 && !r.had_ancillary => Err(self.end(ended, None)),
            Ok(r) if r.bytes == 0 => Err(ReadStep::Nothing),
            Ok(r) => {
                self.counter.fetch_add(r.bytes as u64, Ordering::Relaxed);
                Ok(r.bytes)
            }
            Err(e) if e.raw_os_error() == Some(Errno::EAGAIN as i32) => Err(ReadStep::WouldBlock),
            Err(e) => {
                // As the reader thread does (R5N-1): what the sandbox queued
                // is received and neutralised, and nothing more accepted,
                // before fd 3 can close.
                cordon_passed_fds::drain(self.fd.as_fd());
                Err(self.end(ended, Some(e.to_string())))
            }
        }
    }

    /// Bytes waiting in fd 3's receive queue (`FIONREAD`; 0 when unknown).
    fn queued_bytes(&self) -> usize {
        let mut n: libc::c_int = 0;
        // SAFETY: FIONREAD writes one int through the pointer; the fd is live.
        let rc = unsafe { libc::ioctl(self.fd.as_raw_fd(), libc::FIONREAD, &mut n) };
        if rc < 0 {
            0
        } else {
            usize::try_from(n).unwrap_or(0)
        }
    }

    fn end(&self, ended: &mut bool, error: Option<String>) -> ReadStep {
        *ended = true;
        self.sink.emit(Event::End {
            stream: Stream::Protocol,
            error,
        });
        ReadStep::Ended
    }
}

/// The sandbox is gone: reads what is left to the end on this (the
/// teardown's) thread, whatever the owner's loop is doing, waiting for
/// fd 3 until `bound` when there is one (a namespace that could not be
/// confirmed empty may still hold its other end).
pub(crate) fn drain_to_end(parts: &ReaderParts, bound: Option<Instant>) {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    if let Ok(mut st) = parts.0.state.lock() {
        st.teardown_reads = true;
    }
    loop {
        // Every pass: a writer that outlived the kill and keeps fd 3 full
        // must not hold the teardown past its bound (R14w-3).
        if bound.is_some_and(|bound| Instant::now() >= bound) {
            return;
        }
        match parts.read_once() {
            ReadStep::Emitted | ReadStep::Nothing => {}
            ReadStep::Ended => return,
            ReadStep::WouldBlock => {
                let timeout = match bound {
                    None => PollTimeout::NONE,
                    Some(bound) => {
                        let left = bound.saturating_duration_since(Instant::now());
                        if left.is_zero() {
                            return;
                        }
                        let ms = u16::try_from(left.as_millis()).unwrap_or(u16::MAX);
                        PollTimeout::from(ms)
                    }
                };
                let mut fds = [PollFd::new(parts.0.fd.as_fd(), PollFlags::POLLIN)];
                let _ = poll(&mut fds, timeout);
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use std::io::Write;
    use std::os::unix::net::UnixStream;
    use std::time::Duration;

    use super::*;

    #[derive(Default)]
    struct Record(Mutex<Vec<String>>);

    impl EventSink for Record {
        fn emit(&self, event: Event) {
            let line = match event {
                Event::Data { bytes, .. } => format!("data {}", String::from_utf8_lossy(&bytes)),
                Event::End { error, .. } => format!("end {error:?}"),
                other => format!("{other:?}"),
            };
            self.0.lock().unwrap().push(line);
        }
    }

    fn parts() -> (ReaderParts, UnixStream, Arc<Record>, Arc<AtomicU64>) {
        let (ours, peer) = UnixStream::pair().unwrap();
        let record = Arc::new(Record::default());
        let counter = Arc::new(AtomicU64::new(0));
        let parts = ReaderParts::new(
            Arc::new(OwnedFd::from(ours)),
            record.clone(),
            Arc::clone(&counter),
        );
        (parts, peer, record, counter)
    }

    #[test]
    fn reads_without_blocking_counts_and_ends_once() {
        let (parts, mut peer, record, counter) = parts();
        assert_eq!(parts.read_once(), ReadStep::WouldBlock);
        peer.write_all(b"frame").unwrap();
        assert_eq!(parts.read_once(), ReadStep::Emitted);
        drop(peer);
        assert_eq!(parts.read_once(), ReadStep::Ended);
        assert_eq!(parts.read_once(), ReadStep::Ended, "no second End");
        assert_eq!(counter.load(Ordering::Relaxed), 5);
        assert_eq!(*record.0.lock().unwrap(), ["data frame", "end None"]);
    }

    #[test]
    fn an_owner_read_hands_the_bytes_over_and_stops_once_the_teardown_reads() {
        let (parts, mut peer, record, counter) = parts();
        assert_eq!(
            parts.read_for_owner(OWNER_READ_BYTES, |n| Some(vec![0; n]), <[u8]>::to_vec),
            Err(ReadStep::WouldBlock)
        );
        peer.write_all(b"mine").unwrap();
        assert_eq!(
            parts.read_for_owner(OWNER_READ_BYTES, |n| Some(vec![0; n]), <[u8]>::to_vec),
            Ok((b"mine".to_vec(), 4))
        );
        assert!(record.0.lock().unwrap().is_empty(), "not emitted");
        assert_eq!(counter.load(Ordering::Relaxed), 4, "counted");
        // The teardown starts (a drain whose bound has passed: it returns at
        // once, before reading): from now on its chunks go through the sink,
        // and the owner takes none for itself, so none can overtake them.
        drain_to_end(&parts, Some(Instant::now()));
        peer.write_all(b"theirs").unwrap();
        assert_eq!(
            parts.read_for_owner(OWNER_READ_BYTES, |n| Some(vec![0; n]), <[u8]>::to_vec),
            Err(ReadStep::Ended),
            "the owner reads nothing once the teardown reads"
        );
        drop(peer);
        drain_to_end(&parts, None);
        assert_eq!(*record.0.lock().unwrap(), ["data theirs", "end None"]);
    }

    #[test]
    fn a_large_queue_is_received_into_the_owners_own_buffer_a_small_one_copied() {
        let (parts, mut peer, record, counter) = parts();
        let asked = std::cell::Cell::new(0);
        let fresh = |n| {
            asked.set(n);
            Some(vec![0xee; n])
        };
        let big: Vec<u8> = (0..40_000u32).map(|i| i as u8).collect();
        peer.write_all(&big).unwrap();
        // At most `limit` of it, straight into the owner's buffer.
        let got = parts.read_for_owner(OWNER_FRESH_BYTES + 1, fresh, <[u8]>::to_vec);
        assert_eq!(
            got,
            Ok((big[..OWNER_FRESH_BYTES + 1].to_vec(), OWNER_FRESH_BYTES + 1))
        );
        assert_eq!(
            asked.get(),
            OWNER_FRESH_BYTES + 1,
            "sized to what is queued"
        );
        let got = parts.read_for_owner(OWNER_READ_BYTES, fresh, <[u8]>::to_vec);
        let rest = big.len() - OWNER_FRESH_BYTES - 1;
        assert_eq!(got, Ok((big[OWNER_FRESH_BYTES + 1..].to_vec(), rest)));
        assert_eq!(asked.get(), rest);
        // A small frame is copied out of the reused buffer.
        asked.set(0);
        peer.write_all(b"small").unwrap();
        let got = parts.read_for_owner(OWNER_READ_BYTES, fresh, <[u8]>::to_vec);
        assert_eq!(got, Ok((b"small".to_vec(), 5)));
        assert_eq!(asked.get(), 0, "no fresh buffer for a small frame");
        assert_eq!(counter.load(Ordering::Relaxed), big.len() as u64 + 5);
        assert!(record.0.lock().unwrap().is_empty(), "nothing emitted");
    }

    #[test]
    fn the_teardown_drains_to_the_end_while_the_owner_reads_nothing() {
        let (parts, mut peer, record, _) = parts();
        let writer = std::thread::spawn(move || {
            for i in 0..50 {
                peer.write_all(format!("{i};").as_bytes()).unwrap();
                std::thread::sleep(Duration::from_millis(1));
            }
        });
        drain_to_end(&parts, None);
        writer.join().unwrap();
        let lines = record.0.lock().unwrap().clone();
        assert_eq!(lines.last().unwrap(), "end None");
        let text: String = lines
            .iter()
            .filter_map(|l| l.strip_prefix("data "))
            .collect();
        let expected: String = (0..50).map(|i| format!("{i};")).collect();
        assert_eq!(text, expected, "every byte, in order");
    }

    #[test]
    fn a_bounded_drain_returns_at_its_bound_while_the_peer_lives() {
        let (parts, _peer, record, _) = parts();
        let bound = Instant::now() + Duration::from_millis(30);
        drain_to_end(&parts, Some(bound));
        assert!(Instant::now() >= bound);
        assert!(record.0.lock().unwrap().is_empty());
        parts.clone().abandon();
        assert_eq!(
            parts.read_once(),
            ReadStep::Ended,
            "an abandoned reader reads no more"
        );
    }
}
