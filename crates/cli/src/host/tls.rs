//! The TLS transport of `cordon host` (docs/remote.md § TLS): TCP with TLS
//! 1.3 only (rustls, `ring` provider). Mutual TLS by default: the client's
//! certificate must chain to `tls.clientCa` and be valid now, and the
//! tenant is its subject **common name** (CN). With `clientAuth: "none"`
//! (allowed only when the host has tokens) no certificate is asked for and
//! the `hello` token names the tenant. Per connection:
//! 1. a handshake slot (the host's concurrency cap and the source's share
//!    of it: handshake_slots.rs) or an immediate close;
//! 2. the first byte of the ClientHello within `handshake.firstByteMs`
//!    (1 s), then the TLS handshake within the first-frame bound (5 s from
//!    the accept);
//! 3. the tenant from the verified certificate (no usable CN → close);
//! 4. the stream, the rest of the bound and the slot go to the session.
//!
//! Every failure — plaintext, a failed handshake, a missing, expired or
//! foreign client certificate — closes the connection with at most a TLS
//! alert: nothing of ours is ever written before the handshake completes.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::server::TlsStream;

use super::handshake_slots::{HandshakeSlot, HandshakeSlots, Source};

/// A tenant name longer than this is refused (it is echoed in receipts).
const MAX_TENANT_BYTES: usize = 128;
/// Back-off after a failed `accept` (EMFILE and the like) instead of spinning.
const ACCEPT_RETRY: Duration = Duration::from_millis(50);

/// The `tls` section as this transport uses it.
pub struct TlsFiles<'a> {
    pub cert: &'a Path,
    pub key: &'a Path,
    pub client_ca: Option<&'a Path>,
    pub client_auth: ClientCertificates,
    /// Whether the host has bearer tokens (required without client certificates).
    pub tokens_configured: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientCertificates {
    /// Mutual TLS: a certificate from `clientCa` is required.
    Required,
    /// No client certificate; the `hello` token authenticates.
    None,
}

#[derive(Debug)]
pub enum TlsSetupError {
    /// A PEM file could not be read or holds nothing usable.
    Pem { path: PathBuf, reason: String },
    /// Mutual TLS without `clientCa`.
    NoClientCa,
    /// `clientAuth: "none"` without tokens would let anyone in.
    NoAuthentication,
    /// rustls refused the certificate, key or CA.
    Config { reason: String },
}

impl std::fmt::Display for TlsSetupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TlsSetupError::Pem { path, reason } => {
                write!(f, "config.tls: {}: {reason}", path.display())
            }
            TlsSetupError::NoClientCa => {
                write!(f, "config.tls.clientCa is required for mutual TLS")
            }
            TlsSetupError::NoAuthentication => write!(
                f,
                "config.tls.clientAuth \"none\" needs config.tokens (a bearer token inside TLS); \
                 TLS without client certificates or tokens is refused"
            ),
            TlsSetupError::Config { reason } => write!(f, "config.tls: {reason}"),
        }
    }
}

/// Who the handshake established.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientIdentity {
    /// A verified client certificate; its subject CN.
    Certificate { tenant: String },
    /// No certificate asked for (`clientAuth: "none"`): the token decides.
    TokenOnly,
}

/// The server side of the handshake, built once at start-up.
pub struct TlsTransport {
    acceptor: tokio_rustls::TlsAcceptor,
    mutual: bool,
}

fn pem_error(path: &Path) -> impl Fn(rustls_pki_types::pem::Error) -> TlsSetupError + '_ {
    move |e| TlsSetupError::Pem {
        path: path.to_path_buf(),
        reason: e.to_string(),
    }
}

fn certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsSetupError> {
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(pem_error(path))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(pem_error(path))?;
    if certs.is_empty() {
        return Err(TlsSetupError::Pem {
            path: path.to_path_buf(),
            reason: "no CERTIFICATE block".into(),
        });
    }
    Ok(certs)
}

