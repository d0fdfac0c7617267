//! Why a stream was refused or closed early. The strings are stable: they
//! appear in network receipts and docs/network.md, and callers branch on them.

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Refusal {
    /// The run's policy has no network at all.
    NetworkNone,
    /// The requested host is not a canonical name or strict IPv4 literal.
    MalformedName,
    /// No allowlist entry has exactly this host and port.
    NoDestination,
    /// requireTlsSni, but the first client bytes were not a ClientHello with SNI.
    SniAbsent,
    /// requireTlsSni, and the SNI differs from the allowed name.
    SniMismatch,
    /// The address (literal or resolved) is not global and the entry does not allow it.
    PrivateAddress,
    /// The host resolver returned no usable address.
    ResolveFailed,
    /// The upstream refused or reset the TCP connect.
    ConnectFailed,
    /// The upstream did not answer within the connect deadline.
    ConnectTimeout,
    /// The frontend request itself was malformed (bad HTTP head, SOCKS5 bytes, MECQ datagram).
    ProtocolError,
    /// A well-formed request the engine does not serve (SOCKS5 BIND/UDP, https:// forward, IPv6 literal).
    Unsupported,
    /// The run ended while the stream was still connecting.
    Cancelled,
    /// The run's stream-count quota is spent.
    QuotaStreams,
    /// The run already has its maximum of concurrent streams open.
    QuotaConcurrentStreams,
}

impl Refusal {
    pub fn as_str(self) -> &'static str {
        match self {
            Refusal::NetworkNone => "network-none",
            Refusal::MalformedName => "malformed-name",
            Refusal::NoDestination => "no-destination",
            Refusal::SniAbsent => "sni-absent",
            Refusal::SniMismatch => "sni-mismatch",
            Refusal::PrivateAddress => "private-address",
            Refusal::ResolveFailed => "resolve-failed",
            Refusal::ConnectFailed => "connect-failed",
            Refusal::ConnectTimeout => "connect-timeout",
            Refusal::ProtocolError => "protocol-error",
            Refusal::Unsupported => "unsupported",
            Refusal::Cancelled => "cancelled",
            Refusal::QuotaStreams => "quota-streams",
            Refusal::QuotaConcurrentStreams => "quota-concurrent-streams",
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn serialized_reasons_are_the_documented_strings() {
        for r in [
            Refusal::NetworkNone,
            Refusal::SniMismatch,
            Refusal::QuotaConcurrentStreams,
            Refusal::PrivateAddress,
        ] {
            assert_eq!(
                serde_json::to_value(r).unwrap(),
                serde_json::Value::String(r.as_str().into())
            );
        }
    }
}
