//! One allowlisted destination: a canonical host (LDH name or strict IPv4
//! literal) and a TCP port, with its per-destination options.
//!
//! The same validation serves the policy (what a provider may write) and
//! admission (what a sandboxed client asks for), so a name the policy could
//! never contain is refused as `malformed-name` rather than looked up.

use std::net::Ipv4Addr;

/// RFC 1035: a name is at most 253 bytes in text form (no trailing dot).
pub const MAX_NAME_BYTES: usize = 253;
/// RFC 1035: a label is at most 63 bytes.
pub const MAX_LABEL_BYTES: usize = 63;
/// A policy names at most this many destinations (bounds admission's scan
/// and the canonical policy's size).
pub const MAX_DESTINATIONS: usize = 1024;

/// A destination host exactly as a policy may name it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Host {
    /// Canonical lowercase LDH name, resolved on the host at connect time.
    Name(String),
    /// Strict dotted-quad IPv4 literal (no leading zeros, no short forms).
    Ipv4(Ipv4Addr),
}

impl Host {
    /// The host's canonical text (what receipts and digests carry).
    pub fn as_text(&self) -> String {
        match self {
            Host::Name(name) => name.clone(),
            Host::Ipv4(ip) => ip.to_string(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DestinationError {
    #[error("host must be a lowercase LDH name (1-253 bytes, labels 1-63 of a-z 0-9 -, no trailing dot) or a strict IPv4 literal: {0:?}")]
    MalformedHost(String),
    #[error("port must be an integer 1-65535: {0:?}")]
    MalformedPort(String),
    #[error("destination must be \"host:port\": {0:?}")]
    MalformedPair(String),
    #[error("requireTlsSni needs a host name; an IPv4 literal carries no SNI: {0}")]
    SniOnLiteral(String),
}

/// One allowlist entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Destination {
    pub host: Host,
    pub port: u16,
    /// The TLS ClientHello's SNI must equal the name before any byte goes upstream.
    pub require_tls_sni: bool,
    /// Admit loopback / RFC 1918 / link-local / ULA … addresses for this destination.
    pub allow_private_addresses: bool,
}

/// Options of the object form, off by default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DestinationOptions {
    pub require_tls_sni: bool,
    pub allow_private_addresses: bool,
}

impl Destination {
    /// Builds a destination from the object form's parts.
    pub fn new(
        host: &str,
        port: u16,
        options: DestinationOptions,
    ) -> Result<Self, DestinationError> {
        let host = parse_host(host)?;
        if port == 0 {
            return Err(DestinationError::MalformedPort("0".into()));
        }
        if options.require_tls_sni && matches!(host, Host::Ipv4(_)) {
            return Err(DestinationError::SniOnLiteral(host.as_text()));
        }
        Ok(Self {
            host,
            port,
            require_tls_sni: options.require_tls_sni,
            allow_private_addresses: options.allow_private_addresses,
        })
    }

    /// Parses the string form `"host:port"` (no options).
    pub fn parse_pair(text: &str) -> Result<Self, DestinationError> {
        let (host, port) = text
            .rsplit_once(':')
            .ok_or_else(|| DestinationError::MalformedPair(text.into()))?;
        let port = parse_port(port)?;
        Self::new(host, port, DestinationOptions::default())
    }
}

/// Parses a decimal port 1-65535 (no sign, no leading zeros, no spaces).
pub fn parse_port(text: &str) -> Result<u16, DestinationError> {
    let bad = || DestinationError::MalformedPort(text.into());
    if text.is_empty() || text.len() > 5 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    if text.len() > 1 && text.starts_with('0') {
        return Err(bad());
    }
    match text.parse::<u32>() {
        Ok(port @ 1..=65535) => u16::try_from(port).map_err(|_| bad()),
        _ => Err(bad()),
    }
}

/// Parses a host exactly as the policy requires (canonical form only).
pub fn parse_host(text: &str) -> Result<Host, DestinationError> {
    if let Some(ip) = parse_strict_ipv4(text) {
        return Ok(Host::Ipv4(ip));
    }
    if is_ldh_name(text) {
        return Ok(Host::Name(text.to_owned()));
    }
    Err(DestinationError::MalformedHost(text.into()))
}

/// Canonicalises what a client asked for (DNS names are case-insensitive and
/// may carry a trailing root dot) and then applies the policy's strict rules.
pub fn parse_requested_host(text: &str) -> Result<Host, DestinationError> {
    let trimmed = text.strip_suffix('.').unwrap_or(text);
    parse_host(&trimmed.to_ascii_lowercase())
}

/// Four decimal octets 0-255, no leading zeros, nothing else.
pub fn parse_strict_ipv4(text: &str) -> Option<Ipv4Addr> {
    let mut octets = [0u8; 4];
    let mut parts = text.split('.');
    for octet in &mut octets {
        let part = parts.next()?;
        if part.is_empty() || part.len() > 3 || !part.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        if part.len() > 1 && part.starts_with('0') {
            return None;
        }
        *octet = part.parse::<u8>().ok()?;
    }
    if parts.next().is_some() {
        return None;
    }
    Some(Ipv4Addr::from(octets))
}

/// Lowercase LDH: labels of a-z 0-9 '-', not starting or ending with '-',
/// and a last label that is not all digits (so `1.2.3` or `10.0.0.01`, which
/// resolvers may read as an address, is never taken for a name).
fn is_ldh_name(text: &str) -> bool {
    if text.is_empty() || text.len() > MAX_NAME_BYTES {
        return false;
    }
    let labels_ok = text.split('.').all(|label| {
        !label.is_empty()
            && label.len() <= MAX_LABEL_BYTES
            && !label.starts_with('-')
            && !label.ends_with('-')
            && label
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    });
    let last_is_numeric = text
        .rsplit('.')
        .next()
        .is_some_and(|last| last.bytes().all(|b| b.is_ascii_digit()));
    labels_ok && !last_is_numeric
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn canonical_names_and_strict_ipv4_literals_are_hosts() {
        assert_eq!(
            parse_host("example.com"),
            Ok(Host::Name("example.com".into()))
        );
        assert_eq!(parse_host("a-b.c0"), Ok(Host::Name("a-b.c0".into())));
        assert_eq!(parse_host("localhost"), Ok(Host::Name("localhost".into())));
        assert_eq!(parse_host("127.0.0.1"), Ok(Host::Ipv4(Ipv4Addr::LOCALHOST)));
        assert_eq!(
            parse_host("255.255.255.255"),
            Ok(Host::Ipv4(Ipv4Addr::BROADCAST))
        );
    }

    #[test]
    fn non_canonical_or_ambiguous_hosts_are_malformed() {
        for bad in [
            "",
            "Example.com",
            "example.com.",
            "-a.com",
            "a-.com",
            "a..b",
            "a_b.com",
            "1.2.3",
            "01.2.3.4",
            "1.2.3.256",
            "1.2.3.4.5",
            "0x7f.0.0.1",
            "[::1]",
            "::1",
            "a b",
            "é.com",
            "127.1",
            "2130706433",
        ] {
            assert!(parse_host(bad).is_err(), "{bad:?} accepted");
        }
        let long_label = "a".repeat(64);
        assert!(parse_host(&long_label).is_err());
        let name_254 = format!(
            "{}.{}.{}.{}",
            "a".repeat(63),
            "b".repeat(63),
            "c".repeat(63),
            "d".repeat(62)
        );
        assert_eq!(name_254.len(), 254);
        assert!(parse_host(&name_254).is_err());
        assert!(parse_host(&name_254[1..]).is_ok());
    }

    #[test]
    fn pairs_parse_and_ports_are_strict() {
        let d = Destination::parse_pair("api.example.com:443").unwrap();
        assert_eq!(d.host, Host::Name("api.example.com".into()));
        assert_eq!(d.port, 443);
        assert!(!d.require_tls_sni && !d.allow_private_addresses);
        for bad in [
            "api.example.com",
            "a:0",
            "a:65536",
            "a:+1",
            "a:01",
            "a: 1",
            ":80",
            "a:",
        ] {
            assert!(Destination::parse_pair(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn requiring_sni_on_an_ip_literal_is_refused() {
        let opts = DestinationOptions {
            require_tls_sni: true,
            allow_private_addresses: false,
        };
        assert!(matches!(
            Destination::new("10.0.0.1", 443, opts),
            Err(DestinationError::SniOnLiteral(_))
        ));
        assert!(Destination::new("a.example", 443, opts).is_ok());
    }

    #[test]
    fn requested_hosts_are_lowercased_and_lose_the_root_dot() {
        assert_eq!(
            parse_requested_host("API.Example.COM."),
            Ok(Host::Name("api.example.com".into()))
        );
        assert!(parse_requested_host("a..").is_err());
    }
}
