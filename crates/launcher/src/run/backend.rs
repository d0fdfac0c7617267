//! Finding Bubblewrap and proving, once per process and binary, that it can
//! create every namespace the plan asks for. No weaker fallback exists: if
//! this fails, the launch fails with `ERR_CORDON_BACKEND_UNAVAILABLE`.

use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

use crate::host::clone_exec::explain_lost_status;
use crate::host::process_identity::Identity;

/// Fixed, root-owned system locations searched for bwrap. `$PATH` is never
/// consulted: it is provider-controlled and may point anywhere.
pub const BWRAP_LOCATIONS: &[&str] = &["/usr/bin/bwrap", "/usr/local/bin/bwrap", "/bin/bwrap"];

const INSTALL_HINT: &str = "install Bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap) or pass options.bwrapPath";
const USERNS_HINT: &str = "unprivileged user namespaces look disabled: enable them (sysctl kernel.unprivileged_userns_clone=1, user.max_user_namespaces > 0, and on Ubuntu 24.04+ kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile for bwrap)";

const USERNS_QUOTA_HINT: &str = "this uid's user namespaces are used up (user.max_user_namespaces, counted per uid): each run holds up to three while it lives (docs/security.md, quotas)";

/// Pure: why bwrap could not create its namespaces, from what it said: a
/// spent namespace quota (ENOSPC) is not a disabled feature.
fn userns_hint(stderr: &str) -> &'static str {
    if stderr.contains("No space left on device") {
        USERNS_QUOTA_HINT
    } else {
        USERNS_HINT
    }
}

/// A bwrap binary known to work on this host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Backend {
    pub path: PathBuf,
    pub version: String,
}

#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    #[error("bubblewrap not found at {searched}: {INSTALL_HINT}")]
    NotFound { searched: String },
    #[error("bubblewrap at {path} is not an executable file: {INSTALL_HINT}")]
    NotExecutable { path: PathBuf },
    #[error("run {path} --version: {source}")]
    Version {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is missing: the sandbox starts programs through it to clear bwrap's PWD (install coreutils)")]
    EnvWrapper { path: PathBuf },
    #[error(
        "bubblewrap at {path} cannot create the sandbox namespaces ({stderr}): {}",
        userns_hint(stderr)
    )]
    Namespaces { path: PathBuf, stderr: String },
}

/// Resolves and probes bwrap (cached after the first success per path).
pub fn resolve(
    explicit: Option<&Path>,
    identity: Option<Identity>,
) -> Result<Backend, BackendError> {
    let path = locate(explicit)?;
    static CACHE: Mutex<Option<HashMap<PathBuf, Backend>>> = Mutex::new(None);
    if let Ok(cache) = CACHE.lock() {
        if let Some(found) = cache.as_ref().and_then(|c| c.get(&path)) {
            return Ok(found.clone());
        }
    }
    let backend = probe(&path, identity)?;
    if let Ok(mut cache) = CACHE.lock() {
        cache
            .get_or_insert_with(HashMap::new)
            .insert(path, backend.clone());
    }
    Ok(backend)
}

/// The bwrap binary `explicit` names, else the first of [`BWRAP_LOCATIONS`]
/// that is an executable file (not probed).
pub fn locate(explicit: Option<&Path>) -> Result<PathBuf, BackendError> {
    let candidates: Vec<&Path> = match explicit {
        Some(p) => vec![p],
        None => BWRAP_LOCATIONS.iter().map(Path::new).collect(),
    };
    for candidate in &candidates {
        match std::fs::metadata(candidate) {
            Ok(m) if m.is_file() && m.permissions().mode() & 0o111 != 0 => {
                return Ok(candidate.to_path_buf())
            }
            Ok(_) if explicit.is_some() => {
                return Err(BackendError::NotExecutable {
                    path: candidate.to_path_buf(),
                })
            }
            _ => {}
        }
    }
    let searched = candidates
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    Err(BackendError::NotFound { searched })
}

