//! One connection to the proxy frontend, as one task: a connection the
//! engine accepted on the proxy port's listener, or one to the engine
//! socket (the client's socket a relay hands over on it, or the connection
//! itself); sniff the protocol
//! from the first byte (0x05 = SOCKS5, anything else = HTTP), read its
//! request within the handshake deadline, answer it, then hand the stream
//! to the shared tail. The whole session races the run's stop
//! ([`until_cancelled`]), so a stop lands as `cancelled` in any phase.

use std::sync::Arc;
use std::time::Duration;

use tokio::net::UnixStream;
use tokio::time::{timeout, timeout_at, Instant};

use crate::client_io::{drain, read_more, write_all};
use crate::client_stream::{self, ClientStream};
use crate::http_request::{parse_head, HeadError, HeadParse, HttpRequest, MAX_HEAD_BYTES};
use crate::network_receipt::{Frontend, StreamProtocol};
use crate::refusal::Refusal;
use crate::sandbox_socket::SandboxStream;
use crate::socks5;
use crate::stream_attempt::{
    admit_and_connect, run_admitted, until_cancelled, Attempt, Outcome, RunContext,
};

/// Where a proxy session's client comes from.
pub enum Source {
    /// A connection to the engine socket: a relay's hand-over, or a client
    /// speaking to the engine socket itself.
    Connection(SandboxStream<UnixStream>),
    /// A connection the engine accepted on the proxy port's listener.
    Accepted(ClientStream),
}

/// Serves one accepted proxy connection to its end and leaves its receipt.
pub async fn serve(ctx: Arc<RunContext>, source: Source) {
    let mut attempt = Attempt::begin(&ctx, Frontend::Proxy, StreamProtocol::Unknown);
    let outcome = until_cancelled(&ctx, session(&ctx, &mut attempt, source)).await;
    attempt.settle(&ctx, outcome);
}

/// What the client asked for, and the bytes it sent past its request.
struct Request {
    host: String,
    port: u16,
    prefix: Vec<u8>,
}

async fn session(ctx: &Arc<RunContext>, attempt: &mut Attempt, source: Source) -> Outcome {
    let deadline = Instant::now() + ctx.handshake_timeout;
    let (client, mut buf) = match source {
        Source::Accepted(client) => (client, Vec::new()),
        Source::Connection(unix) => {
            let taken = timeout_at(deadline, client_stream::take(unix)).await;
            match taken.unwrap_or(Err(Refusal::ProtocolError)) {
                Ok(taken) => taken,
                Err(refusal) => return Outcome::Refused(refusal),
            }
        }
    };
    let request = timeout_at(deadline, async {
        if buf.is_empty() {
            read_more(&client, &mut buf, MAX_HEAD_BYTES)
                .await
                .map_err(|_| Refusal::ProtocolError)?;
        }
        if buf.first() == Some(&socks5::VERSION) {
            attempt.receipt.protocol = StreamProtocol::Socks5;
            socks_request(&client, buf).await
        } else {
            http_request(&client, buf, &mut attempt.receipt.protocol).await
        }
    })
    .await
    .unwrap_or(Err(Refusal::ProtocolError));
    let request = match request {
        Ok(request) => request,
        Err(refusal) => return Outcome::Refused(refusal),
    };
    let protocol = attempt.receipt.protocol;
    let connected = match admit_and_connect(ctx, attempt, &request.host, request.port).await {
        Ok(c) => c,
        Err(refusal) => {
            reply(ctx, &client, &refusal_bytes(protocol, refusal)).await;
            return Outcome::Refused(refusal);
        }
    };
    let success: &[u8] = match protocol {
        StreamProtocol::HttpConnect => b"HTTP/1.1 200 Connection established\r\n\r\n",
        StreamProtocol::Socks5 => &socks5::reply(socks5::Reply::Succeeded),
        _ => b"",
    };
    if !reply(ctx, &client, success).await {
        return Outcome::Refused(Refusal::ProtocolError);
    }
    run_admitted(ctx, attempt, connected, client, request.prefix).await
}

/// A reply to the client, bounded by the handshake deadline (true when sent).
async fn reply(ctx: &RunContext, client: &ClientStream, bytes: &[u8]) -> bool {
    bounded(ctx.handshake_timeout, write_all(client, bytes)).await
}