impl TlsTransport {
    /// Reads the files and builds the TLS 1.3 server configuration.
    pub fn new(files: &TlsFiles) -> Result<TlsTransport, TlsSetupError> {
        let config_error = |e: rustls::Error| TlsSetupError::Config {
            reason: e.to_string(),
        };
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ServerConfig::builder_with_provider(Arc::clone(&provider))
            .with_protocol_versions(&[&rustls::version::TLS13])
            .map_err(config_error)?;
        let builder = match (files.client_auth, files.client_ca) {
            (ClientCertificates::Required, None) => return Err(TlsSetupError::NoClientCa),
            (ClientCertificates::Required, Some(ca)) => {
                let mut roots = RootCertStore::empty();
                for cert in certificates(ca)? {
                    roots.add(cert).map_err(config_error)?;
                }
                let verifier =
                    WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                        .build()
                        .map_err(|e| TlsSetupError::Config {
                            reason: format!("clientCa: {e}"),
                        })?;
                builder.with_client_cert_verifier(verifier)
            }
            (ClientCertificates::None, _) if !files.tokens_configured => {
                return Err(TlsSetupError::NoAuthentication)
            }
            (ClientCertificates::None, _) => builder.with_no_client_auth(),
        };
        let key = PrivateKeyDer::from_pem_file(files.key).map_err(pem_error(files.key))?;
        let mut config = builder
            .with_single_cert(certificates(files.cert)?, key)
            .map_err(config_error)?;
        // No resumption: every connection presents (and is checked for) its
        // certificate afresh, and the host keeps no ticket state.
        config.send_tls13_tickets = 0;
        config.session_storage = Arc::new(rustls::server::NoServerSessionStorage {});
        Ok(TlsTransport {
            acceptor: tokio_rustls::TlsAcceptor::from(Arc::new(config)),
            mutual: files.client_auth == ClientCertificates::Required,
        })
    }

    /// Steps 2–3 for one accepted socket; `None`: it was closed.
    pub async fn handshake(
        &self,
        tcp: TcpStream,
        bounds: Bounds,
    ) -> Option<(TlsStream<TcpStream>, ClientIdentity)> {
        // A client sends its ClientHello at once: a socket silent past the
        // first-byte bound gives its slot back early (R9-4). `peek` leaves
        // the byte for rustls; 0 is an end of stream.
        let mut first = [0u8; 1];
        let silent_until = bounds.first_byte_by.min(bounds.deadline);
        let wait = silent_until.saturating_duration_since(Instant::now());
        match tokio::time::timeout(wait, tcp.peek(&mut first)).await {
            Ok(Ok(1..)) => {}
            _ => return None,
        }
        let bound = bounds.deadline.saturating_duration_since(Instant::now());
        let stream = tokio::time::timeout(bound, self.acceptor.accept(tcp))
            .await
            .ok()?
            .ok()?;
        if !self.mutual {
            return Some((stream, ClientIdentity::TokenOnly));
        }
        // rustls verified the chain, the validity period and the key usage.
        let leaf = stream.get_ref().1.peer_certificates()?.first()?;
        let tenant = tenant_of_certificate(leaf.as_ref())?;
        Some((stream, ClientIdentity::Certificate { tenant }))
    }
}

/// The subject CN of a DER certificate, if it is one printable, bounded name.
pub fn tenant_of_certificate(der: &[u8]) -> Option<String> {
    let (_, cert) = x509_parser::parse_x509_certificate(der).ok()?;
    let mut names = cert.subject().iter_common_name();
    let name = names.next()?.as_str().ok()?.to_string();
    // Two CNs would make the tenant ambiguous.
    let printable = name.chars().all(|c| !c.is_control());
    (names.next().is_none() && !name.is_empty() && name.len() <= MAX_TENANT_BYTES && printable)
        .then_some(name)
}

