//! What a launch needs from the host, checked one item at a time. The same
//! functions serve `cordon doctor` (all checks, printed with their fixes)
//! and the launcher: bwrap is resolved and its namespaces proven by
//! `backend::resolve` (the launcher's own probe, as the launch identity), and
//! cgroups come from the launcher's cached detection — so doctor and launch
//! cannot disagree.
//!
//! Each check reads a little of the host (thin) and decides with a pure
//! function over what it read, which the unit tests exercise directly.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use crate::host::process_identity::{sandbox_identity, SANDBOX_UID};
use crate::plan::confinement;
use crate::run::backend::{self, BackendError};

mod control_root_base;
mod descriptor_refusal;
mod identity;
mod network_relay;
mod pair_namespace;
mod ptrace_scope;
mod sandbox_uid;
pub use control_root_base::check_control_root_base;
pub use descriptor_refusal::{check_descriptor_refusal, kernel_refuses_descriptors};
pub use network_relay::check_network_relay;
pub use pair_namespace::check_pair_namespace;
pub use ptrace_scope::{check_ptrace_scope, read_ptrace_scope};
pub use sandbox_uid::{check_sandbox_uid_unused, status_has_uid, UidProcess};

/// `--size` (bounded tmpfs) and `--disable-userns` first shipped in 0.8.0.
pub const MIN_BWRAP_VERSION: (u32, u32, u32) = (0, 8, 0);

/// Whether a launch cannot proceed without the item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Importance {
    Required,
    /// Used when present (cgroup limits); a policy may still require it.
    Optional,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Check {
    pub name: &'static str,
    pub ok: bool,
    pub importance: Importance,
    pub detail: String,
    /// The exact command or setting that fixes a failed check ("" when ok).
    pub fix: String,
}

impl Check {
    fn pass(name: &'static str, importance: Importance, detail: String) -> Self {
        Self {
            name,
            ok: true,
            importance,
            detail,
            fix: String::new(),
        }
    }

    fn fail(name: &'static str, importance: Importance, detail: String, fix: &str) -> Self {
        Self {
            name,
            ok: false,
            importance,
            detail,
            fix: fix.to_string(),
        }
    }
}

/// What the checks look at; `None` means "the default place".
#[derive(Clone, Debug, Default)]
pub struct ProbeTargets {
    pub bwrap: Option<PathBuf>,
    pub runner: Option<PathBuf>,
    /// `cordon-egress-relay`, which a mediated network policy needs.
    pub network_relay: Option<PathBuf>,
}

/// All checks, in the order a reader should fix them.
pub fn run_all(targets: &ProbeTargets) -> Vec<Check> {
    let resolved = backend::resolve(targets.bwrap.as_deref(), sandbox_identity());
    let mut checks = vec![check_bwrap(&resolved)];
    checks.push(check_userns_sysctls(&read_userns_sysctls()));
    checks.push(check_userns_trial(&resolved));
    checks.push(sandbox_uid::check_host_sandbox_uid());
    checks.push(check_seccomp(&read_seccomp_status()));
    checks.push(check_control_root_base());
    checks.push(check_ptrace_scope(read_ptrace_scope().as_deref()));
    checks.push(check_pair_namespace(&cordon_passed_fds::pair_namespace()));
    checks.push(check_descriptor_refusal(kernel_refuses_descriptors()));
    checks.push(check_cgroup(confinement::host_cgroups().clone()));
    checks.push(identity::check_subordinate_ids());
    checks.push(identity::check_delegated_cgroup());
    if let Some(runner) = targets.runner.as_deref() {
        checks.push(check_executable("runner", runner));
    }
    if let Some(relay) = targets.network_relay.as_deref() {
        checks.push(check_network_relay(relay));
    }
    checks
}

/// Whether this host can launch sandboxes, and why: every check, and the
/// one verdict both `doctor()` and `cordon doctor` present.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    pub ok: bool,
    pub checks: Vec<Check>,
}

impl Report {
    /// Only a failed *required* check makes the host unusable; a missing
    /// optional mechanism (cgroups, Yama) weakens the default policy, it does
    /// not stop launches unless a policy requires it.
    pub fn from_checks(checks: Vec<Check>) -> Report {
        let ok = checks
            .iter()
            .all(|c| c.ok || c.importance != Importance::Required);
        Report { ok, checks }
    }

    /// `{ok, checks: [{name, ok, importance, detail, fix}, …]}`.
    pub fn to_json(&self) -> Value {
        let checks: Vec<Value> = self
            .checks
            .iter()
            .map(|c| {
                let importance = match c.importance {
                    Importance::Required => "required",
                    Importance::Optional => "optional",
                };
                json!({"name": c.name, "ok": c.ok, "importance": importance, "detail": c.detail, "fix": c.fix})
            })
            .collect();
        json!({"ok": self.ok, "checks": checks})
    }
}

