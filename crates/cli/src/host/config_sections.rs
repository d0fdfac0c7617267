//! The numeric sections of the host configuration and `tls`: each with its
//! defaults (one place) and bounds.

use std::path::PathBuf;

use cordon_launcher::request::paths::normalized_absolute;
use cordon_launcher::request::strict_json::{as_str, FieldError, ObjectReader};
use serde_json::Value;

/// Default host ceiling on `deadlineMs` (ms): a run asking for none gets it.
const DEFAULT_DEADLINE_MS: u64 = 300_000;
/// Default ceiling on each of `stop.graceMs` and `stop.forceMs` (ms): the
/// launcher allows 10 minutes each, which let a client stretch a clamped
/// deadline (or a disconnect) by 20 minutes (round 6, R6-2).
const DEFAULT_STOP_MS: u64 = 5000;
/// Default ceilings on `openFiles` (4 × the per-run default of 256, far
/// below a host's own `RLIMIT_NOFILE`: a request above the host's hard
/// limit failed its launch after `started`, R11-10), `cpuSeconds` (the
/// default deadline's 300 s) and `fileSizeBytes` (1 GiB).
const DEFAULT_OPEN_FILES: u64 = 1024;
const DEFAULT_CPU_SECONDS: u64 = 300;
const DEFAULT_FILE_SIZE_BYTES: u64 = 1 << 30;
/// Default bytes of uploads per session.
const DEFAULT_UPLOAD_BYTES: u64 = 16 << 20;
/// Default concurrent sandboxes per host.
const DEFAULT_MAX_SESSIONS: u64 = 64;
/// Default `retryAfterMs` of a refusal for capacity.
const DEFAULT_RETRY_AFTER_MS: u64 = 1000;
/// Default connections between accept and `spawn` at once.
const DEFAULT_HANDSHAKES: u64 = 32;
/// Default handshake slots one source (IP, IPv6 /64, uid) takes on a busy
/// pool (handshake_slots.rs).
const DEFAULT_HANDSHAKES_PER_SOURCE: u64 = 4;
/// Default bound from the TCP accept to the first byte of the TLS
/// ClientHello (ms): a client sends it at once; an idle connection holds
/// its slot this long, not the whole first-frame bound (R9-4).
const DEFAULT_FIRST_BYTE_MS: u64 = 1000;
/// The protocol's first-frame bound (ms): configurable down, never up.
pub const MAX_FIRST_FRAME_MS: u64 = 5000;
/// `handshake-failed` log lines: a burst, then so many a minute
/// (failure_lines.rs).
const DEFAULT_FAILURE_LOG_BURST: u64 = 20;
const DEFAULT_FAILURE_LOG_PER_MINUTE: u64 = 60;
/// Default receipt retention (receipt_retention.rs): 30 days, 10 000 per
/// tenant (~110 MiB at the ~11 KiB a receipt takes on disk), checked every
/// 10 minutes (R9-9: without a bound every run grew the disk for good).
const DEFAULT_RECEIPT_MAX_AGE_SECONDS: u64 = 30 * 24 * 3600;
const DEFAULT_RECEIPTS_PER_TENANT: u64 = 10_000;
const DEFAULT_RECEIPT_PRUNE_SECONDS: u64 = 600;
/// Ping period and pong bound (ms), docs/remote.md § Liveness.
const DEFAULT_PING_MS: u64 = 10_000;
const DEFAULT_PONG_MS: u64 = 30_000;
/// How long a write to a client may make no progress (write_stall.rs).
const DEFAULT_WRITE_STALL_MS: u64 = 10_000;
/// Upload phase bound (ms): from `welcome` to `spawn`.
const DEFAULT_UPLOAD_PHASE_MS: u64 = 30_000;