/// When an accepted connection must have sent its first byte, and when
/// its whole handshake must be done.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    pub first_byte_by: Instant,
    pub deadline: Instant,
}

/// The bounds of the accept loop, as durations from each accept.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    pub first_byte: Duration,
    pub first_frame: Duration,
}

/// A connection whose handshake succeeded, as the accept loop hands it on.
pub struct Authenticated {
    pub stream: TlsStream<TcpStream>,
    pub client: ClientIdentity,
    /// The end of the first-frame bound (it runs from the accept).
    pub first_frame_by: Instant,
    /// The handshake slot it has held since the accept: handed over, never
    /// released and taken again (a gap in which another connection could
    /// take it, so the cap would close this one after a good handshake).
    pub slot: HandshakeSlot,
}

/// What the accept loop hands each connection to.
pub trait TlsSessions: Send + Sync + 'static {
    /// Serves an authenticated connection until it ends.
    fn serve(&self, connection: Authenticated);
    /// A connection closed before the session (handshake, cap, bound).
    fn closed_in_handshake(&self, _peer: std::net::SocketAddr) {}
    /// Runs one connection's handshake task; the host holds it with its
    /// sessions' tasks, so its stop ends a handshake still in progress
    /// before the log closes ([`InHandshake`] then writes its line).
    fn spawn_handshake(&self, task: std::pin::Pin<Box<dyn Future<Output = ()> + Send>>) {
        drop(tokio::spawn(task));
    }
}

/// A connection in its handshake: [`TlsSessions::closed_in_handshake`] is
/// called when it drops unless it was handed to a session, so a handshake
/// that fails, runs out of time or is ended by the host's stop (its task
/// aborted) gets its line alike.
struct InHandshake {
    sessions: Arc<dyn TlsSessions>,
    peer: std::net::SocketAddr,
    served: bool,
}

impl Drop for InHandshake {
    fn drop(&mut self) {
        if !self.served {
            self.sessions.closed_in_handshake(self.peer);
        }
    }
}

/// The accept loop, until `stop` resolves (steps 1–4 per connection).
pub async fn serve(
    listener: TcpListener,
    transport: Arc<TlsTransport>,
    handshakes: Arc<HandshakeSlots>,
    timing: Timing,
    sessions: Arc<dyn TlsSessions>,
    stop: impl std::future::Future<Output = ()>,
) {
    tokio::pin!(stop);
    loop {
        let accepted = tokio::select! {
            () = &mut stop => return,
            accepted = listener.accept() => accepted,
        };
        let Ok((tcp, address)) = accepted else {
            tokio::time::sleep(ACCEPT_RETRY).await;
            continue;
        };
        // fd 3 carries small request/answer frames (a tool call is one each
        // way): Nagle's algorithm would hold each answer for the peer's
        // delayed ACK (~40 ms a round trip, measured by bench/remote.js).
        // A socket that refuses the option still works, only slower.
        let _ = tcp.set_nodelay(true);
        let now = Instant::now();
        let bounds = Bounds {
            first_byte_by: now + timing.first_byte,
            deadline: now + timing.first_frame,
        };
        // The handshake holds a slot; past the cap (or the source's share
        // of it) the socket is dropped.
        let Some(permit) = handshakes.try_take(Source::of_ip(address.ip())) else {
            sessions.closed_in_handshake(address);
            continue;
        };
        let transport = Arc::clone(&transport);
        let mut pending = InHandshake {
            sessions: Arc::clone(&sessions),
            peer: address,
            served: false,
        };
        sessions.spawn_handshake(Box::pin(async move {
            // The slot is released before the line is written (as before).
            let Some((stream, client)) = transport.handshake(tcp, bounds).await else {
                drop(permit);
                return;
            };
            pending.served = true;
            pending.sessions.serve(Authenticated {
                stream,
                client,
                first_frame_by: bounds.deadline,
                slot: permit,
            });
        }));
    }
}

#[cfg(test)]
#[path = "tls_tests.rs"]
mod tests;
