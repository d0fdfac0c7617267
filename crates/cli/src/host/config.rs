//! The host's configuration file (`cordon host --config FILE`, JSON,
//! docs/remote.md § Host configuration), read strictly with the launcher's
//! own reader (unknown keys refused) and validated before anything binds.
//! Everything that touches the host — programs, extra binds, bwrap, the
//! relay, where workspaces and receipts live — comes from here only.

use std::collections::BTreeMap;
use std::path::PathBuf;

use cordon_launcher::request::paths::normalized_absolute;
use cordon_launcher::request::policy::{ExtraMount, Policy};
use cordon_launcher::request::strict_json::{as_array, as_str, as_u64, FieldError, ObjectReader};
use serde_json::{json, Value};

pub use super::config_sections::{Admission, Ceilings, Handshake, Liveness, Retention, Tls};

/// Largest configuration file read (bytes).
const MAX_CONFIG_BYTES: u64 = 1 << 20;

const KEYS: &[&str] = &[
    "listen",
    "tls",
    "metrics",
    "signingKey",
    "logFile",
    "hostId",
    "stateDir",
    "allowUids",
    "tokens",
    "programs",
    "extra",
    "bwrapPath",
    "networkRelayPath",
    "ceilings",
    "admission",
    "handshake",
    "liveness",
    "receipts",
];

/// Where the host listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listen {
    /// A Unix socket at this path (docs/remote.md: placed atomically).
    Unix(PathBuf),
    /// TCP, always under TLS (plain TCP is refused at start-up).
    Tcp(String),
}

#[derive(Debug, Clone)]
pub struct Config {
    pub listen: Listen,
    pub tls: Option<Tls>,
    /// `metrics` as given (its behaviour: host/metrics.rs, when built).
    pub metrics: Option<Value>,
    pub signing_key: Option<PathBuf>,
    /// Where the per-session log lines go (session_log.rs); stderr without.
    pub log_file: Option<PathBuf>,
    pub host_id: String,
    /// Holds `workspaces/` (uploads) and `receipts/` (remote receipts).
    pub state_dir: PathBuf,
    pub allow_uids: Vec<u32>,
    /// sha256 (lower-case hex) of a token → its tenant.
    pub tokens: BTreeMap<String, String>,
    /// Program name on the wire → absolute host path.
    pub programs: BTreeMap<String, String>,
    pub extra: Vec<ExtraMount>,
    pub bwrap_path: Option<String>,
    pub network_relay_path: Option<String>,
    pub ceilings: Ceilings,
    pub admission: Admission,
    pub handshake: Handshake,
    pub liveness: Liveness,
    /// How long and how many receipts are kept (receipt_retention.rs).
    pub receipts: Retention,
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is over {MAX_CONFIG_BYTES} bytes")]
    TooLarge { path: PathBuf },
    #[error("{path}: not valid JSON: {source}")]
    Json {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("{0}")]
    Field(#[from] FieldError),
}

impl Config {
    pub fn load(path: &std::path::Path) -> Result<Config, ConfigError> {
        let read = |source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        };
        let meta = std::fs::metadata(path).map_err(read)?;
        if meta.len() > MAX_CONFIG_BYTES {
            return Err(ConfigError::TooLarge {
                path: path.to_path_buf(),
            });
        }
        let text = std::fs::read_to_string(path).map_err(read)?;
        let value: Value = serde_json::from_str(&text).map_err(|source| ConfigError::Json {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(Config::from_json(&value)?)
    }

    /// Validates the document; plain TCP (a `tcp` listener without `tls`)
    /// is refused here, before anything binds.
    pub fn from_json(value: &Value) -> Result<Config, FieldError> {
        let top = ObjectReader::new("config", value, KEYS)?;
        let listen = parse_listen(top.required("listen")?)?;
        let tls = top.optional("tls").map(Tls::parse).transpose()?;
        if matches!(listen, Listen::Tcp(_)) && tls.is_none() {
            return Err(FieldError::new(
                "config.listen.tcp",
                "needs config.tls: plain TCP is refused (a Unix socket or TLS only)",
            ));
        }
        let metrics = match top.optional("metrics") {
            Some(v @ Value::Object(_)) => Some(v.clone()),
            Some(_) => return Err(FieldError::new("config.metrics", "must be an object")),
            None => None,
        };
        let host_id = match top.optional_str("hostId")? {
            Some(id) => id.to_string(),
            None => default_host_id(),
        };
        Ok(Config {
            listen,
            tls,
            metrics,
            signing_key: optional_path(&top, "signingKey")?,
            log_file: optional_path(&top, "logFile")?,
            host_id,
            state_dir: required_path(&top, "stateDir")?,
            allow_uids: parse_uids(top.optional("allowUids"))?,
            tokens: parse_tokens(top.optional("tokens"))?,
            programs: parse_programs(top.required("programs")?)?,
            extra: parse_extra(top.optional("extra"))?,
            bwrap_path: optional_path(&top, "bwrapPath")?.map(display),
            network_relay_path: optional_path(&top, "networkRelayPath")?.map(display),
            ceilings: Ceilings::parse(top.optional("ceilings"))?,
            admission: Admission::parse(top.optional("admission"))?,
            handshake: Handshake::parse(top.optional("handshake"))?,
            liveness: Liveness::parse(top.optional("liveness"))?,
            receipts: Retention::parse(top.optional("receipts"))?,
        })
    }
}

fn display(path: PathBuf) -> String {
    path.to_string_lossy().into_owned()
}

fn default_host_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "cordon-host".into())
}

