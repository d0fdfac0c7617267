//! One connection to the proxy frontend: sniff the protocol from the first
//! byte (0x05 = SOCKS5, anything else = HTTP), read its request within the
//! handshake deadline, answer it, then hand the stream to the shared tail.

use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::time::Instant;

use crate::cancel::{deadline_after, Wake};
use crate::http_request::{parse_head, HeadError, HeadParse, HttpRequest, MAX_HEAD_BYTES};
use crate::network_receipt::{Frontend, StreamProtocol};
use crate::refusal::Refusal;
use crate::socks5;
use crate::stream_attempt::{admit_and_connect, run_admitted, Attempt, RunContext};

/// Serves one accepted proxy connection to its end.
pub fn serve(ctx: &RunContext, client: UnixStream) {
    let deadline = deadline_after(ctx.handshake_timeout);
    let mut buf = Vec::with_capacity(1024);
    if read_more(ctx, &client, &mut buf, deadline).is_err() {
        return Attempt::begin(ctx, Frontend::Proxy, StreamProtocol::Unknown)
            .refuse(ctx, Refusal::ProtocolError);
    }
    if buf.first() == Some(&socks5::VERSION) {
        serve_socks5(ctx, client, buf, deadline);
    } else {
        serve_http(ctx, client, buf, deadline);
    }
}

#[derive(Debug)]
struct ReadFailed;

/// Appends at least one byte (bounded by MAX_HEAD_BYTES) or fails on EOF,
/// error, deadline or cancellation.
fn read_more(
    ctx: &RunContext,
    client: &UnixStream,
    buf: &mut Vec<u8>,
    deadline: Option<Instant>,
) -> Result<(), ReadFailed> {
    if !matches!(
        ctx.cancel.readable(client.as_fd(), deadline),
        Ok(Wake::Ready)
    ) {
        return Err(ReadFailed);
    }
    let mut chunk = [0u8; 4096];
    let room = MAX_HEAD_BYTES.saturating_sub(buf.len()).min(chunk.len());
    if room == 0 {
        return Err(ReadFailed);
    }
    match (&*client).read(&mut chunk[..room]) {
        Ok(0) | Err(_) => Err(ReadFailed),
        Ok(n) => {
            buf.extend_from_slice(&chunk[..n]);
            Ok(())
        }
    }
}

fn http_status(refusal: Refusal) -> &'static str {
    match refusal {
        Refusal::ConnectFailed | Refusal::ResolveFailed => "502 Bad Gateway",
        Refusal::ConnectTimeout => "504 Gateway Timeout",
        Refusal::ProtocolError => "400 Bad Request",
        Refusal::Unsupported => "501 Not Implemented",
        Refusal::QuotaStreams | Refusal::QuotaConcurrentStreams => "429 Too Many Requests",
        _ => "403 Forbidden",
    }
}

/// A refusal the client can read: the status and the stable reason.
fn http_refusal(client: &UnixStream, refusal: Refusal) {
    let body = format!("cordon: {}\n", refusal.as_str());
    let response = format!(
        "HTTP/1.1 {}\r\nX-Cordon-Refusal: {}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        http_status(refusal),
        refusal.as_str(),
        body.len()
    );
    let _ = (&*client).write_all(response.as_bytes());
}