async fn bounded<E>(limit: Duration, f: impl std::future::Future<Output = Result<(), E>>) -> bool {
    matches!(timeout(limit, f).await, Ok(Ok(())))
}

/// The refusal as the client's protocol says it (HTTP only before a head
/// was read: then the protocol is unknown and nothing is written).
fn refusal_bytes(protocol: StreamProtocol, refusal: Refusal) -> Vec<u8> {
    match protocol {
        StreamProtocol::Socks5 => socks5::reply(socks_reply(refusal)).to_vec(),
        StreamProtocol::HttpConnect | StreamProtocol::HttpForward | StreamProtocol::Unknown => {
            http_refusal(refusal)
        }
        StreamProtocol::Fd4 => Vec::new(),
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
fn http_refusal(refusal: Refusal) -> Vec<u8> {
    let body = format!("cordon: {}\n", refusal.as_str());
    format!(
        "HTTP/1.1 {}\r\nX-Cordon-Refusal: {}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        http_status(refusal),
        refusal.as_str(),
        body.len()
    )
    .into_bytes()
}

async fn http_request(
    client: &ClientStream,
    mut buf: Vec<u8>,
    protocol: &mut StreamProtocol,
) -> Result<Request, Refusal> {
    let (request, used) = loop {
        match parse_head(&buf) {
            HeadParse::Done(request, used) => break (request, used),
            HeadParse::Invalid(error) => {
                let refusal = if error == HeadError::UnsupportedScheme {
                    Refusal::Unsupported
                } else {
                    Refusal::ProtocolError
                };
                let _ = write_all(client, &http_refusal(refusal)).await;
                drain(client).await;
                return Err(refusal);
            }
            HeadParse::Incomplete => {
                let room = MAX_HEAD_BYTES.saturating_sub(buf.len());
                read_more(client, &mut buf, room)
                    .await
                    .map_err(|_| Refusal::ProtocolError)?;
            }
        }
    };
    let leftover = buf.split_off(used);
    Ok(match request {
        HttpRequest::Connect { host, port } => {
            *protocol = StreamProtocol::HttpConnect;
            Request {
                host,
                port,
                prefix: leftover,
            }
        }
        HttpRequest::Forward {
            host,
            port,
            mut head,
        } => {
            *protocol = StreamProtocol::HttpForward;
            head.extend_from_slice(&leftover);
            Request {
                host,
                port,
                prefix: head,
            }
        }
    })
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

async fn socks_request(client: &ClientStream, mut buf: Vec<u8>) -> Result<Request, Refusal> {
    let used = loop {
        match socks5::parse_greeting(&buf) {
            socks5::Parse::Done(true, used) => break used,
            socks5::Parse::Done(false, _) => {
                let _ = write_all(client, &socks5::greeting_reply(false)).await;
                return Err(Refusal::ProtocolError);
            }
            socks5::Parse::Invalid => return Err(Refusal::ProtocolError),
            socks5::Parse::Incomplete => more(client, &mut buf).await?,
        }
    };
    buf.drain(..used);
    write_all(client, &socks5::greeting_reply(true))
        .await
        .map_err(|_| Refusal::ProtocolError)?;
    let (request, used) = loop {
        match socks5::parse_request(&buf) {
            socks5::Parse::Done(request, used) => break (request, used),
            socks5::Parse::Invalid => {
                let _ = write_all(client, &socks5::reply(socks5::Reply::GeneralFailure)).await;
                return Err(Refusal::ProtocolError);
            }
            socks5::Parse::Incomplete => more(client, &mut buf).await?,
        }
    };
    let prefix = buf.split_off(used);
    match request {
        socks5::Request::Connect { host, port } => Ok(Request { host, port, prefix }),
        socks5::Request::Unsupported(code) => {
            let _ = write_all(client, &socks5::reply(code)).await;
            Err(Refusal::Unsupported)
        }
    }
}

/// Reads more of a SOCKS5 request (bounded like an HTTP head).
async fn more(client: &ClientStream, buf: &mut Vec<u8>) -> Result<(), Refusal> {
    let room = MAX_HEAD_BYTES.saturating_sub(buf.len());
    read_more(client, buf, room)
        .await
        .map_err(|_| Refusal::ProtocolError)
}