/// Every check and the verdict.
pub fn report(targets: &ProbeTargets) -> Report {
    Report::from_checks(run_all(targets))
}

/// `doctor` for the addon and the CLI: `{"bwrapPath"?, "runnerPath"?,
/// "networkRelayPath"?}` in, [`Report::to_json`] out. Unknown keys are
/// ignored: doctor must run even when the caller's options are odd.
pub fn report_json(options: &Value) -> Value {
    let path = |key: &str| options.get(key).and_then(Value::as_str).map(PathBuf::from);
    let targets = ProbeTargets {
        bwrap: path("bwrapPath"),
        runner: path("runnerPath"),
        network_relay: path("networkRelayPath"),
    };
    report(&targets).to_json()
}

fn is_executable_file(path: &Path) -> bool {
    fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Pure: "bubblewrap 0.8.0" → (0, 8, 0).
pub fn parse_bwrap_version(output: &str) -> Option<(u32, u32, u32)> {
    let version = output.split_whitespace().nth(1)?;
    let mut parts = version.split('.').map(|p| p.parse::<u32>().ok());
    Some((
        parts.next()??,
        parts.next()??,
        parts.next().flatten().unwrap_or(0),
    ))
}

/// Pure: whether a `Backend::version` ("0.8.0") is one cordon's argv needs.
pub fn version_supported(version: &str) -> bool {
    parse_bwrap_version(&format!("bubblewrap {version}")).is_some_and(|v| v >= MIN_BWRAP_VERSION)
}

pub fn bwrap_version(path: &Path) -> Option<String> {
    let output = Command::new(path)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .ok()?;
    Some(String::from_utf8_lossy(&output.stdout).trim().to_string())
}

/// Pure: bwrap found (and recent enough), from the launcher's resolution.
/// A namespace failure still means bwrap was found: that is the next check.
pub fn check_bwrap(resolved: &Result<backend::Backend, BackendError>) -> Check {
    const NAME: &str = "bubblewrap";
    const FIX: &str = "apt-get install bubblewrap   # or dnf install bubblewrap; needs >= 0.8.0";
    let (path, version) = match resolved {
        Ok(found) => (found.path.clone(), found.version.clone()),
        Err(BackendError::Namespaces { path, .. }) => {
            let version = bwrap_version(path).unwrap_or_default();
            (
                path.clone(),
                version.trim_start_matches("bubblewrap ").to_string(),
            )
        }
        Err(other) => return Check::fail(NAME, Importance::Required, other.to_string(), FIX),
    };
    if version_supported(&version) {
        let detail = format!("{} (bubblewrap {version})", path.display());
        return Check::pass(NAME, Importance::Required, detail);
    }
    let detail = format!(
        "{} reports {version:?}; cordon needs >= 0.8.0",
        path.display()
    );
    Check::fail(NAME, Importance::Required, detail, FIX)
}

/// The three sysctls that can refuse unprivileged user namespaces (each
/// `None` when the kernel has no such knob).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UsernsSysctls {
    pub unprivileged_userns_clone: Option<String>,
    pub max_user_namespaces: Option<String>,
    pub apparmor_restrict_unprivileged_userns: Option<String>,
}

pub fn read_userns_sysctls() -> UsernsSysctls {
    let read = |path: &str| fs::read_to_string(path).ok().map(|s| s.trim().to_string());
    UsernsSysctls {
        unprivileged_userns_clone: read("/proc/sys/kernel/unprivileged_userns_clone"),
        max_user_namespaces: read("/proc/sys/user/max_user_namespaces"),
        apparmor_restrict_unprivileged_userns: read(
            "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
        ),
    }
}

/// Pure: which sysctl (if any) forbids unprivileged user namespaces.
pub fn check_userns_sysctls(values: &UsernsSysctls) -> Check {
    const NAME: &str = "user namespaces (sysctls)";
    let is = |v: &Option<String>, want: &str| v.as_deref() == Some(want);
    if is(&values.unprivileged_userns_clone, "0") {
        let fix = "sysctl -w kernel.unprivileged_userns_clone=1   # persist in /etc/sysctl.d/";
        let detail = "kernel.unprivileged_userns_clone = 0".to_string();
        return Check::fail(NAME, Importance::Required, detail, fix);
    }
    if is(&values.max_user_namespaces, "0") {
        let fix = "sysctl -w user.max_user_namespaces=15000   # persist in /etc/sysctl.d/";
        let detail = "user.max_user_namespaces = 0".to_string();
        return Check::fail(NAME, Importance::Required, detail, fix);
    }
    if is(&values.apparmor_restrict_unprivileged_userns, "1") {
        let fix = "install an AppArmor profile granting bwrap `userns` (Ubuntu 24.04: \
                   /etc/apparmor.d/bwrap-userns-restrict), or \
                   sysctl -w kernel.apparmor_restrict_unprivileged_userns=0";
        let detail = "kernel.apparmor_restrict_unprivileged_userns = 1 (Ubuntu)".to_string();
        return Check::fail(NAME, Importance::Required, detail, fix);
    }
    let detail = format!(
        "max_user_namespaces = {}",
        values.max_user_namespaces.as_deref().unwrap_or("(absent)")
    );
    Check::pass(NAME, Importance::Required, detail)
}

