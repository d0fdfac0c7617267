//! The fd-4 frontend's server side, as one task per run: one request in
//! flight per channel (a seqpacket socket: fd4_channel.rs; each message is
//! called a datagram below). Every datagram counts against the run's stream quota
//! (a junk one too: issue 19, finding 3). Each valid MECQ is admitted and
//! connected; on success the engine makes a stream socketpair, keeps one
//! end for the stream's relay task and sends the other in the MECP response
//! via SCM_RIGHTS — the sandbox never holds the upstream socket.
//!
//! Once the run's stream quota is spent (the datagram that found it so is
//! answered RESOURCE and recorded), the task ends and the channel closes:
//! every later datagram would be refused too, and reading a flood of them
//! would cost the provider CPU for nothing — the sandbox's sends now fail
//! in the sandbox (`EPIPE`, with `SIGPIPE` unless sent with `MSG_NOSIGNAL`),
//! at no cost to the provider.
//!
//! Every receive and every send is an await raced against the run's stop: a
//! program that never reads its replies parks this task (no thread, no CPU)
//! until the run ends, and then the channel is closed with whatever its
//! queue held (issue 19, finding 2).

use std::io;
use std::os::fd::AsFd;
use std::sync::Arc;

use std::os::fd::OwnedFd;

use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

use crate::cancel::Alive;
use crate::fd4_codec::{decode_request, encode_response, Fd4Status, MAX_REQUEST_BYTES};
use crate::network_receipt::{Frontend, StreamProtocol};
use crate::refusal::Refusal;
use crate::sandbox_socket::{SandboxChannel, SandboxStream};
use crate::scm_rights::{recv_datagram, send_datagram, Received};
use crate::stream_attempt::{
    admit_and_connect, run_admitted, until_cancelled, Attempt, Connected, RunContext,
};

fn status_for(refusal: Refusal) -> Fd4Status {
    match refusal {
        Refusal::ConnectTimeout => Fd4Status::Timeout,
        Refusal::ProtocolError | Refusal::MalformedName => Fd4Status::Malformed,
        Refusal::Unsupported => Fd4Status::Unsupported,
        Refusal::QuotaStreams | Refusal::QuotaConcurrentStreams => Fd4Status::Resource,
        Refusal::ConnectFailed => Fd4Status::Internal,
        Refusal::Cancelled => Fd4Status::Cancelled,
        _ => Fd4Status::Denied,
    }
}

/// Serves the channel until the run is cancelled (or the channel fails).
pub async fn serve(
    ctx: Arc<RunContext>,
    channel: AsyncFd<OwnedFd>,
    peer: crate::fd4_channel::PeerCopy,
    _alive: Alive,
) {
    // Drained and closed off this worker however the task ends (R5N-1).
    let held = SandboxChannel(Some(channel), peer);
    let Some(channel) = held.0.as_ref() else {
        return;
    };
    loop {
        // One byte more than the largest valid request, so an oversized one is seen as such.
        let receive = channel.async_io(Interest::READABLE, |fd| {
            if crate::fd4_channel::ended(fd.as_fd(), &held.1) {
                return Ok(None); // shut down by the program, every record read
            }
            let queued = crate::fd4_channel::queued(&held.1);
            let received = recv_datagram(fd.as_fd(), MAX_REQUEST_BYTES + 1)?;
            let empty = received.bytes.is_empty() && !received.had_ancillary;
            if empty && crate::fd4_channel::empty_read_was_the_end(fd.as_fd(), &held.1, queued) {
                return Ok(None); // shut down between the check and the read
            }
            Ok(Some(received))
        });
        let received = tokio::select! {
            biased;
            _ = ctx.cancel.cancelled() => return,
            received = receive => received,
        };
        let serving = match received {
            Ok(Some(received)) => handle(&ctx, channel, received).await,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Serving::On,
            Ok(None) | Err(_) => return,
        };
        if serving == Serving::QuotaSpent || ctx.cancel.is_cancelled() {
            return;
        }
    }
}

/// Whether the channel is still worth reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Serving {
    On,
    /// The run's stream quota is spent: every later datagram would be refused.
    QuotaSpent,
}

