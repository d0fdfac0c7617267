//! `listen.tcp` + `tls`: binds the address, builds the TLS transport from
//! the configuration (tls.rs) and hands each authenticated connection to
//! `session::serve` as a [`Peer`] (transport `tls`, auth `mtls` with the
//! certificate's CN as tenant, or `token` whose tenant `hello` names).

use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;

use super::auth::AuthMode;
use super::config_sections::{ClientAuth, Tls};
use super::peer::{Peer, Transport};
use super::session_log::SessionRecord;
use super::tls::{
    self, Authenticated, ClientCertificates, ClientIdentity, TlsFiles, TlsSessions, TlsTransport,
};
use super::{session, Host};

struct HostSessions(Arc<Host>);

impl TlsSessions for HostSessions {
    fn serve(&self, connection: Authenticated) {
        let Authenticated {
            stream,
            client,
            first_frame_by,
            slot,
        } = connection;
        let (auth, tenant) = match client {
            ClientIdentity::Certificate { tenant } => (AuthMode::Mtls, tenant),
            // The token in `hello` names the tenant (session::check_hello).
            ClientIdentity::TokenOnly => (AuthMode::Token, String::new()),
        };
        let address = stream
            .get_ref()
            .0
            .peer_addr()
            .map_or_else(|_| "unknown".into(), |a| a.to_string());
        let peer = Peer {
            transport: Transport::Tls,
            auth,
            tenant,
            address,
            first_frame_by: Some(first_frame_by),
        };
        let served = session::serve(stream, peer, Arc::clone(&self.0), slot);
        self.0.sessions.spawn(served);
    }

    fn spawn_handshake(
        &self,
        task: std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>,
    ) {
        self.0.sessions.spawn(task);
    }

    fn closed_in_handshake(&self, peer: std::net::SocketAddr) {
        self.0.events.handshake_failed();
        drop(SessionRecord::new(
            Arc::clone(&self.0.log),
            "tls",
            peer.to_string(),
        ));
    }
}

/// Builds the transport (every file read and checked) and binds `address`.
pub async fn bind(
    address: &str,
    tls: &Tls,
    tokens_configured: bool,
) -> Result<(TcpListener, TlsTransport), String> {
    let transport = TlsTransport::new(&TlsFiles {
        cert: &tls.cert,
        key: &tls.key,
        client_ca: tls.client_ca.as_deref(),
        client_auth: match tls.client_auth {
            ClientAuth::Required => ClientCertificates::Required,
            ClientAuth::None => ClientCertificates::None,
        },
        tokens_configured,
    })
    .map_err(|e| e.to_string())?;
    let listener = TcpListener::bind(address)
        .await
        .map_err(|e| format!("bind {address}: {e}"))?;
    Ok((listener, transport))
}

/// Accepts until `stop` resolves.
pub async fn serve(
    listener: TcpListener,
    transport: TlsTransport,
    host: Arc<Host>,
    stop: impl std::future::Future<Output = ()>,
) {
    let timing = tls::Timing {
        first_byte: Duration::from_millis(host.config.handshake.first_byte_ms),
        first_frame: Duration::from_millis(host.config.handshake.first_frame_ms),
    };
    tls::serve(
        listener,
        Arc::new(transport),
        Arc::clone(&host.handshakes),
        timing,
        Arc::new(HostSessions(host)),
        stop,
    )
    .await;
}
