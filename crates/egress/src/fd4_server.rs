//! The fd-4 frontend's server side: one request in flight per channel.
//! Each valid MECQ is admitted and connected; on success the engine makes a
//! stream socketpair, keeps one end for its relay and sends the other in the
//! MECP response via SCM_RIGHTS — the sandbox never holds the upstream socket.

use std::os::fd::AsFd;
use std::os::unix::net::{UnixDatagram, UnixStream};
use std::sync::Arc;

use crate::cancel::Wake;
use crate::fd4_codec::{decode_request, encode_response, Fd4Status, MAX_REQUEST_BYTES};
use crate::network_receipt::{Frontend, StreamProtocol};
use crate::refusal::Refusal;
use crate::scm_rights::{recv_datagram, send_datagram};
use crate::stream_attempt::{admit_and_connect, run_admitted, Attempt, RunContext};
use crate::thread_set::ThreadSet;

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

/// Serves the channel until the run is cancelled.
pub fn serve(ctx: &Arc<RunContext>, channel: &UnixDatagram, streams: &ThreadSet) {
    loop {
        match ctx.cancel.readable(channel.as_fd(), None) {
            Ok(Wake::Ready) => {}
            _ => return,
        }
        // One byte more than the largest valid request, so an oversized one is seen as such.
        let received = match recv_datagram(channel.as_fd(), MAX_REQUEST_BYTES + 1) {
            Ok(r) => r,
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock
                    || e.kind() == std::io::ErrorKind::Interrupted =>
            {
                continue
            }
            Err(_) => return,
        };
        let reply = |status: Fd4Status| {
            let _ = send_datagram(channel.as_fd(), &encode_response(status), None);
        };
        let mut attempt = Attempt::begin(ctx, Frontend::Fd4, StreamProtocol::Fd4);
        let request = if received.had_ancillary || received.truncated {
            Err(Fd4Status::Malformed)
        } else {
            decode_request(&received.bytes)
        };
        let request = match request {
            Ok(r) => r,
            Err(status) => {
                reply(status);
                let refusal = if status == Fd4Status::Unsupported {
                    Refusal::Unsupported
                } else {
                    Refusal::ProtocolError
                };
                attempt.refuse(ctx, refusal);
                continue;
            }
        };
        let slot = match ctx.quota.open_stream() {
            Ok(slot) => slot,
            Err(refusal) => {
                reply(status_for(refusal));
                attempt.refuse(ctx, refusal);
                continue;
            }
        };
        let connected = match admit_and_connect(ctx, &mut attempt, &request.host, request.port) {
            Ok(c) => c,
            Err(refusal) => {
                reply(status_for(refusal));
                attempt.refuse(ctx, refusal);
                continue;
            }
        };
        let (engine_end, sandbox_end) = match UnixStream::pair() {
            Ok(pair) => pair,
            Err(_) => {
                reply(Fd4Status::Internal);
                attempt.refuse(ctx, Refusal::ConnectFailed);
                continue;
            }
        };
        if send_datagram(
            channel.as_fd(),
            &encode_response(Fd4Status::Ok),
            Some(sandbox_end.as_fd()),
        )
        .is_err()
        {
            attempt.refuse(ctx, Refusal::ProtocolError);
            continue;
        }
        drop(sandbox_end); // the sandbox holds the only copy now
        let stream_ctx = Arc::clone(ctx);
        streams.spawn(move || {
            let _slot = slot;
            run_admitted(&stream_ctx, attempt, connected, engine_end, Vec::new());
        });
    }
}