fn absolute(field: &str, value: &Value) -> Result<PathBuf, FieldError> {
    normalized_absolute(as_str(field, value)?).map_err(|why| FieldError::new(field, why))
}

fn required_path(top: &ObjectReader, key: &str) -> Result<PathBuf, FieldError> {
    absolute(&top.child_path(key), top.required(key)?)
}

fn optional_path(top: &ObjectReader, key: &str) -> Result<Option<PathBuf>, FieldError> {
    top.optional(key)
        .map(|v| absolute(&top.child_path(key), v))
        .transpose()
}

fn parse_listen(value: &Value) -> Result<Listen, FieldError> {
    let listen = ObjectReader::new("config.listen", value, &["unix", "tcp"])?;
    match (listen.optional("unix"), listen.optional_str("tcp")?) {
        (Some(path), None) => Ok(Listen::Unix(absolute("config.listen.unix", path)?)),
        (None, Some(addr)) => Ok(Listen::Tcp(addr.to_string())),
        _ => Err(FieldError::new(
            "config.listen",
            "must hold exactly one of unix (a socket path) or tcp (host:port, with tls)",
        )),
    }
}

fn parse_uids(value: Option<&Value>) -> Result<Vec<u32>, FieldError> {
    let Some(value) = value else {
        return Ok(Vec::new());
    };
    as_array("config.allowUids", value)?
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let field = format!("config.allowUids[{i}]");
            u32::try_from(as_u64(&field, v)?).map_err(|_| FieldError::new(&field, "not a uid"))
        })
        .collect()
}

/// `{sha256-hex: tenant}`: the file never holds a token itself.
fn parse_tokens(value: Option<&Value>) -> Result<BTreeMap<String, String>, FieldError> {
    let Some(value) = value else {
        return Ok(BTreeMap::new());
    };
    let map = value
        .as_object()
        .ok_or_else(|| FieldError::new("config.tokens", "must be {sha256-hex: tenant}"))?;
    map.iter()
        .map(|(digest, tenant)| {
            let field = format!("config.tokens.{digest}");
            let hex = digest.len() == 64 && digest.bytes().all(|b| b.is_ascii_hexdigit());
            if !hex {
                return Err(FieldError::new(
                    &field,
                    "the key must be a token's sha256 in hex",
                ));
            }
            let tenant = as_str(&field, tenant)?;
            if tenant.is_empty() {
                return Err(FieldError::new(&field, "the tenant must not be empty"));
            }
            Ok((digest.to_ascii_lowercase(), tenant.to_string()))
        })
        .collect()
}

fn parse_programs(value: &Value) -> Result<BTreeMap<String, String>, FieldError> {
    let map = value
        .as_object()
        .ok_or_else(|| FieldError::new("config.programs", "must be {name: absolute path}"))?;
    map.iter()
        .map(|(name, path)| {
            let field = format!("config.programs.{name}");
            Ok((name.clone(), display(absolute(&field, path)?)))
        })
        .collect()
}

/// The extra binds, validated by the launcher's own policy rules (a
/// policy holding them is parsed; its `extra` is what the rules accepted).
fn parse_extra(value: Option<&Value>) -> Result<Vec<ExtraMount>, FieldError> {
    let Some(value) = value else {
        return Ok(Vec::new());
    };
    let policy = json!({
        "formatVersion": 1,
        "filesystem": {"workspace": "read", "temp": "write", "extra": value},
        "network": {"mode": "none"},
        "process": {"treeConfinement": "required"},
    });
    Policy::from_json(&policy)
        .map(|p| p.extra)
        .map_err(|e| FieldError::new("config.extra", e.to_string()))
}