/// Pure over `backend::resolve`, which really starts a throw-away sandbox
/// with every namespace, as the launch identity (`SANDBOX_UID` when root).
/// Catches what sysctls do not show (LSMs, a container's seccomp profile).
pub fn check_userns_trial(resolved: &Result<backend::Backend, BackendError>) -> Check {
    const NAME: &str = "user namespaces (trial sandbox)";
    let who = if sandbox_identity().is_some() {
        format!("as uid {SANDBOX_UID}")
    } else {
        "as this user".to_string()
    };
    match resolved {
        Ok(_) => {
            let detail = format!("bwrap created every namespace {who}");
            Check::pass(NAME, Importance::Required, detail)
        }
        Err(BackendError::Namespaces { stderr, .. }) => {
            let fix = "fix the user-namespace sysctls above; in a container, allow \
                       unshare/clone(CLONE_NEWUSER) (e.g. docker --security-opt \
                       seccomp=unconfined --security-opt apparmor=unconfined)";
            Check::fail(NAME, Importance::Required, format!("{who}: {stderr}"), fix)
        }
        Err(_) => {
            let detail = "not attempted: bubblewrap is missing".to_string();
            Check::fail(
                NAME,
                Importance::Required,
                detail,
                "install bubblewrap first",
            )
        }
    }
}

/// What the kernel says about seccomp: the `Seccomp:` line of
/// /proc/self/status and /proc/sys/kernel/seccomp/actions_avail.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SeccompStatus {
    pub status_line: Option<String>,
    pub actions_avail: Option<String>,
}

pub fn read_seccomp_status() -> SeccompStatus {
    let status = fs::read_to_string("/proc/self/status").unwrap_or_default();
    SeccompStatus {
        status_line: status
            .lines()
            .find(|l| l.starts_with("Seccomp:"))
            .map(str::to_string),
        actions_avail: fs::read_to_string("/proc/sys/kernel/seccomp/actions_avail").ok(),
    }
}

/// Pure: filter mode must exist and be able to answer with an errno.
pub fn check_seccomp(status: &SeccompStatus) -> Check {
    const NAME: &str = "seccomp";
    const FIX: &str = "use a kernel built with CONFIG_SECCOMP=y and CONFIG_SECCOMP_FILTER=y";
    let Some(line) = &status.status_line else {
        let detail = "no Seccomp: line in /proc/self/status".to_string();
        return Check::fail(NAME, Importance::Required, detail, FIX);
    };
    let actions = status.actions_avail.as_deref().unwrap_or("");
    if !actions.split_whitespace().any(|a| a == "errno") {
        let detail = format!("filter actions {:?} lack errno", actions.trim());
        return Check::fail(NAME, Importance::Required, detail, FIX);
    }
    let mode = line.trim_start_matches("Seccomp:").trim();
    let detail = format!(
        "filter mode available (this process: mode {mode}) · actions: {}",
        actions.trim()
    );
    Check::pass(NAME, Importance::Required, detail)
}

/// Pure over `cgroup::detect`'s answer.
pub fn check_cgroup(detected: Result<crate::plan::cgroup::Hierarchy, String>) -> Check {
    const NAME: &str = "cgroups (memory, pids)";
    match detected {
        Ok(hierarchy) => {
            let detail = match &hierarchy {
                crate::plan::cgroup::Hierarchy::V2 { own } => format!("v2 at {}", own.display()),
                crate::plan::cgroup::Hierarchy::V1 {
                    memory_own,
                    pids_own,
                } => format!(
                    "v1: memory at {}, pids at {}",
                    memory_own.display(),
                    pids_own.display()
                ),
            };
            Check::pass(NAME, Importance::Optional, detail)
        }
        Err(detail) => {
            let fix = "run the provider as root (or with write access to the cgroup tree) on a \
                       host whose cgroup v2 has memory+pids enabled at the root (echo '+memory \
                       +pids' > /sys/fs/cgroup/cgroup.subtree_control) or with cgroup v1 memory \
                       and pids mounted; in a container, give it its own cgroup namespace root \
                       without processes (without cgroups only rlimits bound memory and processes)";
            Check::fail(NAME, Importance::Optional, detail, fix)
        }
    }
}

pub fn check_executable(name: &'static str, path: &Path) -> Check {
    if is_executable_file(path) {
        return Check::pass(name, Importance::Required, path.display().to_string());
    }
    let detail = format!("{} is missing or not an executable file", path.display());
    let fix = "npm rebuild cordon   # or: cargo build --release -p cordon-runner";
    Check::fail(name, Importance::Required, detail, fix)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests;
