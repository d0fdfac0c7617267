//! Copies bytes both ways between the sandbox's side of a stream and the
//! upstream TCP connection: one task per stream, both directions as futures
//! of that task.
//!
//! Each direction waits only for what it needs next — its source readable,
//! or its destination writable while it holds bytes — so a peer's hang-up or
//! reset on the other socket is never polled in a loop (the CPU spin of
//! issue 19: the thread-per-stream relay polled both sockets every round).
//! A buffer exists only while bytes flow: it is taken when the source turns
//! readable and dropped when the source is drained, so an idle stream holds
//! no buffer at all. EOF is propagated as a half-close once that direction
//! is drained. Every byte is charged to the run's quota before it is
//! forwarded. The run's cancellation is the caller's: it drops this future.

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::net::TcpStream;

use crate::client_stream::ClientStream;
use crate::network_receipt::StreamEnd;
use crate::quota::{Direction, QuotaState};

/// Bytes read per burst (64 KiB: a loopback socket's usual backlog, so one
/// read drains it; allocated only while the burst lasts).
pub const RELAY_CHUNK_BYTES: usize = 64 * 1024;
/// Bytes a direction moves before it lets the other tasks of its shard run
/// (engine_runtime.rs: one thread per shard). Without it a bulk stream moved
/// ~8 MiB per poll (tokio's budget: 128 awaits of 64 KiB), and the shard's
/// reactor was polled only between such polls: a download on one run made
/// every other run's connect on that shard wait 0.2–0.9 s (white-box round
/// of 2026-12-06). 256 KiB takes ~0.2 ms here.
pub const RELAY_TURN_BYTES: usize = 256 * 1024;
/// How long the bytes a quota still allows may take to reach a stalled peer
/// before the stream is closed anyway.
const QUOTA_TAIL_BOUND: Duration = Duration::from_secs(1);

/// Bytes delivered each way so far (read by the receipt even when the relay
/// is cut short by a stop).
#[derive(Debug, Default)]
pub struct Delivered {
    pub from_client: AtomicU64,
    pub to_client: AtomicU64,
}

/// Either end of a stream: the sandbox's side or the upstream's TCP socket.
#[derive(Clone, Copy)]
enum Side<'a> {
    Client(&'a ClientStream),
    Tcp(&'a TcpStream),
}

impl Side<'_> {
    async fn readable(self) -> io::Result<()> {
        match self {
            Side::Client(s) => s.readable().await,
            Side::Tcp(s) => s.readable().await,
        }
    }
    async fn writable(self) -> io::Result<()> {
        match self {
            Side::Client(s) => s.writable().await,
            Side::Tcp(s) => s.writable().await,
        }
    }
    /// One non-blocking read into `buf`'s spare capacity (`buf` is empty).
    fn try_read_buf(self, buf: &mut Vec<u8>) -> io::Result<usize> {
        match self {
            Side::Client(s) => s.try_read_buf(buf),
            Side::Tcp(s) => s.try_read_buf(buf),
        }
    }
    fn try_write(self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Side::Client(s) => s.try_write(buf),
            Side::Tcp(s) => s.try_write(buf),
        }
    }
    fn raw(self) -> RawFd {
        match self {
            Side::Client(s) => s.raw(),
            Side::Tcp(s) => s.as_raw_fd(),
        }
    }
    fn shutdown(self, how: nix::sys::socket::Shutdown) {
        let _ = nix::sys::socket::shutdown(self.raw(), how);
    }
}

/// Relays until both directions reach EOF, an error, or a quota. `prefill`
/// holds client bytes already read (the ClientHello, a rewritten forward
/// head); nothing has been charged for them yet.
pub async fn relay(
    client: &ClientStream,
    upstream: &TcpStream,
    prefill: &[u8],
    quota: &QuotaState,
    delivered: &Delivered,
) -> StreamEnd {
    let (c, u) = (Side::Client(client), Side::Tcp(upstream));
    let out = pipe(c, u, Direction::Out, quota, &delivered.from_client, prefill);
    let inbound = pipe(u, c, Direction::In, quota, &delivered.to_client, &[]);
    tokio::pin!(out, inbound);
    let (mut out_done, mut in_done) = (false, false);
    let end = loop {
        tokio::select! {
            r = &mut out, if !out_done => match r {
                Ok(()) => out_done = true,
                Err(end) => break end,
            },
            r = &mut inbound, if !in_done => match r {
                Ok(()) => in_done = true,
                Err(end) => break end,
            },
        }
        if out_done && in_done {
            break StreamEnd::Closed;
        }
    };
    c.shutdown(nix::sys::socket::Shutdown::Both);
    u.shutdown(nix::sys::socket::Shutdown::Both);
    end
}

