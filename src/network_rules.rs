//! The egress engine's admission rules, exported for the Code Mode host's
//! `fetch` (lib/code-mode/fetch-admission.js), so that JavaScript restates
//! none of them: the allowlist entry syntax, the canonical form of a
//! requested host and the global-address table (`address_class.rs`).

use std::net::IpAddr;

use cordon_egress::destination::{parse_requested_host, Destination};
use napi_derive::napi;

const INVALID_OPTIONS: &str = "ERR_CORDON_INVALID_OPTIONS";

/// An allowlist entry `"host:port"` parsed exactly as a mediated policy
/// parses it (canonical lowercase LDH name or strict IPv4 literal, no
/// wildcards, no IPv6, port 1–65535); returns it canonical or throws
/// `ERR_CORDON_INVALID_OPTIONS` naming the rule.
#[napi]
pub fn network_destination(text: String) -> napi::Result<String, String> {
    let destination = Destination::parse_pair(&text)
        .map_err(|e| napi::Error::new(INVALID_OPTIONS.to_string(), e.to_string()))?;
    Ok(format!(
        "{}:{}",
        destination.host.as_text(),
        destination.port
    ))
}

/// A requested host canonicalised as the engine does (ASCII lowercase, one
/// trailing dot dropped) and checked against the policy's host syntax;
/// `null` when no allowlist could contain it (`malformed-name`).
#[napi]
pub fn requested_host(text: String) -> Option<String> {
    parse_requested_host(&text).ok().map(|host| host.as_text())
}

/// Whether `ip` (IPv4 or IPv6 text) is a global address; throws
/// `ERR_CORDON_INVALID_OPTIONS` when it is not an address.
#[napi]
pub fn is_global_address(ip: String) -> napi::Result<bool, String> {
    let address: IpAddr = ip.parse().map_err(|_| {
        napi::Error::new(
            INVALID_OPTIONS.to_string(),
            format!("not an IP address: {ip:?}"),
        )
    })?;
    Ok(cordon_egress::address_class::is_global(address))
}
