//! Sockets the sandbox can write to, as the engine holds them: each is
//! drained through `cordon_passed_fds` before it closes (round 5, R5N-1).
//!
//! Why: the engine's tasks run on a shard of the engines' runtime
//! (engine_runtime.rs), whose one thread many runs share. Closing a Unix socket purges its receive
//! queue in the closing thread — a descriptor the sandbox queued there and
//! the engine never read (a connection refused at accept, the fd-4 channel
//! at run end, a stream or a backlog connection at a stop) is dropped on that
//! worker, and a TCP socket with `SO_LINGER` set holds it in `tcp_close` for
//! the linger time: two such runs froze every run of the provider. Drained
//! first (shut down, then every queued descriptor received and neutralised),
//! the close on the worker drops nothing the sandbox passed.

use std::ops::Deref;
use std::os::fd::{AsFd, OwnedFd};

use tokio::io::unix::AsyncFd;
use tokio::net::UnixListener;

/// A connection the sandbox writes to (an accepted proxy or engine-socket
/// connection, the engine's end of an fd-4 stream): drained when dropped,
/// on whatever path and in whatever phase it is dropped.
#[derive(Debug)]
pub struct SandboxStream<T: AsFd>(T);

impl<T: AsFd> SandboxStream<T> {
    /// Wraps `socket` before anything reads it: out-of-band bytes are taken
    /// inline from here on, so the descriptors one carries reach the reads'
    /// neutralising instead of being closed inside a read on the shard's
    /// thread (cordon_passed_fds::read_out_of_band_inline, W25-1).
    pub fn new(socket: T) -> Self {
        cordon_passed_fds::read_out_of_band_inline(socket.as_fd());
        Self(socket)
    }
}

impl<T: AsFd> Deref for SandboxStream<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: AsFd> Drop for SandboxStream<T> {
    fn drop(&mut self) {
        cordon_passed_fds::drain(self.0.as_fd());
    }
}

/// The run's listener (the sandbox can connect to it): new connections are
/// refused and every one still in the backlog is drained when it drops.
#[derive(Debug)]
pub struct SandboxListener(pub UnixListener);

impl Drop for SandboxListener {
    fn drop(&mut self) {
        cordon_passed_fds::drain_listener(self.0.as_fd());
    }
}

/// The fd-4 channel: drained and closed on the passed-fds closer thread
/// when dropped (a seqpacket queue can hide a passed descriptor from a
/// drain behind zero-length records sent in the instant before its
/// shutdown; once per run, the closer thread costs nothing that matters).
#[derive(Debug)]
pub struct SandboxChannel(
    pub Option<AsyncFd<OwnedFd>>,
    pub crate::fd4_channel::PeerCopy,
);

impl Drop for SandboxChannel {
    fn drop(&mut self) {
        if let Some(channel) = self.0.take() {
            crate::fd4_channel::close(channel.into_inner(), &self.1);
        }
    }
}