/// The host's ceilings: a request above one is clamped to it (`deadlineMs`,
/// `memoryBytes`, `processes`, `openFiles`, `cpuSeconds`, `fileSizeBytes`,
/// the four network quotas, each of `stop.graceMs`/`stop.forceMs` by
/// `stopMs`) or refused (`uploadBytes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ceilings {
    pub deadline_ms: u64,
    pub memory_bytes: u64,
    pub processes: u64,
    pub open_files: u64,
    pub cpu_seconds: u64,
    pub file_size_bytes: u64,
    /// `networkStreams`, `networkConcurrentStreams`, `networkBytesOut`,
    /// `networkBytesIn` (QUOTA_KEYS' order); defaults: the engine's per-run
    /// defaults. Unclamped, a tenant's run held the host's descriptors and
    /// grew its `exit` past the protocol's frame bound (R11-9).
    pub network: [u64; 4],
    pub upload_bytes: u64,
    pub stop_ms: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Admission {
    pub max_sessions: u64,
    /// Sessions per tenant; `None`: only the host-wide cap.
    pub per_tenant: Option<u64>,
    pub retry_after_ms: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Handshake {
    pub max_concurrent: u64,
    pub per_source: u64,
    pub first_byte_ms: u64,
    pub first_frame_ms: u64,
    pub upload_phase_ms: u64,
    pub failure_log_burst: u64,
    pub failure_log_per_minute: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Liveness {
    pub ping_interval_ms: u64,
    pub pong_timeout_ms: u64,
    pub write_stall_ms: u64,
}

/// `receipts`: how long and how many of a tenant's receipts the host keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    pub max_age_seconds: u64,
    pub max_per_tenant: u64,
    pub prune_interval_seconds: u64,
}

/// `tls` as configured; its behaviour belongs to the TLS transport.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tls {
    pub cert: PathBuf,
    pub key: PathBuf,
    /// CA of client certificates; mutual TLS unless `clientAuth: "none"`.
    pub client_ca: Option<PathBuf>,
    pub client_auth: ClientAuth,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientAuth {
    Required,
    /// Only with tokens: a bearer token inside TLS.
    None,
}

fn positive(reader: &ObjectReader, key: &str, default: u64) -> Result<u64, FieldError> {
    match reader.optional_u64(key)? {
        Some(0) => Err(FieldError::new(
            &reader.child_path(key),
            "must be at least 1",
        )),
        Some(n) => Ok(n),
        None => Ok(default),
    }
}

/// The engine's per-run network quotas, in `QUOTA_KEYS`' order: what a run
/// without them gets, and the host's default ceilings on them.
pub fn network_defaults() -> [u64; 4] {
    let d = cordon_launcher::request::network_policy::quotas([None; 4]);
    [
        d.max_streams,
        d.max_concurrent_streams,
        d.max_bytes_out,
        d.max_bytes_in,
    ]
}

impl Ceilings {
    pub fn parse(value: Option<&Value>) -> Result<Ceilings, FieldError> {
        let empty = Value::Object(Default::default());
        const KEYS: &[&str] = &[
            "deadlineMs",
            "memoryBytes",
            "processes",
            "openFiles",
            "cpuSeconds",
            "fileSizeBytes",
            "networkStreams",
            "networkConcurrentStreams",
            "networkBytesOut",
            "networkBytesIn",
            "uploadBytes",
            "stopMs",
        ];
        let r = ObjectReader::new("config.ceilings", value.unwrap_or(&empty), KEYS)?;
        use cordon_launcher::request::network_policy::QUOTA_KEYS;
        use cordon_launcher::request::presets::{MEMORY_BYTES, PROCESSES};
        let defaults = network_defaults();
        let mut network = [0; 4];
        for (i, key) in QUOTA_KEYS.iter().enumerate() {
            network[i] = positive(&r, key, defaults[i])?;
        }
        let deadline_ms = positive(&r, "deadlineMs", DEFAULT_DEADLINE_MS)?;
        if deadline_ms > cordon_launcher::request::launch_request::MAX_DEADLINE_MS {
            return Err(FieldError::new(
                "config.ceilings.deadlineMs",
                "is over 2^31-1",
            ));
        }
        Ok(Ceilings {
            deadline_ms,
            memory_bytes: positive(&r, "memoryBytes", MEMORY_BYTES)?,
            processes: positive(&r, "processes", PROCESSES)?,
            open_files: positive(&r, "openFiles", DEFAULT_OPEN_FILES)?,
            cpu_seconds: positive(&r, "cpuSeconds", DEFAULT_CPU_SECONDS)?,
            file_size_bytes: positive(&r, "fileSizeBytes", DEFAULT_FILE_SIZE_BYTES)?,
            network,
            upload_bytes: positive(&r, "uploadBytes", DEFAULT_UPLOAD_BYTES)?,
            stop_ms: positive(&r, "stopMs", DEFAULT_STOP_MS)?
                .min(cordon_launcher::request::launch_request::MAX_STOP_WINDOW_MS),
        })
    }
}

impl Admission {
    pub fn parse(value: Option<&Value>) -> Result<Admission, FieldError> {
        let empty = Value::Object(Default::default());
        const KEYS: &[&str] = &["maxSessions", "perTenant", "retryAfterMs"];
        let r = ObjectReader::new("config.admission", value.unwrap_or(&empty), KEYS)?;
        let per_tenant = match r.optional_u64("perTenant")? {
            Some(0) => {
                return Err(FieldError::new(
                    "config.admission.perTenant",
                    "must be at least 1",
                ))
            }
            other => other,
        };
        Ok(Admission {
            max_sessions: positive(&r, "maxSessions", DEFAULT_MAX_SESSIONS)?,
            per_tenant,
            retry_after_ms: positive(&r, "retryAfterMs", DEFAULT_RETRY_AFTER_MS)?,
        })
    }
}

impl Handshake {
    pub fn parse(value: Option<&Value>) -> Result<Handshake, FieldError> {
        let empty = Value::Object(Default::default());
        const KEYS: &[&str] = &[
            "maxConcurrent",
            "perSource",
            "firstByteMs",
            "firstFrameMs",
            "uploadPhaseMs",
            "failureLogBurst",
            "failureLogPerMinute",
        ];
        let r = ObjectReader::new("config.handshake", value.unwrap_or(&empty), KEYS)?;
        let first_frame_ms = positive(&r, "firstFrameMs", MAX_FIRST_FRAME_MS)?;
        if first_frame_ms > MAX_FIRST_FRAME_MS {
            return Err(FieldError::new(
                "config.handshake.firstFrameMs",
                format!("is at most {MAX_FIRST_FRAME_MS} (the protocol's bound)"),
            ));
        }
        let first_byte_ms = positive(&r, "firstByteMs", DEFAULT_FIRST_BYTE_MS.min(first_frame_ms))?;
        if first_byte_ms > first_frame_ms {
            return Err(FieldError::new(
                "config.handshake.firstByteMs",
                "is at most firstFrameMs (the whole handshake's bound)",
            ));
        }
        Ok(Handshake {
            max_concurrent: positive(&r, "maxConcurrent", DEFAULT_HANDSHAKES)?,
            per_source: positive(&r, "perSource", DEFAULT_HANDSHAKES_PER_SOURCE)?,
            first_byte_ms,
            first_frame_ms,
            upload_phase_ms: positive(&r, "uploadPhaseMs", DEFAULT_UPLOAD_PHASE_MS)?,
            failure_log_burst: positive(&r, "failureLogBurst", DEFAULT_FAILURE_LOG_BURST)?,
            failure_log_per_minute: positive(
                &r,
                "failureLogPerMinute",
                DEFAULT_FAILURE_LOG_PER_MINUTE,
            )?,
        })
    }
}

impl Liveness {
    pub fn parse(value: Option<&Value>) -> Result<Liveness, FieldError> {
        let empty = Value::Object(Default::default());
        const KEYS: &[&str] = &["pingIntervalMs", "pongTimeoutMs", "writeStallMs"];
        let r = ObjectReader::new("config.liveness", value.unwrap_or(&empty), KEYS)?;
        Ok(Liveness {
            ping_interval_ms: positive(&r, "pingIntervalMs", DEFAULT_PING_MS)?,
            pong_timeout_ms: positive(&r, "pongTimeoutMs", DEFAULT_PONG_MS)?,
            write_stall_ms: positive(&r, "writeStallMs", DEFAULT_WRITE_STALL_MS)?,
        })
    }
}

impl Retention {
    pub fn parse(value: Option<&Value>) -> Result<Retention, FieldError> {
        let empty = Value::Object(Default::default());
        const KEYS: &[&str] = &["maxAgeSeconds", "maxPerTenant", "pruneIntervalSeconds"];
        let r = ObjectReader::new("config.receipts", value.unwrap_or(&empty), KEYS)?;
        Ok(Retention {
            max_age_seconds: positive(&r, "maxAgeSeconds", DEFAULT_RECEIPT_MAX_AGE_SECONDS)?,
            max_per_tenant: positive(&r, "maxPerTenant", DEFAULT_RECEIPTS_PER_TENANT)?,
            prune_interval_seconds: positive(
                &r,
                "pruneIntervalSeconds",
                DEFAULT_RECEIPT_PRUNE_SECONDS,
            )?,
        })
    }
}

impl Tls {
    pub fn parse(value: &Value) -> Result<Tls, FieldError> {
        let r = ObjectReader::new(
            "config.tls",
            value,
            &["cert", "key", "clientCa", "clientAuth"],
        )?;
        let path = |key: &str| -> Result<Option<PathBuf>, FieldError> {
            r.optional(key)
                .map(|v| {
                    let field = r.child_path(key);
                    normalized_absolute(as_str(&field, v)?)
                        .map_err(|why| FieldError::new(&field, why))
                })
                .transpose()
        };
        let required = |key: &str| {
            path(key)?.ok_or_else(|| FieldError::new(&r.child_path(key), "is required"))
        };
        let client_auth = match r.optional_str("clientAuth")? {
            None | Some("required") => ClientAuth::Required,
            Some("none") => ClientAuth::None,
            Some(_) => {
                return Err(FieldError::new(
                    "config.tls.clientAuth",
                    "is \"required\" or \"none\"",
                ))
            }
        };
        let client_ca = path("clientCa")?;
        if client_auth == ClientAuth::Required && client_ca.is_none() {
            return Err(FieldError::new(
                "config.tls.clientCa",
                "is required for mutual TLS (or clientAuth: \"none\" with tokens)",
            ));
        }
        Ok(Tls {
            cert: required("cert")?,
            key: required("key")?,
            client_ca,
            client_auth,
        })
    }
}
