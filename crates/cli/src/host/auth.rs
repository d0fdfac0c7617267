//! Who may open a session: the transport's peer check (Unix: the peer's uid
//! from `SO_PEERCRED` against `allowUids`) and the optional bearer token of
//! `hello`. Tokens are stored as SHA-256 digests and compared in constant
//! time (every configured digest is compared, whatever matched), so neither
//! the file nor the timing tells a token.

use std::collections::BTreeMap;

use sha2::{Digest, Sha256};

/// How the peer authenticated, as `welcome` and the receipt name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthMode {
    PeerCred,
    PeerCredToken,
    Mtls,
    MtlsToken,
    Token,
}

impl AuthMode {
    pub fn as_str(self) -> &'static str {
        match self {
            AuthMode::PeerCred => "peercred",
            AuthMode::PeerCredToken => "peercred+token",
            AuthMode::Mtls => "mtls",
            AuthMode::MtlsToken => "mtls+token",
            AuthMode::Token => "token",
        }
    }

    /// The mode once a token was also presented.
    pub fn with_token(self) -> AuthMode {
        match self {
            AuthMode::PeerCred | AuthMode::PeerCredToken => AuthMode::PeerCredToken,
            AuthMode::Mtls | AuthMode::MtlsToken => AuthMode::MtlsToken,
            AuthMode::Token => AuthMode::Token,
        }
    }
}

/// Whether a Unix peer's uid may connect: one of `allowUids`, or, when the
/// list is empty, the host's own uid only.
pub fn uid_allowed(allow: &[u32], host_uid: u32, peer_uid: u32) -> bool {
    if allow.is_empty() {
        peer_uid == host_uid
    } else {
        allow.contains(&peer_uid)
    }
}

/// Lower-case hex SHA-256 of a token (what the configuration stores).
pub fn token_digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

fn from_hex(text: &str) -> Option<[u8; 32]> {
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(text.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

/// Constant-time equality of two digests.
fn same(a: &[u8; 32], b: &[u8; 32]) -> bool {
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The tenant of `token`, comparing it against every configured digest.
pub fn tenant_of(tokens: &BTreeMap<String, String>, token: &str) -> Option<String> {
    let presented = token_digest(token);
    let mut found = None;
    for (digest, tenant) in tokens {
        let matched = from_hex(digest).is_some_and(|d| same(&d, &presented));
        if matched && found.is_none() {
            found = Some(tenant.clone());
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn a_token_maps_to_its_tenant_by_digest_and_others_to_none() {
        let tokens = BTreeMap::from([(hex(&token_digest("s3cret")), "acme".to_string())]);
        assert_eq!(tenant_of(&tokens, "s3cret"), Some("acme".into()));
        assert_eq!(tenant_of(&tokens, "s3cre"), None);
        assert_eq!(tenant_of(&tokens, ""), None);
    }

    #[test]
    fn an_empty_allow_list_admits_only_the_hosts_own_uid() {
        assert!(uid_allowed(&[], 1000, 1000));
        assert!(!uid_allowed(&[], 1000, 0));
        assert!(uid_allowed(&[5, 7], 1000, 7));
        assert!(!uid_allowed(&[5, 7], 1000, 1000));
    }
}
