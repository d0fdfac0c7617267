//! The policy model: what a sandboxed program may touch. Parsed strictly
//! from JSON (unknown keys rejected, defaults filled), then reduced to a
//! canonical JSON form whose SHA-256 is the policy digest in the receipt.

use std::path::PathBuf;

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::error_code::ErrorCode;
use crate::request::strict_json::{as_array, as_str, as_u64, FieldError, ObjectReader};

/// The only policy format this launcher understands.
pub const POLICY_FORMAT_VERSION: u64 = 1;
/// Extra mounts beyond this are refused: each costs a descriptor and a mount.
pub const MAX_EXTRA_MOUNTS: usize = 32;
/// Runner environment variables beyond this are refused (bounded argv).
pub const MAX_ENV_ALLOW: usize = 256;

/// Access to a host directory granted inside the sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    None,
    Read,
    Write,
}

impl Access {
    pub fn as_str(self) -> &'static str {
        match self {
            Access::None => "none",
            Access::Read => "read",
            Access::Write => "write",
        }
    }
}

/// `process.identity`: whether a non-root provider's sandboxes get host
/// ids of their own (the default) or, by the caller's explicit choice, run
/// as the provider's own uid and gid (run_identity.rs, docs/security.md).
/// A root provider's sandboxes never run as root, whatever this says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IdentityMode {
    #[default]
    Own,
    SharedWithProvider,
}

impl IdentityMode {
    pub fn as_str(self) -> &'static str {
        match self {
            IdentityMode::Own => "own",
            IdentityMode::SharedWithProvider => "shared-with-provider",
        }
    }
}

/// One additional host path mounted at the same path inside the sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtraMount {
    pub path: PathBuf,
    pub access: Access,
}

pub use crate::request::network_policy::{MediatedNetwork, NetworkFrontend, NetworkMode};

/// Resource ceilings requested by the policy. Carried into the plan and the
/// receipt; applying them is the job of the rlimit/cgroup planners.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Resources {
    pub memory_bytes: Option<u64>,
    pub processes: Option<u64>,
    pub file_size_bytes: Option<u64>,
    pub cpu_seconds: Option<u64>,
    pub open_files: Option<u64>,
    /// networkStreams, networkConcurrentStreams, networkBytesOut,
    /// networkBytesIn (mediated network quotas; engine defaults when absent).
    pub network_quotas: [Option<u64>; 4],
    /// Whether memory/process ceilings must hold for the whole process tree
    /// (a cgroup) or may fall back to per-process rlimits.
    pub tree_limits: TreeLimits,
}

/// `policy.resources.treeLimits`: what happens on a host without a usable
/// cgroup. Absent means `IfAvailable`; the receipt says what was applied.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TreeLimits {
    #[default]
    IfAvailable,
    /// No cgroup → the launch fails with ERR_CORDON_CONFINEMENT_UNAVAILABLE.
    Required,
}

/// A validated policy. Construct it with [`Policy::from_json`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    pub workspace: Access,
    /// `process.identity`: whose uid a non-root provider's sandboxes run as.
    pub identity: IdentityMode,
    pub extra: Vec<ExtraMount>,
    pub network: NetworkMode,
    pub resources: Resources,
    pub environment_allow: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error("invalid policy: {0}")]
    Invalid(#[from] FieldError),
}

impl PolicyError {
    pub fn code(&self) -> ErrorCode {
        match self {
            PolicyError::Invalid(_) => ErrorCode::PolicyInvalid,
        }
    }
}

const TOP_KEYS: &[&str] = &[
    "formatVersion",
    "filesystem",
    "network",
    "process",
    "resources",
    "environment",
];
const FS_KEYS: &[&str] = &["workspace", "temp", "extra"];
const EXTRA_KEYS: &[&str] = &["path", "access"];
const PROCESS_KEYS: &[&str] = &["treeConfinement", "identity"];
const RESOURCE_KEYS: &[&str] = &[
    "memoryBytes",
    "processes",
    "fileSizeBytes",
    "cpuSeconds",
    "openFiles",
    "treeLimits",
    "networkStreams",
    "networkConcurrentStreams",
    "networkBytesOut",
    "networkBytesIn",
];
const ENV_KEYS: &[&str] = &["allow"];

