//! Plan → Bubblewrap argv: a pure function, snapshot-tested per policy.
//!
//! Order matters to bwrap (operations apply left to right):
//! 1. namespaces (every one, explicitly: no `-try` variants), session, caps;
//! 2. the info fd and the seccomp fd;
//! 3. the read-only runtime (/usr, /lib*, /bin, /sbin, ld.so.cache);
//! 4. the sandbox's own /proc and /dev;
//! 5. descriptor binds: /workspace, /tmp, extras, then the executable
//!    (at its canonical path), and a symlink from `command[0]` if needed;
//! 6. `--remount-ro /` last, so the sandbox root itself is read-only;
//! 7. working directory, environment cleared;
//! 8. `--`, `/usr/bin/env -i -- NAME=VALUE…` (the runner's own environment,
//!    and no PWD), then the command.

use std::ffi::OsString;

use crate::plan::{BindRole, Plan, INFO_FD, SANDBOX_HOSTNAME, SANDBOX_TEMP};
use crate::runtime_layout::{RuntimeEntry, ENV_WRAPPER, LD_SO_CACHE};

/// Every namespace, explicitly (no `-try` variant may silently weaken it).
pub const NAMESPACES: &[&str] = &[
    "--unshare-user",
    "--unshare-ipc",
    "--unshare-pid",
    "--unshare-net",
    "--unshare-uts",
    "--unshare-cgroup",
];

/// The full argv after the bwrap path itself.
pub fn bwrap_argv(plan: &Plan) -> Vec<OsString> {
    let mut argv = Argv::default();
    argv.push_all(NAMESPACES);
    argv.push_all(&["--disable-userns", "--die-with-parent", "--new-session"]);
    argv.push_all(&["--cap-drop", "ALL", "--hostname", SANDBOX_HOSTNAME]);
    argv.push_all(&["--info-fd", &INFO_FD.to_string()]);
    if let Some(seccomp) = &plan.seccomp {
        argv.push_all(&["--seccomp", &seccomp.slot.to_string()]);
    }
    push_runtime(&mut argv, plan);
    argv.push_all(&["--proc", "/proc", "--dev", "/dev"]);
    // A size-bounded tmpfs, not a host directory: a disk fill ends with
    // ENOSPC inside the sandbox. Before the binds, so extras may nest in it.
    if let Some(bytes) = plan.temp_tmpfs_bytes {
        argv.push_all(&["--size", &bytes.to_string(), "--tmpfs", SANDBOX_TEMP]);
    }
    push_binds(&mut argv, plan);
    argv.push_all(&["--remount-ro", "/"]);
    argv.push("--chdir");
    argv.push(plan.chdir.as_os_str());
    argv.push("--clearenv");
    // bwrap always exports PWD after its chdir; `env -i` gives the program
    // exactly the planned environment (nothing, by default).
    argv.push_all(&["--", ENV_WRAPPER, "-i", "--"]);
    for (name, value) in &plan.runner_env {
        argv.push(format!("{name}={value}"));
    }
    for arg in &plan.argv {
        argv.push(arg.as_str());
    }
    argv.0
}

/// `/usr` and the top-level runtime entries, read-only; symlinks stay symlinks.
fn push_runtime(argv: &mut Argv, plan: &Plan) {
    argv.push_all(&["--ro-bind", "/usr", "/usr"]);
    for entry in &plan.runtime.entries {
        match entry {
            RuntimeEntry::Symlink { path, target } => argv.push_triple("--symlink", target, path),
            RuntimeEntry::Directory { path } => argv.push_triple("--ro-bind", path, path),
        }
    }
    if plan.runtime.ld_so_cache {
        argv.push_all(&["--ro-bind", LD_SO_CACHE, LD_SO_CACHE]);
    }
}

/// Descriptor binds, then the `command[0]` symlink. The executable goes
/// last so a bind of /tmp or /workspace can never shadow it when it lives
/// under one of them.
fn push_binds(argv: &mut Argv, plan: &Plan) {
    let (exe, dirs): (Vec<_>, Vec<_>) = plan
        .binds
        .iter()
        .partition(|b| b.role == BindRole::Executable);
    for bind in dirs.into_iter().chain(exe) {
        let op = if bind.writable {
            "--bind-fd"
        } else {
            "--ro-bind-fd"
        };
        argv.push_triple(op, bind.slot.to_string(), &bind.dest);
    }
    for (target, link) in &plan.symlinks {
        argv.push_triple("--symlink", target, link);
    }
}

#[derive(Default)]
struct Argv(Vec<OsString>);

impl Argv {
    fn push(&mut self, arg: impl Into<OsString>) {
        self.0.push(arg.into());
    }

    fn push_triple(&mut self, op: &str, a: impl Into<OsString>, b: impl Into<OsString>) {
        self.push(op);
        self.push(a);
        self.push(b);
    }

    fn push_all(&mut self, args: &[&str]) {
        self.0.extend(args.iter().map(OsString::from));
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
#[path = "bwrap_argv_tests.rs"]
mod tests;