/// One datagram: a receipt always, a reply unless the run stops first.
async fn handle(ctx: &Arc<RunContext>, channel: &AsyncFd<OwnedFd>, received: Received) -> Serving {
    let mut attempt = Attempt::begin(ctx, Frontend::Fd4, StreamProtocol::Fd4);
    let slot = match ctx.quota.open_stream() {
        Ok(slot) => slot,
        Err(refusal) => {
            refuse(ctx, channel, attempt, refusal).await;
            return match refusal {
                Refusal::QuotaStreams => Serving::QuotaSpent,
                _ => Serving::On,
            };
        }
    };
    match until_cancelled(ctx, open(ctx, &mut attempt, channel, &received)).await {
        Some(Ok((connected, engine_end))) => {
            let Some(alive) = ctx.tasks.guard() else {
                attempt.settle(ctx, None); // the run is ending
                return Serving::On;
            };
            let task_ctx = Arc::clone(ctx);
            tokio::spawn(ctx.timed(async move {
                let ctx = task_ctx;
                let _held = (slot, alive);
                let client = crate::client_stream::ClientStream::Unix(engine_end);
                let relayed = run_admitted(&ctx, &mut attempt, connected, client, Vec::new());
                let outcome = until_cancelled(&ctx, relayed).await;
                attempt.settle(&ctx, outcome);
            }));
        }
        Some(Err(refusal)) => refuse(ctx, channel, attempt, refusal).await,
        None => attempt.settle(ctx, None),
    }
    Serving::On
}

/// Decode, admit, connect, hand the sandbox its end; the engine's end is returned.
async fn open(
    ctx: &Arc<RunContext>,
    attempt: &mut Attempt,
    channel: &AsyncFd<OwnedFd>,
    received: &Received,
) -> Result<(Connected, SandboxStream<tokio::net::UnixStream>), Refusal> {
    let request = if received.had_ancillary || received.truncated {
        Err(Fd4Status::Malformed)
    } else {
        decode_request(&received.bytes)
    };
    let request = request.map_err(|status| match status {
        Fd4Status::Unsupported => Refusal::Unsupported,
        _ => Refusal::ProtocolError,
    })?;
    let connected = admit_and_connect(ctx, attempt, &request.host, request.port).await?;
    // Made in an empty network namespace, its sandbox end already named
    // (round 16b, R16b-2; round 15w, R15w-6). Off the shard's thread: the
    // pair maker is asked under a lock the launcher's spawns share, and a
    // maker that does not answer is waited for (up to 2 s) and replaced.
    let made = tokio::task::spawn_blocking(|| {
        cordon_passed_fds::sandbox_pair_in(nix::sys::socket::SockType::Stream)
    })
    .await
    .map_err(|_| Refusal::ConnectFailed)?;
    let (engine_end, sandbox_end, namespace) = made
        .map(|(e, s, namespace)| {
            use std::os::unix::net::UnixStream;
            (UnixStream::from(e), UnixStream::from(s), namespace)
        })
        .map_err(|_| Refusal::ConnectFailed)?;
    // A stream carries bytes only: where the kernel can, descriptors sent to
    // the engine's end fail at the sender (round 15, R15-2: each message of
    // them cost a closer thread, and they counted against no quota);
    // elsewhere the engine's reads neutralise them (scm_rights.rs).
    let _ = cordon_passed_fds::refuse_passed_descriptors(std::os::fd::AsFd::as_fd(&engine_end));
    send(channel, &encode_response(Fd4Status::Ok), Some(&sandbox_end))
        .await
        .map_err(|_| Refusal::ProtocolError)?;
    // Recorded once the sandbox holds the stream, per stream: a namespace
    // count spent at this moment puts this pair, and no other, in the
    // provider's namespace.
    attempt.receipt.channel_namespace = Some(namespace.as_str());
    drop(sandbox_end); // the sandbox holds the only copy now
    engine_end
        .set_nonblocking(true)
        .map_err(|_| Refusal::ConnectFailed)?;
    let engine_end =
        tokio::net::UnixStream::from_std(engine_end).map_err(|_| Refusal::ConnectFailed)?;
    Ok((connected, SandboxStream::new(engine_end)))
}

/// Replies with the refusal's status (raced against the stop) and records it.
async fn refuse(ctx: &RunContext, channel: &AsyncFd<OwnedFd>, attempt: Attempt, refusal: Refusal) {
    let reply = encode_response(status_for(refusal));
    let _ = until_cancelled(ctx, send(channel, &reply, None)).await;
    attempt.refuse(ctx, refusal);
}

async fn send(
    channel: &AsyncFd<OwnedFd>,
    bytes: &[u8],
    fd: Option<&std::os::unix::net::UnixStream>,
) -> io::Result<()> {
    channel
        .async_io(Interest::WRITABLE, |channel| {
            send_datagram(channel.as_fd(), bytes, fd.map(|f| f.as_fd()))
        })
        .await
}
