//! `policy.network`: `{mode: "none"}` or
//! `{mode: "mediated", allow: [...], frontend?: "auto" | "proxy" | "fd4"}`,
//! each destination `"host:port"` or
//! `{protocol: "tcp", host, port, requireTlsSni?, allowPrivateAddresses?}`.
//! Host and port rules are cordon-egress's (the engine admits with the same
//! code); here they are read strictly and reduced to one canonical object
//! per destination, so both spellings of a destination digest alike.

use serde_json::{json, Value};

use cordon_egress::destination::MAX_DESTINATIONS;
use cordon_egress::{Destination, DestinationOptions, Quotas};

use crate::request::strict_json::{as_array, FieldError, ObjectReader};

/// Which frontends a mediated run gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NetworkFrontend {
    /// Both: the proxy (environment variables) and the fd-4 channel.
    #[default]
    Auto,
    Proxy,
    Fd4,
}

impl NetworkFrontend {
    pub fn as_str(self) -> &'static str {
        match self {
            NetworkFrontend::Auto => "auto",
            NetworkFrontend::Proxy => "proxy",
            NetworkFrontend::Fd4 => "fd4",
        }
    }
    pub fn proxy(self) -> bool {
        matches!(self, NetworkFrontend::Auto | NetworkFrontend::Proxy)
    }
    pub fn fd4(self) -> bool {
        matches!(self, NetworkFrontend::Auto | NetworkFrontend::Fd4)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MediatedNetwork {
    pub allow: Vec<Destination>,
    pub frontend: NetworkFrontend,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NetworkMode {
    None,
    Mediated(MediatedNetwork),
}

const NET_KEYS: &[&str] = &["mode", "allow", "frontend"];
const DEST_KEYS: &[&str] = &[
    "protocol",
    "host",
    "port",
    "requireTlsSni",
    "allowPrivateAddresses",
];

pub fn parse_network(value: &Value) -> Result<NetworkMode, FieldError> {
    let net = ObjectReader::new("policy.network", value, NET_KEYS)?;
    let mode = net.required_str("mode")?;
    match mode {
        "none" => {
            if net
                .optional("allow")
                .is_some_and(|a| !a.as_array().is_some_and(Vec::is_empty))
            {
                return Err(FieldError::new(
                    "policy.network.allow",
                    "must be empty when mode is \"none\"",
                ));
            }
            if net.optional("frontend").is_some() {
                return Err(FieldError::new(
                    "policy.network.frontend",
                    "only applies when mode is \"mediated\"",
                ));
            }
            Ok(NetworkMode::None)
        }
        "mediated" => {
            let allow = match net.optional("allow") {
                Some(v) => parse_allowlist(v)?,
                None => Vec::new(),
            };
            let frontend = match net.optional_str("frontend")? {
                None | Some("auto") => NetworkFrontend::Auto,
                Some("proxy") => NetworkFrontend::Proxy,
                Some("fd4") => NetworkFrontend::Fd4,
                Some(_) => {
                    return Err(FieldError::new(
                        "policy.network.frontend",
                        "must be \"auto\", \"proxy\" or \"fd4\"",
                    ))
                }
            };
            Ok(NetworkMode::Mediated(MediatedNetwork { allow, frontend }))
        }
        _ => Err(FieldError::new(
            "policy.network.mode",
            "must be \"none\" or \"mediated\"",
        )),
    }
}

fn parse_allowlist(value: &Value) -> Result<Vec<Destination>, FieldError> {
    let list = as_array("policy.network.allow", value)?;
    if list.len() > MAX_DESTINATIONS {
        return Err(FieldError::new(
            "policy.network.allow",
            format!("at most {MAX_DESTINATIONS} destinations"),
        ));
    }
    let mut out: Vec<Destination> = Vec::with_capacity(list.len());
    for (i, item) in list.iter().enumerate() {
        let path = format!("policy.network.allow[{i}]");
        let destination = parse_destination(&path, item)?;
        if out
            .iter()
            .any(|d| d.host == destination.host && d.port == destination.port)
        {
            return Err(FieldError::new(
                &path,
                "duplicates an earlier destination's host and port",
            ));
        }
        out.push(destination);
    }
    Ok(out)
}

fn parse_destination(path: &str, value: &Value) -> Result<Destination, FieldError> {
    if let Some(text) = value.as_str() {
        return Destination::parse_pair(text).map_err(|e| FieldError::new(path, e.to_string()));
    }
    let item = ObjectReader::new(path, value, DEST_KEYS)?;
    if item.required_str("protocol")? != "tcp" {
        return Err(FieldError::new(
            &item.child_path("protocol"),
            "must be \"tcp\"",
        ));
    }
    let host = item.required_str("host")?;
    let port = item
        .optional_u64("port")?
        .ok_or_else(|| FieldError::new(&item.child_path("port"), "is required"))?;
    let port = u16::try_from(port)
        .ok()
        .filter(|p| *p > 0)
        .ok_or_else(|| FieldError::new(&item.child_path("port"), "must be 1-65535"))?;
    let flag = |key: &str| -> Result<bool, FieldError> {
        match item.optional(key) {
            None => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(FieldError::new(&item.child_path(key), "must be a boolean")),
        }
    };
    let options = DestinationOptions {
        require_tls_sni: flag("requireTlsSni")?,
        allow_private_addresses: flag("allowPrivateAddresses")?,
    };
    Destination::new(host, port, options).map_err(|e| FieldError::new(path, e.to_string()))
}

/// The canonical form (every destination as a full object, in policy order).
pub fn network_json(mode: &NetworkMode) -> Value {
    match mode {
        NetworkMode::None => json!({"mode": "none"}),
        NetworkMode::Mediated(m) => json!({
            "mode": "mediated",
            "frontend": m.frontend.as_str(),
            "allow": m.allow.iter().map(destination_json).collect::<Vec<_>>(),
        }),
    }
}

pub fn destination_json(d: &Destination) -> Value {
    json!({
        "protocol": "tcp",
        "host": d.host.as_text(),
        "port": d.port,
        "requireTlsSni": d.require_tls_sni,
        "allowPrivateAddresses": d.allow_private_addresses,
    })
}

/// `host:port` strings (the CLI's `--allow`) → destinations.
pub fn parse_pairs(pairs: &[String]) -> Result<Vec<Destination>, FieldError> {
    pairs
        .iter()
        .enumerate()
        .map(|(i, p)| {
            Destination::parse_pair(p)
                .map_err(|e| FieldError::new(&format!("--allow[{i}]"), e.to_string()))
        })
        .collect()
}

/// Network quota keys of `policy.resources` and their defaults.
pub const QUOTA_KEYS: &[&str] = &[
    "networkStreams",
    "networkConcurrentStreams",
    "networkBytesOut",
    "networkBytesIn",
];

/// The run's quotas: the policy's values over the engine's defaults.
pub fn quotas(values: [Option<u64>; 4]) -> Quotas {
    let d = Quotas::default();
    let [streams, concurrent, out, inbound] = values;
    Quotas {
        max_streams: streams.unwrap_or(d.max_streams),
        max_concurrent_streams: concurrent.unwrap_or(d.max_concurrent_streams),
        max_bytes_out: out.unwrap_or(d.max_bytes_out),
        max_bytes_in: inbound.unwrap_or(d.max_bytes_in),
    }
}
