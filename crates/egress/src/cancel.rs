//! Cancellation every blocking wait of a run's engine can see: a pipe whose
//! write end the engine owner holds. Closing it makes the read end report
//! POLLHUP, so `poll` in the accept loop, the fd-4 loop and every stream
//! relay wakes at once (no thread is left parked in accept or recv).

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};

/// The owner's side: `cancel()` (or drop) wakes every watcher.
#[derive(Debug)]
pub struct Canceller {
    write_end: Mutex<Option<OwnedFd>>,
    watch: CancelWatch,
}

/// A watcher's side, cheap to clone into threads.
#[derive(Debug, Clone)]
pub struct CancelWatch {
    read_end: Arc<OwnedFd>,
}

impl Canceller {
    pub fn new() -> io::Result<Self> {
        let (read_end, write_end) = pipe_cloexec()?;
        Ok(Self {
            write_end: Mutex::new(Some(write_end)),
            watch: CancelWatch {
                read_end: Arc::new(read_end),
            },
        })
    }

    pub fn watch(&self) -> CancelWatch {
        self.watch.clone()
    }

    /// Idempotent: the first call closes the write end.
    pub fn cancel(&self) {
        if let Ok(mut guard) = self.write_end.lock() {
            guard.take();
        }
    }
}

fn pipe_cloexec() -> io::Result<(OwnedFd, OwnedFd)> {
    Ok(nix::unistd::pipe2(OFlag::O_CLOEXEC)?)
}

/// What one `wait` saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wake {
    /// At least one of the watched descriptors is ready (see the revents).
    Ready,
    Cancelled,
    TimedOut,
}

impl CancelWatch {
    /// Polls `fds` (each with the events it waits for) plus the cancel pipe
    /// until one is ready, the run is cancelled, or `deadline` passes. An
    /// entry with no events still wakes on an error or hang-up.
    pub fn wait(
        &self,
        fds: &[(BorrowedFd<'_>, PollFlags)],
        deadline: Option<Instant>,
    ) -> io::Result<Wake> {
        let mut all: Vec<PollFd<'_>> = fds
            .iter()
            .map(|&(fd, events)| PollFd::new(fd, events))
            .collect();
        all.push(PollFd::new(self.read_end.as_fd(), PollFlags::POLLIN));
        loop {
            let timeout = match deadline {
                None => PollTimeout::NONE,
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Ok(Wake::TimedOut);
                    }
                    PollTimeout::try_from(left.max(Duration::from_millis(1)))
                        .unwrap_or(PollTimeout::MAX)
                }
            };
            match poll(&mut all, timeout) {
                Ok(0) => continue, // re-check the deadline
                Ok(_) => {}
                Err(Errno::EINTR) => continue,
                Err(e) => return Err(e.into()),
            }
            // revents is None only for bits nix does not name: still an event.
            let cancelled = all
                .last()
                .is_some_and(|p| p.revents().is_none_or(|r| !r.is_empty()));
            return Ok(if cancelled {
                Wake::Cancelled
            } else {
                Wake::Ready
            });
        }
    }

    /// Waits for `fd` to be readable.
    pub fn readable(&self, fd: BorrowedFd<'_>, deadline: Option<Instant>) -> io::Result<Wake> {
        self.wait(&[(fd, PollFlags::POLLIN)], deadline)
    }

    /// Waits for `fd` to be writable (a non-blocking connect's completion).
    pub fn writable(&self, fd: BorrowedFd<'_>, deadline: Option<Instant>) -> io::Result<Wake> {
        self.wait(&[(fd, PollFlags::POLLOUT)], deadline)
    }
}

/// A deadline `after` from now.
pub fn deadline_after(after: Duration) -> Option<Instant> {
    Instant::now().checked_add(after)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixStream;

    #[test]
    fn cancelling_wakes_a_waiter_blocked_on_a_silent_socket() {
        let c = Canceller::new().unwrap();
        let (a, _b) = UnixStream::pair().unwrap();
        let watch = c.watch();
        let waiter = std::thread::spawn(move || watch.readable(a.as_fd(), None).unwrap());
        std::thread::sleep(Duration::from_millis(20));
        assert!(!waiter.is_finished());
        c.cancel();
        assert_eq!(waiter.join().unwrap(), Wake::Cancelled);
    }

    #[test]
    fn a_deadline_ends_the_wait() {
        let c = Canceller::new().unwrap();
        let (a, _b) = UnixStream::pair().unwrap();
        let wake = c
            .watch()
            .readable(a.as_fd(), deadline_after(Duration::from_millis(5)))
            .unwrap();
        assert_eq!(wake, Wake::TimedOut);
    }
}
