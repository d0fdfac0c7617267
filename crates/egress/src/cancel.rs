//! Cancellation every blocking wait of a run's engine can see: a pipe whose
//! write end the engine owner holds. Closing it makes the read end report
//! POLLHUP, so `poll` in the accept loop, the fd-4 loop and every stream
//! relay wakes at once (no thread is left parked in accept or recv).

use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

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
    let mut fds = [0 as RawFd; 2];
    // SAFETY: pipe2 writes two descriptors into the 2-element array it is given.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: pipe2 succeeded, so both descriptors are open and owned by nobody else.
    Ok(unsafe {
        (
            std::os::fd::FromRawFd::from_raw_fd(fds[0]),
            std::os::fd::FromRawFd::from_raw_fd(fds[1]),
        )
    })
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
    /// Polls `fds` (their `revents` are filled) plus the cancel pipe until one
    /// is ready, the run is cancelled, or `deadline` passes.
    pub fn wait(&self, fds: &mut [libc::pollfd], deadline: Option<Instant>) -> io::Result<Wake> {
        let mut all: Vec<libc::pollfd> = fds.to_vec();
        all.push(libc::pollfd {
            fd: self.read_end.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        });
        loop {
            let timeout_ms = match deadline {
                None => -1,
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Ok(Wake::TimedOut);
                    }
                    i32::try_from(left.as_millis().max(1)).unwrap_or(i32::MAX)
                }
            };
            for p in &mut all {
                p.revents = 0;
            }
            let n = poll(&mut all, timeout_ms)?;
            if n == 0 {
                continue; // re-check the deadline
            }
            let cancel = all.last().map_or(0, |p| p.revents);
            if cancel != 0 {
                return Ok(Wake::Cancelled);
            }
            for (dst, src) in fds.iter_mut().zip(&all) {
                dst.revents = src.revents;
            }
            return Ok(Wake::Ready);
        }
    }

    /// Waits for `fd` to be readable.
    pub fn readable(&self, fd: RawFd, deadline: Option<Instant>) -> io::Result<Wake> {
        let mut fds = [libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        }];
        self.wait(&mut fds, deadline)
    }
}

/// `poll(2)`, retried on EINTR.
fn poll(fds: &mut [libc::pollfd], timeout_ms: i32) -> io::Result<usize> {
    loop {
        let len = libc::nfds_t::try_from(fds.len())
            .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        // SAFETY: `fds` is a valid, exclusively borrowed array of `len` pollfd structs.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), len, timeout_ms) };
        if n >= 0 {
            return Ok(usize::try_from(n).unwrap_or(0));
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
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
        let waiter = std::thread::spawn(move || watch.readable(a.as_raw_fd(), None).unwrap());
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
            .readable(a.as_raw_fd(), deadline_after(Duration::from_millis(5)))
            .unwrap();
        assert_eq!(wake, Wake::TimedOut);
    }
}
