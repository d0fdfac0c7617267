//! Plan → Bubblewrap arguments: a pure function, snapshot-tested per policy.
//!
//! Order matters to bwrap (operations apply left to right):
//! 1. namespaces (every one, explicitly: no `-try` variants), session, caps;
//! 2. the info fd and the seccomp fd;
//! 3. the read-only runtime (/usr, /lib*, /bin, /sbin, ld.so.cache);
//! 4. the sandbox's own /proc and /dev: a size-bounded tmpfs at /dev/shm,
//!    then /dev itself read-only (bwrap's device tmpfs has no size bound);
//!    host facts in /proc and the pty multiplexer masked; the size-bounded
//!    tmpfs /tmp and, for a writable default workspace, /workspace;
//! 5. descriptor binds: /workspace, /tmp, extras, then the executable
//!    (at its canonical path), and a symlink from `command[0]` if needed;
//! 6. `--remount-ro /` last, so the sandbox root itself is read-only;
//! 7. working directory, environment cleared, then `--setenv NAME VALUE`
//!    for the runner's own environment;
//! 8. `--`, the starter (`cordon-egress-relay --alive-fd N … --`: starter.rs)
//!    or, without one, `/usr/bin/env -u PWD --` (bwrap exports PWD after its
//!    chdir), then the command.
//!
//! Steps 1–7 are bwrap's *options*: they reach bwrap through a sealed memfd
//! read with `--args FD`, never through argv, because argv is world-readable
//! in `/proc/<pid>/cmdline` and the options carry the runner's environment
//! values (API keys, tokens). bwrap takes the command (step 8) only from
//! argv; it holds no environment value.

use std::ffi::OsString;

use crate::host::runtime_layout::{RuntimeEntry, ENV_WRAPPER, LD_SO_CACHE};
use crate::plan::{
    BindRole, Plan, INFO_FD, SANDBOX_DEV, SANDBOX_DEV_SHM, SANDBOX_HOSTNAME, SANDBOX_TEMP,
    SANDBOX_WORKSPACE,
};

/// The namespaces every sandbox gets of its own, each unshared explicitly
/// (no `-try` variant may silently weaken it): the one list the bwrap
/// options, the backend probe, the receipt and the observation derive from.
/// (bwrap always makes a mount namespace as well, without an option.)
pub const NAMESPACES: &[&str] = &["user", "ipc", "pid", "net", "uts", "cgroup"];

/// `--unshare-<name>` for each of [`NAMESPACES`].
pub fn unshare_options() -> impl Iterator<Item = String> {
    NAMESPACES.iter().map(|name| format!("--unshare-{name}"))
}

/// Host facts in the sandbox's own `/proc` that say nothing about the
/// sandbox: each is covered by [`MASK_SOURCE`], which bwrap binds `nodev`,
/// so reading it fails with EACCES. `/proc/cmdline` carries the host's boot
/// command line (hypervisor, init and console settings).
pub const MASKED_PROC_FILES: &[&str] = &["/proc/cmdline"];
/// What a masked `/proc` file is covered with.
pub const MASK_SOURCE: &str = "/dev/null";
/// The pty multiplexer of bwrap's devpts instance (`/dev/ptmx` links to
/// it). Covered like a masked `/proc` file, so opening it fails (EACCES)
/// and no pty is ever allocated: every devpts instance, the sandbox's
/// included, draws on the host-wide `kernel.pty.max`, and one sandbox
/// could take all of it (new terminals and ssh logins then fail).
pub const PTY_MULTIPLEXER: &str = "/dev/pts/ptmx";

/// bwrap's arguments, split by where they travel.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BwrapArgs {
    /// Read by bwrap from the `--args` descriptor (NUL-terminated each).
    pub options: Vec<OsString>,
    /// The program bwrap starts inside the sandbox, on bwrap's argv.
    pub command: Vec<OsString>,
}

/// An option holds a NUL byte: written to the `--args` descriptor it would
/// split into two arguments (an option injection), so it is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bwrap option {index} contains a NUL byte")]
pub struct NulInOption {
    pub index: usize,
}

impl BwrapArgs {
    /// The argv after the bwrap path: `--args <slot> -- <command>`.
    pub fn exec_argv(&self, args_slot: i32) -> Vec<OsString> {
        let mut argv = vec![OsString::from("--args"), args_slot.to_string().into()];
        argv.push("--".into());
        argv.extend(self.command.iter().cloned());
        argv
    }