impl Policy {
    /// Validates a policy in the documented order: structure and types
    /// first (`ERR_CORDON_POLICY_INVALID`), then what is refused for now
    /// (`ERR_CORDON_UNSUPPORTED`).
    pub fn from_json(value: &Value) -> Result<Policy, PolicyError> {
        let top = ObjectReader::new("policy", value, TOP_KEYS)?;
        let version = as_u64("policy.formatVersion", top.required("formatVersion")?)?;
        if version != POLICY_FORMAT_VERSION {
            return Err(FieldError::new("policy.formatVersion", "must be 1").into());
        }
        let (workspace, extra) = parse_filesystem(top.required("filesystem")?)?;
        let network = crate::request::network_policy::parse_network(top.required("network")?)?;
        let identity = parse_process(top.required("process")?)?;
        let resources = match top.optional("resources") {
            Some(v) => parse_resources(v)?,
            None => Resources::default(),
        };
        let environment_allow = match top.optional("environment") {
            Some(v) => parse_environment(v)?,
            None => Vec::new(),
        };
        Ok(Policy {
            workspace,
            identity,
            extra,
            network,
            resources,
            environment_allow,
        })
    }

    /// The normalized policy (defaults filled, keys sorted by serde_json's
    /// ordered map) as compact JSON: the input of [`Policy::digest`].
    pub fn canonical_json(&self) -> Value {
        json!({
            "formatVersion": POLICY_FORMAT_VERSION,
            "filesystem": self.filesystem_json(),
            "network": self.network_json(),
            "process": {"treeConfinement": "required", "identity": self.identity.as_str()},
            "resources": self.resources_json(),
            "environment": {"allow": self.environment_allow},
        })
    }

    /// `sha256:<hex>` of the canonical JSON text.
    pub fn digest(&self) -> String {
        let text = self.canonical_json().to_string();
        format!("sha256:{}", hex(&Sha256::digest(text.as_bytes())))
    }

    pub fn filesystem_json(&self) -> Value {
        let extra: Vec<Value> = self
            .extra
            .iter()
            .map(|m| json!({"path": m.path.to_string_lossy(), "access": m.access.as_str()}))
            .collect();
        json!({"workspace": self.workspace.as_str(), "temp": "write", "extra": extra})
    }

    pub fn network_json(&self) -> Value {
        crate::request::network_policy::network_json(&self.network)
    }

    pub fn resources_json(&self) -> Value {
        let r = &self.resources;
        let pairs = [
            ("memoryBytes", r.memory_bytes),
            ("processes", r.processes),
            ("fileSizeBytes", r.file_size_bytes),
            ("cpuSeconds", r.cpu_seconds),
            ("openFiles", r.open_files),
        ];
        let quotas = crate::request::network_policy::QUOTA_KEYS
            .iter()
            .zip(r.network_quotas);
        let mut map = pairs
            .into_iter()
            .chain(quotas.map(|(k, v)| (*k, v)))
            .filter_map(|(k, v)| v.map(|n| (k.to_string(), json!(n))))
            .collect::<serde_json::Map<_, _>>();
        // Only when set, so policies without it keep their digest.
        if r.tree_limits == TreeLimits::Required {
            map.insert("treeLimits".into(), json!("required"));
        }
        Value::Object(map)
    }
}

/// Lower-case hex of a byte string.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn parse_access(path: &str, value: &Value, allowed: &[Access]) -> Result<Access, FieldError> {
    let text = as_str(path, value)?;
    allowed
        .iter()
        .copied()
        .find(|a| a.as_str() == text)
        .ok_or_else(|| {
            let names: Vec<&str> = allowed.iter().map(|a| a.as_str()).collect();
            FieldError::new(path, format!("must be one of {}", names.join(", ")))
        })
}

fn parse_filesystem(value: &Value) -> Result<(Access, Vec<ExtraMount>), FieldError> {
    let fs = ObjectReader::new("policy.filesystem", value, FS_KEYS)?;
    let all = [Access::Read, Access::Write, Access::None];
    let workspace = parse_access(
        "policy.filesystem.workspace",
        fs.required("workspace")?,
        &all,
    )?;
    parse_access(
        "policy.filesystem.temp",
        fs.required("temp")?,
        &[Access::Write],
    )?;
    let mut extra = Vec::new();
    if let Some(list) = fs.optional("extra") {
        let list = as_array("policy.filesystem.extra", list)?;
        if list.len() > MAX_EXTRA_MOUNTS {
            return Err(FieldError::new(
                "policy.filesystem.extra",
                format!("at most {MAX_EXTRA_MOUNTS} entries"),
            ));
        }
        for (i, item) in list.iter().enumerate() {
            extra.push(parse_extra(&format!("policy.filesystem.extra[{i}]"), item)?);
        }
    }
    refuse_nested_extras(&extra)?;
    Ok((workspace, extra))
}