/// One direction to its EOF (Ok, after the half-close) or its end reason.
async fn pipe(
    from: Side<'_>,
    to: Side<'_>,
    direction: Direction,
    quota: &QuotaState,
    delivered: &AtomicU64,
    prefill: &[u8],
) -> Result<(), StreamEnd> {
    if !prefill.is_empty() {
        forward(to, prefill, direction, quota, delivered).await?;
    }
    loop {
        from.readable().await.map_err(|_| StreamEnd::Error)?;
        // Not zero-filled: a read fills only what it returns (64 KiB of
        // memset per burst was a measurable share of a loopback stream's CPU).
        let mut buf = Vec::with_capacity(RELAY_CHUNK_BYTES);
        let mut this_turn = 0;
        loop {
            buf.clear();
            match from.try_read_buf(&mut buf) {
                Ok(0) => {
                    to.shutdown(nix::sys::socket::Shutdown::Write);
                    return Ok(());
                }
                Ok(n) => {
                    forward(to, &buf, direction, quota, delivered).await?;
                    this_turn += n;
                    if this_turn >= RELAY_TURN_BYTES {
                        // Deferred until the shard has polled its reactor
                        // (tokio's yield_now), so others' events run first.
                        this_turn = 0;
                        tokio::task::yield_now().await;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break, // buffer dropped
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return Err(StreamEnd::Error),
            }
        }
    }
}

/// Charges `bytes` to the quota and writes them; past the quota, writes what
/// it still allows (bounded) and ends the stream.
async fn forward(
    to: Side<'_>,
    bytes: &[u8],
    direction: Direction,
    quota: &QuotaState,
    delivered: &AtomicU64,
) -> Result<(), StreamEnd> {
    let granted = usize::try_from(quota.grant_bytes(direction, bytes.len() as u64)).unwrap_or(0);
    if granted < bytes.len() {
        let tail = write_all(to, &bytes[..granted], delivered);
        let _ = tokio::time::timeout(QUOTA_TAIL_BOUND, tail).await;
        return Err(match direction {
            Direction::Out => StreamEnd::QuotaBytesOut,
            Direction::In => StreamEnd::QuotaBytesIn,
        });
    }
    write_all(to, bytes, delivered).await
}

async fn write_all(to: Side<'_>, mut bytes: &[u8], delivered: &AtomicU64) -> Result<(), StreamEnd> {
    while !bytes.is_empty() {
        to.writable().await.map_err(|_| StreamEnd::Error)?;
        match to.try_write(bytes) {
            Ok(0) => return Err(StreamEnd::Error),
            Ok(n) => {
                bytes = &bytes[n..];
                delivered.fetch_add(n as u64, Ordering::Relaxed);
            }
            Err(e)
                if e.kind() == io::ErrorKind::WouldBlock
                    || e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return Err(StreamEnd::Error),
        }
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::quota::Quotas;
    use std::io::{Read, Write};
    use std::sync::Arc;

    // The white-box round of 2026-12-06 (W1): a download held its shard's
    // thread for ~8 MiB per poll, so every other task on the shard waited.
    // Here a task beside the relay on the same current-thread runtime counts
    // the bytes delivered between two of its own polls.
    #[test]
    fn a_bulk_download_lets_the_other_tasks_of_its_shard_run_every_turn() {
        const TOTAL: u64 = 96 << 20;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()
            .unwrap();
        let upstream_side = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let client_side = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let (upstream_addr, client_addr) = (
            upstream_side.local_addr().unwrap(),
            client_side.local_addr().unwrap(),
        );
        // An upstream that writes as fast as it can, a sandbox side that
        // reads as fast as it can: the relay always has bytes to move.
        let writer = std::thread::spawn(move || {
            let (mut s, _) = upstream_side.accept().unwrap();
            let chunk = vec![7u8; 1 << 20];
            while s.write_all(&chunk).is_ok() {}
        });
        let reader = std::thread::spawn(move || {
            let mut s = std::net::TcpStream::connect(client_addr).unwrap();
            let mut sink = vec![0u8; 1 << 20];
            while matches!(s.read(&mut sink), Ok(n) if n > 0) {}
        });
        let most_between_polls = runtime.block_on(async move {
            let upstream = TcpStream::connect(upstream_addr).await.unwrap();
            let (accepted, _) = client_side.accept().unwrap();
            accepted.set_nonblocking(true).unwrap();
            let client = ClientStream::Accepted(TcpStream::from_std(accepted).unwrap());
            let delivered = Arc::new(Delivered::default());
            let counted = Arc::clone(&delivered);
            let relaying = tokio::spawn(async move {
                let quota = QuotaState::new(Quotas::default());
                relay(&client, &upstream, &[], &quota, &counted).await
            });
            let (mut last, mut most) = (0, 0);
            loop {
                tokio::task::yield_now().await;
                let now = delivered.to_client.load(Ordering::Relaxed);
                most = most.max(now - last);
                last = now;
                if now >= TOTAL {
                    break;
                }
            }
            relaying.abort();
            most
        });
        drop(runtime); // closes both sockets: the threads end
        writer.join().unwrap();
        reader.join().unwrap();
        assert!(
            most_between_polls <= 4 * RELAY_TURN_BYTES as u64,
            "{most_between_polls} bytes relayed while the other task waited for one poll"
        );
    }
}
