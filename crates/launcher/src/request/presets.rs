//! The policy presets and the launcher's bare resource defaults: the one
//! place they live. `readOnly()` / `workspaceWrite()` / `profile(name)` in
//! JavaScript are built from [`all_json`] (exported by the addon), and
//! `cordon run --policy NAME` uses [`preset`] directly, so the three cannot
//! drift apart.
//!
//! The bare defaults (what a policy without `resources` gets) *are* the
//! presets' ceilings. They used to differ (1 GiB, 256 processes, 256 MiB
//! per file, 60 s against the presets' 256 MiB, 64, 64 MiB, 30 s), so a
//! hand-written policy that left `resources` out ran looser than the named
//! preset it was most likely copied from. A default is what someone gets
//! without asking; it should be the safe, documented choice, not a second,
//! larger set of numbers. The presets still spell the ceilings out, so a
//! preset's receipt (and digest) states them.

use serde_json::{json, Value};

use crate::request::policy::POLICY_FORMAT_VERSION;

/// 256 MiB: ample for a QuickJS runner or a small interpreter, not for a
/// memory bomb (cgroup `memory.max` for the tree, `RLIMIT_AS` per process).
pub const MEMORY_BYTES: u64 = 256 << 20;
/// 64 processes: a shell pipeline fits, a fork bomb stops quickly.
pub const PROCESSES: u64 = 64;
/// 64 MiB per file written: generous output, bounded disk use.
pub const FILE_SIZE_BYTES: u64 = 64 << 20;
/// 30 s of CPU per process.
pub const CPU_SECONDS: u64 = 30;
/// 256 descriptors per process: far above a runner's need, far below the
/// host's. Not spelled out by the presets (it never was, and adding it
/// would change every preset digest).
pub const OPEN_FILES: u64 = 256;

/// The ceilings a launch asks for; `Default` is the bare defaults, which are
/// the presets' ceilings (the module comment says why).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResourceCeilings {
    pub address_space_bytes: u64,
    pub processes: u64,
    pub open_files: u64,
    pub file_size_bytes: u64,
    pub cpu_seconds: u64,
}

impl Default for ResourceCeilings {
    fn default() -> Self {
        DEFAULT_CEILINGS
    }
}

/// The ceilings a launch applies where `policy.resources` is silent.
pub const DEFAULT_CEILINGS: ResourceCeilings = ResourceCeilings {
    address_space_bytes: MEMORY_BYTES,
    processes: PROCESSES,
    open_files: OPEN_FILES,
    file_size_bytes: FILE_SIZE_BYTES,
    cpu_seconds: CPU_SECONDS,
};

/// The preset names, in the order they are listed to users.
pub const NAMES: &[&str] = &["read-only", "workspace-write", "untrusted"];

/// The preset called `name` as a policy document (the JSON a caller would
/// write), or `None` for an unknown name.
pub fn preset(name: &str) -> Option<Value> {
    let workspace = match name {
        "read-only" => "read",
        "workspace-write" => "write",
        "untrusted" => "none",
        _ => return None,
    };
    Some(json!({
        "formatVersion": POLICY_FORMAT_VERSION,
        "filesystem": {"workspace": workspace, "temp": "write", "extra": []},
        "network": {"mode": "none"},
        "process": {"treeConfinement": "required"},
        "resources": {
            "memoryBytes": MEMORY_BYTES,
            "processes": PROCESSES,
            "fileSizeBytes": FILE_SIZE_BYTES,
            "cpuSeconds": CPU_SECONDS,
        },
        "environment": {"allow": []},
    }))
}

/// Every preset, `[{"name": "read-only", "policy": {…}}, …]` in [`NAMES`]
/// order (an array: a JSON object would come out sorted): what the addon
/// exports to JavaScript.
pub fn all_json() -> Value {
    NAMES
        .iter()
        .filter_map(|name| Some(json!({"name": name, "policy": preset(name)?})))
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::plan::confinement::ceilings;
    use crate::request::policy::{Access, Policy, Resources};

    #[test]
    fn every_preset_is_a_valid_policy_with_its_workspace() {
        for (name, access) in NAMES
            .iter()
            .zip([Access::Read, Access::Write, Access::None])
        {
            let policy = Policy::from_json(&preset(name).unwrap()).unwrap();
            assert_eq!(policy.workspace, access, "{name}");
        }
        assert!(preset("readonly").is_none());
        let listed: Vec<Value> = all_json()
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["name"].clone())
            .collect();
        assert_eq!(listed, NAMES);
        assert_eq!(all_json()[1]["policy"], preset(NAMES[1]).unwrap());
    }

    #[test]
    fn the_bare_defaults_are_the_preset_ceilings() {
        let policy = Policy::from_json(&preset("read-only").unwrap()).unwrap();
        assert_eq!(ceilings(&policy.resources), DEFAULT_CEILINGS);
        assert_eq!(ceilings(&Resources::default()), DEFAULT_CEILINGS);
        assert_eq!(ResourceCeilings::default(), DEFAULT_CEILINGS);
    }
}
