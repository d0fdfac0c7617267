//! One network receipt per stream attempt, refused or not. Field names are
//! the JSON the receipt file and `wait().networkReceipts` carry.

use serde::Serialize;

use crate::refusal::Refusal;

/// The longest host a receipt records: a canonical name's maximum. A refused
/// request may name anything up to the frontend's own bound (an 8 KiB HTTP
/// head, a 64 KiB MECQ datagram); recording it whole would let 4096 refusals
/// hold megabytes of attacker-chosen text in the provider.
pub const MAX_RECORDED_HOST_BYTES: usize = 253;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Frontend {
    Proxy,
    Fd4,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum StreamProtocol {
    HttpConnect,
    HttpForward,
    Socks5,
    Fd4,
    /// The client's first bytes named no protocol the proxy speaks.
    Unknown,
}

/// How an admitted stream ended (absent for refused attempts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StreamEnd {
    /// Both sides closed.
    Closed,
    /// Either side failed (reset, write error).
    Error,
    /// The run's outbound byte quota was spent.
    QuotaBytesOut,
    /// The run's inbound byte quota was spent.
    QuotaBytesIn,
    /// The run ended (stop, exit) while the stream was open.
    Cancelled,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NetworkReceipt {
    /// Sequence number within the run, from 1.
    pub id: u64,
    pub frontend: Frontend,
    pub protocol: StreamProtocol,
    pub host: Option<String>,
    /// The requested host was longer than MAX_RECORDED_HOST_BYTES and `host`
    /// holds its first bytes only (serialized only when true).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub host_truncated: bool,
    pub port: Option<u16>,
    /// The address the stream was pinned to (after admission).
    pub pinned_address: Option<String>,
    /// "allowed", or the stable refusal reason.
    pub result: String,
    pub end: Option<StreamEnd>,
    /// RFC 3339 UTC, millisecond precision.
    pub started_at: String,
    pub duration_ms: u64,
    /// Bytes the sandbox sent upstream (after the proxy handshake).
    pub bytes_from_client: u64,
    /// Bytes the upstream sent back to the sandbox.
    pub bytes_to_client: u64,
    /// True only when requireTlsSni was checked and matched.
    pub sni_verified: bool,
    pub policy_digest: String,
    pub invocation_id: String,
    /// fd-4 streams handed to the sandbox: where the stream's socket pair
    /// was made, `"empty"` (a pair maker's empty network namespace) or
    /// `"provider"` (the provider's own: no maker could be made then).
    /// Absent for proxy streams (no pair) and for an attempt whose stream
    /// was never handed over (refused, failed or stopped before that).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub channel_namespace: Option<&'static str>,
}

impl NetworkReceipt {
    /// The receipt of an attempt that has just begun: nothing requested,
    /// admitted or relayed yet (result "allowed" until a refusal says
    /// otherwise).
    pub fn new(
        id: u64,
        frontend: Frontend,
        protocol: StreamProtocol,
        started_at: String,
        policy_digest: String,
        invocation_id: String,
    ) -> Self {
        Self {
            id,
            frontend,
            protocol,
            host: None,
            host_truncated: false,
            port: None,
            pinned_address: None,
            result: Self::result_for(None),
            end: None,
            started_at,
            duration_ms: 0,
            bytes_from_client: 0,
            bytes_to_client: 0,
            sni_verified: false,
            policy_digest,
            invocation_id,
            channel_namespace: None,
        }
    }

    /// Records a host as requested, cut to MAX_RECORDED_HOST_BYTES (at a
    /// character boundary) with `host_truncated` set when it was longer.
    pub fn record_host(&mut self, host: &str) {
        let mut end = host.len().min(MAX_RECORDED_HOST_BYTES);
        while !host.is_char_boundary(end) {
            end -= 1;
        }
        self.host = Some(host[..end].to_owned());
        self.host_truncated = end < host.len();
    }

    pub fn result_for(refusal: Option<Refusal>) -> String {
        refusal.map_or_else(|| "allowed".to_owned(), |r| r.as_str().to_owned())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn receipts_serialize_with_camel_case_fields_and_protocol_names() {
        let r = NetworkReceipt {
            id: 1,
            frontend: Frontend::Proxy,
            protocol: StreamProtocol::HttpConnect,
            host: Some("a.example".into()),
            host_truncated: false,
            port: Some(443),
            pinned_address: Some("93.184.216.34".into()),
            result: NetworkReceipt::result_for(Some(Refusal::SniMismatch)),
            end: None,
            started_at: "2026-01-01T00:00:00.000Z".into(),
            duration_ms: 3,
            bytes_from_client: 0,
            bytes_to_client: 0,
            sni_verified: false,
            policy_digest: "sha256:x".into(),
            invocation_id: "inv".into(),
            channel_namespace: None,
        };
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["protocol"], "HTTP_CONNECT");
        assert_eq!(v["frontend"], "proxy");
        assert_eq!(v["result"], "sni-mismatch");
        assert_eq!(v["pinnedAddress"], "93.184.216.34");
        assert!(v.get("bytesFromClient").is_some() && v.get("sniVerified").is_some());
        assert!(v.get("hostTruncated").is_none(), "only present when true");
        assert!(
            v.get("channelNamespace").is_none(),
            "a proxy stream has no pair"
        );
        let fd4 = NetworkReceipt {
            channel_namespace: Some("empty"),
            ..r
        };
        assert_eq!(
            serde_json::to_value(&fd4).unwrap()["channelNamespace"],
            "empty"
        );
    }

    fn blank() -> NetworkReceipt {
        NetworkReceipt::new(
            1,
            Frontend::Proxy,
            StreamProtocol::HttpConnect,
            String::new(),
            String::new(),
            String::new(),
        )
    }

    #[test]
    fn recorded_hosts_are_cut_at_253_bytes_and_flagged() {
        let mut r = blank();
        let exact = "a".repeat(MAX_RECORDED_HOST_BYTES);
        r.record_host(&exact);
        assert_eq!(r.host.as_deref(), Some(exact.as_str()));
        assert!(!r.host_truncated);

        let long = "a".repeat(60) + "." + &"b".repeat(16_000);
        r.record_host(&long);
        assert_eq!(r.host.as_deref(), Some(&long[..MAX_RECORDED_HOST_BYTES]));
        assert!(r.host_truncated);
        assert_eq!(serde_json::to_value(&r).unwrap()["hostTruncated"], true);

        // A multi-byte character straddling the cut is dropped whole.
        let wide = "a".repeat(252) + "é";
        r.record_host(&wide);
        assert_eq!(r.host.as_deref(), Some(&wide[..252]));
        assert!(r.host_truncated);
    }
}