/// bwrap binds extras in policy order, so an extra at or under an earlier
/// one's path would be covered by (or cover) it: a `read` child under a
/// later `write` parent was writable while the receipt said `read`
/// (round 4, R4-2). Components, not strings: `/a/bc` is not under `/a/b`.
fn refuse_nested_extras(extra: &[ExtraMount]) -> Result<(), FieldError> {
    for (j, later) in extra.iter().enumerate() {
        for (i, earlier) in extra[..j].iter().enumerate() {
            let nested =
                later.path.starts_with(&earlier.path) || earlier.path.starts_with(&later.path);
            if nested {
                return Err(FieldError::new(
                    &format!("policy.filesystem.extra[{j}].path"),
                    format!(
                        "{} is equal to or nested with policy.filesystem.extra[{i}].path {}; give each host directory once",
                        later.path.display(),
                        earlier.path.display()
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn parse_extra(path: &str, value: &Value) -> Result<ExtraMount, FieldError> {
    let item = ObjectReader::new(path, value, EXTRA_KEYS)?;
    let where_ = item.required_str("path")?;
    let dest = crate::request::paths::normalized_absolute(where_)
        .map_err(|reason| FieldError::new(&item.child_path("path"), reason))?;
    if crate::request::paths::is_reserved_sandbox_path(&dest) {
        return Err(FieldError::new(
            &item.child_path("path"),
            "overlaps a path the sandbox layout owns (/, /usr, /proc, /dev, /tmp, /workspace, ...)",
        ));
    }
    let access = parse_access(
        &item.child_path("access"),
        item.required("access")?,
        &[Access::Read, Access::Write],
    )?;
    Ok(ExtraMount { path: dest, access })
}

fn parse_process(value: &Value) -> Result<IdentityMode, FieldError> {
    let process = ObjectReader::new("policy.process", value, PROCESS_KEYS)?;
    if process.required_str("treeConfinement")? != "required" {
        return Err(FieldError::new(
            "policy.process.treeConfinement",
            "must be \"required\"",
        ));
    }
    let Some(identity) = process.optional("identity") else {
        return Ok(IdentityMode::Own);
    };
    match as_str("policy.process.identity", identity)? {
        "own" => Ok(IdentityMode::Own),
        "shared-with-provider" => Ok(IdentityMode::SharedWithProvider),
        _ => Err(FieldError::new(
            "policy.process.identity",
            "must be \"own\" or \"shared-with-provider\"",
        )),
    }
}

fn parse_resources(value: &Value) -> Result<Resources, FieldError> {
    let r = ObjectReader::new("policy.resources", value, RESOURCE_KEYS)?;
    let positive = |key: &str| -> Result<Option<u64>, FieldError> {
        match r.optional_u64(key)? {
            Some(0) => Err(FieldError::new(&r.child_path(key), "must be at least 1")),
            other => Ok(other),
        }
    };
    Ok(Resources {
        memory_bytes: positive("memoryBytes")?,
        processes: positive("processes")?,
        file_size_bytes: positive("fileSizeBytes")?,
        cpu_seconds: positive("cpuSeconds")?,
        open_files: positive("openFiles")?,
        network_quotas: [
            positive("networkStreams")?,
            positive("networkConcurrentStreams")?,
            positive("networkBytesOut")?,
            positive("networkBytesIn")?,
        ],
        tree_limits: match r.optional_str("treeLimits")? {
            None | Some("if-available") => TreeLimits::IfAvailable,
            Some("required") => TreeLimits::Required,
            Some(_) => {
                let path = r.child_path("treeLimits");
                return Err(FieldError::new(
                    &path,
                    "must be \"required\" or \"if-available\"",
                ));
            }
        },
    })
}

fn parse_environment(value: &Value) -> Result<Vec<String>, FieldError> {
    let env = ObjectReader::new("policy.environment", value, ENV_KEYS)?;
    let Some(list) = env.optional("allow") else {
        return Ok(Vec::new());
    };
    let list = as_array("policy.environment.allow", list)?;
    if list.len() > MAX_ENV_ALLOW {
        return Err(FieldError::new(
            "policy.environment.allow",
            format!("at most {MAX_ENV_ALLOW} names"),
        ));
    }
    let mut names = Vec::with_capacity(list.len());
    for (i, item) in list.iter().enumerate() {
        let path = format!("policy.environment.allow[{i}]");
        let name = as_str(&path, item)?;
        if !crate::request::paths::is_env_name(name) {
            return Err(FieldError::new(
                &path,
                "must be an environment variable name ([A-Za-z_][A-Za-z0-9_]*)",
            ));
        }
        names.push(name.to_string());
    }
    names.sort();
    names.dedup();
    Ok(names)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
#[path = "policy_tests.rs"]
mod tests;
