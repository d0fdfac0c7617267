//! A blocking reader that sleeps in `poll(POLLIN)`, never inside `read(2)`.
//!
//! Why: a unix stream socket has one wait queue for both directions. A
//! thread asleep in `read(2)` waits on it without a filter, so every time the
//! host *consumes* one of our frames the kernel's write-space callback wakes
//! it too (`unix_write_space` → a wake-up with `EPOLLOUT`), it finds nothing
//! to read and goes back to sleep: two context switches per tool call instead
//! of one, and an inter-processor interrupt paid by the host's thread on its
//! read (measured: 1.9–2.0 voluntary switches of `bridge-reader` per call).
//! `poll` registers for `POLLIN` and the kernel drops wake-ups whose events it
//! did not ask for, as epoll does for the host's side.

use std::io::{self, Read};
use std::os::fd::AsFd;

use nix::errno::Errno;
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};

/// Wraps a blocking descriptor: each `read` first waits until it is readable
/// (data, EOF, an error or a hang-up: `read` then reports which).
pub struct ReadableWait<R>(R);

impl<R> ReadableWait<R> {
    pub fn new(inner: R) -> Self {
        ReadableWait(inner)
    }
}

impl<R: Read + AsFd> Read for ReadableWait<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let mut fds = [PollFd::new(self.0.as_fd(), PollFlags::POLLIN)];
            match poll(&mut fds, PollTimeout::NONE) {
                Ok(_) => break,
                // A signal (SIGINT/SIGTERM's handler) interrupted the wait:
                // wait again, as a blocking read would have been restarted.
                Err(Errno::EINTR) => continue,
                Err(errno) => return Err(io::Error::from(errno)),
            }
        }
        self.0.read(buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::unix::net::UnixStream;
    use std::time::Duration;

    /// Voluntary context switches of the calling thread so far.
    fn voluntary_switches() -> u64 {
        let status = std::fs::read_to_string("/proc/thread-self/status").expect("status");
        status
            .lines()
            .find_map(|line| line.strip_prefix("voluntary_ctxt_switches:"))
            .and_then(|n| n.trim().parse().ok())
            .expect("voluntary_ctxt_switches")
    }

    #[test]
    fn reads_what_arrives_and_reports_eof() {
        let (ours, mut theirs) = UnixStream::pair().expect("pair");
        let mut reader = ReadableWait::new(ours);
        theirs.write_all(b"abc").expect("write");
        let mut buf = [0u8; 8];
        assert_eq!(reader.read(&mut buf).expect("read"), 3);
        assert_eq!(&buf[..3], b"abc");
        drop(theirs);
        assert_eq!(reader.read(&mut buf).expect("eof"), 0);
    }

    /// The property this module exists for: the peer consuming our frames
    /// does not wake a thread waiting for the peer's. A thread asleep in a
    /// plain `read` is woken once per frame the peer reads (this test fails
    /// with `self.0.read` alone: one switch per frame, 51 for 50).
    #[test]
    fn the_peer_reading_our_frames_does_not_wake_the_waiting_reader() {
        let (ours, theirs) = UnixStream::pair().expect("pair");
        let mut writer = ours.try_clone().expect("clone");
        let waiter = std::thread::spawn(move || {
            let mut reader = ReadableWait::new(ours);
            let before = voluntary_switches();
            let mut buf = [0u8; 8];
            let n = reader.read(&mut buf).expect("read");
            (voluntary_switches() - before, n)
        });
        std::thread::sleep(Duration::from_millis(50));
        let mut peer = theirs;
        let mut frame = [0u8; 16];
        for _ in 0..50 {
            writer.write_all(&frame).expect("write ours");
            peer.read_exact(&mut frame).expect("peer reads ours");
            std::thread::sleep(Duration::from_millis(1));
        }
        peer.write_all(b"x")
            .expect("the frame the reader waits for");
        let (switches, n) = waiter.join().expect("waiter");
        assert_eq!(n, 1);
        assert!(
            switches <= 5,
            "{switches} wake-ups of the waiting reader for 50 frames the peer read"
        );
    }
}