    /// The `--args` descriptor's content: every option NUL-terminated.
    pub fn options_bytes(&self) -> Result<Vec<u8>, NulInOption> {
        let mut bytes = Vec::new();
        for (index, option) in self.options.iter().enumerate() {
            let option = option.as_encoded_bytes();
            if option.contains(&0) {
                return Err(NulInOption { index });
            }
            bytes.extend_from_slice(option);
            bytes.push(0);
        }
        Ok(bytes)
    }
}

/// The plan's bwrap options and command.
pub fn bwrap_argv(plan: &Plan) -> BwrapArgs {
    let mut argv = Argv::default();
    argv.push_owned(unshare_options());
    argv.push_all(&["--disable-userns", "--die-with-parent", "--new-session"]);
    argv.push_all(&["--cap-drop", "ALL", "--hostname", SANDBOX_HOSTNAME]);
    argv.push_all(&["--info-fd", &INFO_FD.to_string()]);
    if let Some(starter) = &plan.starter {
        argv.push_all(&["--json-status-fd", &starter.status_slot.to_string()]);
    }
    if let Some(seccomp) = &plan.seccomp {
        argv.push_all(&["--seccomp", &seccomp.slot.to_string()]);
    }
    push_runtime(&mut argv, plan);
    argv.push_all(&["--proc", "/proc", "--dev", SANDBOX_DEV]);
    // bwrap's /dev is a tmpfs it cannot size (`--size` only precedes
    // `--tmpfs`): a program could fill it with host memory. Only /dev/shm
    // stays writable, as a bounded tmpfs of its own; /dev is remounted
    // read-only on its own (not recursively: /dev/shm and /dev/pts keep
    // their flags).
    push_tmpfs(&mut argv, plan.dev_shm_bytes, SANDBOX_DEV_SHM);
    argv.push_all(&["--remount-ro", SANDBOX_DEV]);
    for file in MASKED_PROC_FILES.iter().chain([&PTY_MULTIPLEXER]) {
        argv.push_triple("--ro-bind", MASK_SOURCE, file);
    }
    // Size-bounded tmpfs, not host directories: a fill ends with ENOSPC
    // inside the sandbox. Before the binds, so extras may nest in /tmp.
    if let Some(bytes) = plan.temp_tmpfs_bytes {
        push_tmpfs(&mut argv, bytes, SANDBOX_TEMP);
    }
    if let Some(bytes) = plan.workspace_tmpfs_bytes {
        push_tmpfs(&mut argv, bytes, SANDBOX_WORKSPACE);
    }
    push_binds(&mut argv, plan);
    argv.push_all(&["--remount-ro", "/"]);
    argv.push("--chdir");
    argv.push(plan.chdir.as_os_str());
    argv.push("--clearenv");
    for (name, value) in &plan.runner_env {
        argv.push_triple("--setenv", name.as_str(), value.as_str());
    }
    // bwrap exports PWD after its chdir, whatever the options say: the
    // wrapper removes it, so the program gets exactly the planned
    // environment (nothing, by default). A planned PWD (a path, not a
    // secret) can only be set after bwrap, so it goes on the command.
    let mut command = Argv::default();
    let pwd = plan
        .runner_env
        .iter()
        .find(|(name, _)| name == "PWD")
        .map(|(_, pwd)| pwd.as_str());
    match &plan.starter {
        // The starter gates the program, sets up a mediated network, then
        // execs the program without bwrap's PWD.
        Some(starter) => {
            for arg in crate::plan::starter::command_prefix(starter, plan.network.as_ref(), pwd) {
                command.push(arg);
            }
        }
        None => {
            command.push_all(&[ENV_WRAPPER, "-u", "PWD", "--"]);
            if let Some(pwd) = pwd {
                command.push(format!("PWD={pwd}"));
            }
        }
    }
    for arg in &plan.argv {
        command.push(arg.as_str());
    }
    BwrapArgs {
        options: argv.0,
        command: command.0,
    }
}

fn push_tmpfs(argv: &mut Argv, bytes: u64, mount: &str) {
    argv.push_all(&["--size", &bytes.to_string(), "--tmpfs", mount]);
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

    fn push_owned(&mut self, args: impl Iterator<Item = String>) {
        self.0.extend(args.map(OsString::from));
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
#[path = "bwrap_argv_tests.rs"]
mod tests;