/// Steps: the env wrapper exists, `bwrap --version`, then a throw-away sandbox with every namespace
/// the real plan uses, run as the same identity.
fn probe(path: &Path, identity: Option<Identity>) -> Result<Backend, BackendError> {
    let env = Path::new(crate::host::runtime_layout::ENV_WRAPPER);
    if !env.is_file() {
        return Err(BackendError::EnvWrapper {
            path: env.to_path_buf(),
        });
    }
    let version_out =
        output_unsignalled(as_identity(Command::new(path).arg("--version"), identity)).map_err(
            |source| BackendError::Version {
                path: path.to_path_buf(),
                source: explain_lost_status(source),
            },
        )?;
    let version = String::from_utf8_lossy(&version_out.stdout)
        .trim()
        .trim_start_matches("bubblewrap ")
        .to_string();
    let mut sandbox = Command::new(path);
    sandbox.args(crate::plan::bwrap_argv::unshare_options());
    sandbox.args([
        "--disable-userns",
        "--die-with-parent",
        "--ro-bind",
        "/",
        "/",
        "--",
    ]);
    sandbox.arg(path).arg("--version");
    let out = output_unsignalled(as_identity(&mut sandbox, identity)).map_err(|source| {
        BackendError::Version {
            path: path.to_path_buf(),
            source: explain_lost_status(source),
        }
    })?;
    if !out.status.success() {
        return Err(BackendError::Namespaces {
            path: path.to_path_buf(),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(Backend {
        path: path.to_path_buf(),
        version,
    })
}

/// Attempts at a probe step whose process a signal ended.
const PROBE_ATTEMPTS: usize = 3;

/// Runs a probe step again when a signal ended it: a signal to the
/// provider's process group in the microseconds before std's spawn moved
/// the child to its own group waits for it there, and ends it at its exec
/// (the probe then read an empty version, "too old"). Neither probe step
/// ends by a signal of its own.
fn output_unsignalled(cmd: &mut Command) -> std::io::Result<std::process::Output> {
    use std::os::unix::process::ExitStatusExt;
    let mut attempt = 1;
    loop {
        let out = cmd.output()?;
        if out.status.signal().is_none() || attempt == PROBE_ATTEMPTS {
            return Ok(out);
        }
        attempt += 1;
    }
}

fn as_identity(cmd: &mut Command, identity: Option<Identity>) -> &mut Command {
    // A process group of its own, as bwrap's runs have (clone_exec.rs): a
    // Ctrl-C at the provider's group during a first launch would otherwise
    // kill the probe and be reported as namespaces that look disabled
    // (black-box round on the holder, F1). One sent before the child left
    // the group: [`output_unsignalled`].
    cmd.env_clear().stdin(Stdio::null()).process_group(0);
    if let Some(id) = identity {
        // std drops supplementary groups (setgroups(0)) before setuid when root.
        cmd.uid(id.uid).gid(id.gid);
    }
    cmd
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_spent_namespace_quota_is_not_reported_as_disabled_namespaces() {
        let spent = "bwrap: Creating new namespace failed: No space left on device";
        assert!(userns_hint(spent).contains("used up"));
        assert!(
            userns_hint("bwrap: Creating new namespace failed: Operation not permitted")
                .contains("look disabled")
        );
    }

    /// A provider that discards its children's statuses learns why the probe
    /// failed, not only "No child processes" (noticed beside the black-box
    /// round on the start, F2). Run in a process of its own: the disposition
    /// is the whole process's.
    #[test]
    fn a_provider_that_ignores_sigchld_is_told_why_the_probe_failed() {
        const INNER: &str = "CORDON_TEST_BACKEND_SIGCHLD_IGNORED";
        const NAME: &str =
            "run::backend::tests::a_provider_that_ignores_sigchld_is_told_why_the_probe_failed";
        if std::env::var_os(INNER).is_some() {
            let bwrap = locate(None).expect("bwrap is installed");
            // SAFETY: SIG_IGN runs no handler code.
            unsafe { libc::signal(libc::SIGCHLD, libc::SIG_IGN) };
            let error = probe(&bwrap, None).unwrap_err();
            assert!(error.to_string().contains("ignores SIGCHLD"), "{error}");
            return;
        }
        crate::live_support::run_inner_test(NAME, INNER);
    }
}
