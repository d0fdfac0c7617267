//! What a transport hands the session: who is on the other end, as the
//! transport established it. A transport (Unix here; TLS in tls.rs) is an
//! accepted `AsyncRead + AsyncWrite` stream plus a [`Peer`], given to
//! `session::serve`.

use super::auth::AuthMode;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    Unix,
    Tls,
}

impl Transport {
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Unix => "unix",
            Transport::Tls => "tls",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Peer {
    pub transport: Transport,
    /// How the transport authenticated the peer (a token in `hello` may
    /// add to it).
    pub auth: AuthMode,
    /// The tenant the transport established (a client certificate's
    /// name, a Unix uid); a token's tenant replaces it.
    pub tenant: String,
    /// Who connected, for the log: `uid:U pid:P` on Unix, `IP:port` on TLS.
    pub address: String,
    /// When the first frame must have arrived, if the transport already
    /// spent part of the bound (the TLS handshake); else the full bound.
    pub first_frame_by: Option<std::time::Instant>,
}
