//! What a launch needs from the host, checked one item at a time. The same
//! functions serve `cordon doctor` (all checks, printed with their fixes)
//! and the launcher (the reason a launch fails), so they cannot disagree.
//!
//! Each check reads a little of the host (thin) and decides with a pure
//! function over what it read, which the unit tests exercise directly.

use std::fs;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::cgroup;

/// Trusted bwrap locations, in order; never a `$PATH` lookup.
pub const BWRAP_LOCATIONS: [&str; 3] = ["/usr/bin/bwrap", "/usr/local/bin/bwrap", "/bin/bwrap"];
/// `--size` (bounded tmpfs) and `--disable-userns` first shipped in 0.8.0.
pub const MIN_BWRAP_VERSION: (u32, u32, u32) = (0, 8, 0);
/// The unprivileged uid bwrap runs as when the provider is root.
pub const UNPRIVILEGED_UID: u32 = 65534;
/// A trial sandbox starts in milliseconds; past this something is wrong.
const TRIAL_TIMEOUT: Duration = Duration::from_secs(10);
/// Poll interval while waiting for the trial sandbox.
const TRIAL_POLL: Duration = Duration::from_millis(5);
/// Bytes of bwrap's stderr kept for the detail line.
const MAX_DETAIL_BYTES: u64 = 512;

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
}

/// All checks, in the order a reader should fix them.
pub fn run_all(targets: &ProbeTargets) -> Vec<Check> {
    let bwrap = find_bwrap(targets.bwrap.as_deref());
    let mut checks = vec![check_bwrap(bwrap.as_deref())];
    checks.push(check_userns_sysctls(&read_userns_sysctls()));
    if let Some(path) = bwrap.as_deref() {
        checks.push(check_userns_trial(path));
    }
    checks.push(check_seccomp(&read_seccomp_status()));
    checks.push(check_cgroup(cgroup::detect().map_err(|e| e.to_string())));
    if let Some(runner) = targets.runner.as_deref() {
        checks.push(check_executable("runner", runner));
    }
    checks
}

/// The explicit path if it is an executable file, else the first fixed
/// location that is one.
pub fn find_bwrap(explicit: Option<&Path>) -> Option<PathBuf> {
    let candidates: Vec<PathBuf> = match explicit {
        Some(path) => vec![path.to_path_buf()],
        None => BWRAP_LOCATIONS.iter().map(PathBuf::from).collect(),
    };
    candidates.into_iter().find(|p| is_executable_file(p))
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

pub fn bwrap_version(path: &Path) -> Option<String> {
    let output = Command::new(path)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .ok()?;
    Some(String::from_utf8_lossy(&output.stdout).trim().to_string())
}

pub fn check_bwrap(found: Option<&Path>) -> Check {
    const NAME: &str = "bubblewrap";
    const FIX: &str = "apt-get install bubblewrap   # or dnf install bubblewrap; needs >= 0.8.0";
    let Some(path) = found else {
        let detail = format!("bwrap not found at {}", BWRAP_LOCATIONS.join(", "));
        return Check::fail(NAME, Importance::Required, detail, FIX);
    };
    let version = bwrap_version(path).unwrap_or_default();
    match parse_bwrap_version(&version) {
        Some(v) if v >= MIN_BWRAP_VERSION => Check::pass(
            NAME,
            Importance::Required,
            format!("{} ({version})", path.display()),
        ),
        _ => {
            let detail = format!(
                "{} reports {version:?}; cordon needs >= 0.8.0",
                path.display()
            );
            Check::fail(NAME, Importance::Required, detail, FIX)
        }
    }
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

/// Really starts `bwrap --unshare-all … /bin/true`, as uid 65534 when root,
/// exactly as the launcher would. Catches what sysctls do not show (LSMs,
/// container runtimes' seccomp profiles, a nosuid quirk).
pub fn check_userns_trial(bwrap: &Path) -> Check {
    const NAME: &str = "user namespaces (trial sandbox)";
    let mut command = Command::new(bwrap);
    command
        .args([
            "--unshare-all",
            "--die-with-parent",
            "--new-session",
            "--disable-userns",
        ])
        .args(["--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin"])
        .args([
            "--symlink",
            "usr/lib",
            "/lib",
            "--symlink",
            "usr/lib64",
            "/lib64",
        ])
        .args([
            "--proc",
            "/proc",
            "--dev",
            "/dev",
            "--unshare-user",
            "/usr/bin/true",
        ])
        .current_dir("/")
        .env_clear()
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    // SAFETY: geteuid has no preconditions.
    let as_root = unsafe { libc::geteuid() } == 0;
    if as_root {
        command.uid(UNPRIVILEGED_UID).gid(UNPRIVILEGED_UID);
    }
    let who = if as_root {
        "as uid 65534"
    } else {
        "as this user"
    };
    match run_bounded(command) {
        Ok(()) => Check::pass(
            NAME,
            Importance::Required,
            format!("bwrap --unshare-all ran {who}"),
        ),
        Err(why) => {
            let fix = "fix the user-namespace sysctls above; in a container, allow \
                       unshare/clone(CLONE_NEWUSER) (e.g. docker --security-opt seccomp=unconfined \
                       --security-opt apparmor=unconfined)";
            Check::fail(NAME, Importance::Required, format!("{who}: {why}"), fix)
        }
    }
}

fn run_bounded(mut command: Command) -> Result<(), String> {
    let mut child = command.spawn().map_err(|e| format!("spawn failed: {e}"))?;
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() < TRIAL_TIMEOUT => std::thread::sleep(TRIAL_POLL),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("no exit within {TRIAL_TIMEOUT:?}"));
            }
            Err(e) => return Err(format!("wait failed: {e}")),
        }
    };
    if status.success() {
        return Ok(());
    }
    let mut stderr = String::new();
    if let Some(pipe) = child.stderr.take() {
        let _ = pipe.take(MAX_DETAIL_BYTES).read_to_string(&mut stderr);
    }
    Err(format!("{status}: {}", stderr.trim()))
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
    let detail = format!("{} · actions: {}", line.trim(), actions.trim());
    Check::pass(NAME, Importance::Required, detail)
}

/// Pure over `cgroup::detect`'s answer.
pub fn check_cgroup(detected: Result<cgroup::Hierarchy, String>) -> Check {
    const NAME: &str = "cgroups (memory, pids)";
    match detected {
        Ok(hierarchy) => {
            let detail = format!("{} hierarchy: {hierarchy:?}", hierarchy.version());
            Check::pass(NAME, Importance::Optional, detail)
        }
        Err(detail) => {
            let fix = "run the provider as root with cgroup v1 memory+pids mounted, or at the root \
                       of a cgroup v2 tree: echo '+memory +pids' > /sys/fs/cgroup/cgroup.subtree_control \
                       (without them only rlimits bound memory and processes)";
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