fn serve_http(ctx: &RunContext, client: UnixStream, mut buf: Vec<u8>, deadline: Option<Instant>) {
    let (request, used) = loop {
        match parse_head(&buf) {
            HeadParse::Done(request, used) => break (request, used),
            HeadParse::Invalid(error) => {
                let refusal = if error == HeadError::UnsupportedScheme {
                    Refusal::Unsupported
                } else {
                    Refusal::ProtocolError
                };
                http_refusal(&client, refusal);
                return Attempt::begin(ctx, Frontend::Proxy, StreamProtocol::Unknown)
                    .refuse(ctx, refusal);
            }
            HeadParse::Incomplete => {
                if read_more(ctx, &client, &mut buf, deadline).is_err() {
                    return Attempt::begin(ctx, Frontend::Proxy, StreamProtocol::Unknown)
                        .refuse(ctx, Refusal::ProtocolError);
                }
            }
        }
    };
    let leftover = buf.split_off(used);
    let (protocol, host, port, prefix) = match request {
        HttpRequest::Connect { host, port } => (StreamProtocol::HttpConnect, host, port, leftover),
        HttpRequest::Forward {
            host,
            port,
            mut head,
        } => {
            head.extend_from_slice(&leftover);
            (StreamProtocol::HttpForward, host, port, head)
        }
    };
    let mut attempt = Attempt::begin(ctx, Frontend::Proxy, protocol);
    let connected = match admit_and_connect(ctx, &mut attempt, &host, port) {
        Ok(c) => c,
        Err(refusal) => {
            http_refusal(&client, refusal);
            return attempt.refuse(ctx, refusal);
        }
    };
    if protocol == StreamProtocol::HttpConnect
        && (&client)
            .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
            .is_err()
    {
        return attempt.refuse(ctx, Refusal::ProtocolError);
    }
    run_admitted(ctx, attempt, connected, client, prefix);
}

fn socks_reply(refusal: Refusal) -> socks5::Reply {
    match refusal {
        Refusal::ResolveFailed => socks5::Reply::HostUnreachable,
        Refusal::ConnectFailed => socks5::Reply::ConnectionRefused,
        Refusal::ConnectTimeout => socks5::Reply::TtlExpired,
        Refusal::Unsupported => socks5::Reply::AddressTypeNotSupported,
        Refusal::ProtocolError => socks5::Reply::GeneralFailure,
        _ => socks5::Reply::NotAllowedByRuleset,
    }
}

fn serve_socks5(ctx: &RunContext, client: UnixStream, mut buf: Vec<u8>, deadline: Option<Instant>) {
    let protocol_error = |ctx: &RunContext| {
        Attempt::begin(ctx, Frontend::Proxy, StreamProtocol::Socks5)
            .refuse(ctx, Refusal::ProtocolError)
    };
    let used = loop {
        match socks5::parse_greeting(&buf) {
            socks5::Parse::Done(true, used) => break used,
            socks5::Parse::Done(false, _) => {
                let _ = (&client).write_all(&socks5::greeting_reply(false));
                return protocol_error(ctx);
            }
            socks5::Parse::Invalid => return protocol_error(ctx),
            socks5::Parse::Incomplete => {
                if read_more(ctx, &client, &mut buf, deadline).is_err() {
                    return protocol_error(ctx);
                }
            }
        }
    };
    buf.drain(..used);
    if (&client).write_all(&socks5::greeting_reply(true)).is_err() {
        return protocol_error(ctx);
    }
    let (request, used) = loop {
        match socks5::parse_request(&buf) {
            socks5::Parse::Done(request, used) => break (request, used),
            socks5::Parse::Invalid => {
                let _ = (&client).write_all(&socks5::reply(socks5::Reply::GeneralFailure));
                return protocol_error(ctx);
            }
            socks5::Parse::Incomplete => {
                if read_more(ctx, &client, &mut buf, deadline).is_err() {
                    return protocol_error(ctx);
                }
            }
        }
    };
    let leftover = buf.split_off(used);
    let mut attempt = Attempt::begin(ctx, Frontend::Proxy, StreamProtocol::Socks5);
    let (host, port) = match request {
        socks5::Request::Connect { host, port } => (host, port),
        socks5::Request::Unsupported(reply) => {
            let _ = (&client).write_all(&socks5::reply(reply));
            return attempt.refuse(ctx, Refusal::Unsupported);
        }
    };
    let connected = match admit_and_connect(ctx, &mut attempt, &host, port) {
        Ok(c) => c,
        Err(refusal) => {
            let _ = (&client).write_all(&socks5::reply(socks_reply(refusal)));
            return attempt.refuse(ctx, refusal);
        }
    };
    if (&client)
        .write_all(&socks5::reply(socks5::Reply::Succeeded))
        .is_err()
    {
        return attempt.refuse(ctx, Refusal::ProtocolError);
    }
    run_admitted(ctx, attempt, connected, client, leftover);
}
