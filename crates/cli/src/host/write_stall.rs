//! A bound on how long a write to a client may make no progress
//! (`liveness.writeStallMs`, docs/remote.md § Flow control): the
//! connection's write half fails with `TimedOut` once the client has taken
//! no byte for that long while the host had bytes for it. Every write of a
//! session goes through it — `welcome`, `refused`, `receipts`, the relay's
//! frames, `exit` — so a client that stops reading is a disconnect at this
//! bound, whatever the frame's size, and the relay's whole-write and
//! whole-drain bounds (the pong bound) stay as they are on top.
//!
//! The stall clock starts at the first write that cannot proceed and stops
//! at the first that does: a client that reads slowly but steadily is never
//! cut by it.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::AsyncWrite;
use tokio::time::Sleep;

pub struct StallBounded<W> {
    inner: W,
    bound: Duration,
    /// Armed while the client takes nothing.
    stalled: Option<Pin<Box<Sleep>>>,
}

impl<W> StallBounded<W> {
    pub fn new(inner: W, bound: Duration) -> StallBounded<W> {
        StallBounded {
            inner,
            bound,
            stalled: None,
        }
    }

    /// The inner write was pending: pending too, unless the stall has
    /// lasted the bound.
    fn pending<T>(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<T>> {
        let bound = self.bound;
        let timer = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(bound)));
        match timer.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the client took nothing for liveness.writeStallMs",
            ))),
            Poll::Pending => Poll::Pending,
        }
    }

    fn settle<T>(
        &mut self,
        cx: &mut Context<'_>,
        polled: Poll<io::Result<T>>,
    ) -> Poll<io::Result<T>> {
        match polled {
            Poll::Pending => self.pending(cx),
            ready => {
                self.stalled = None;
                ready
            }
        }
    }
}

impl<W: AsyncWrite + Unpin> AsyncWrite for StallBounded<W> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_write(cx, buf);
        this.settle(cx, polled)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_flush(cx);
        this.settle(cx, polled)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_shutdown(cx);
        this.settle(cx, polled)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn a_peer_that_reads_nothing_fails_the_write_and_one_that_reads_does_not() {
        // A pipe of 64 KiB the test's "client" end drains or not.
        let (client, host) = tokio::io::duplex(64 * 1024);
        let mut writer = StallBounded::new(host, Duration::from_secs(5));
        let mut client = client;
        // Steady reading: a 1 MiB write completes although it stalls (the
        // paused clock only advances while everything waits).
        let reader = tokio::spawn(async move {
            let mut buf = vec![0u8; 1 << 20];
            client.read_exact(&mut buf).await.unwrap();
            client
        });
        writer.write_all(&vec![7u8; 1 << 20]).await.unwrap();
        let _client = reader.await.unwrap();
        // Nobody reads any more: the pipe fills, then the bound fails it.
        let failed = writer.write_all(&vec![7u8; 1 << 20]).await.unwrap_err();
        assert_eq!(failed.kind(), io::ErrorKind::TimedOut);
    }
}
