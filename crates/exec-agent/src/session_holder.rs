//! `cordon-exec-agent session-holder`, its request `[<uid>, <dir>, <bytes>,
//! <inodes>]` one JSON line on stdin, never argv: /proc/<pid>/cmdline is
//! world-readable for the holder's whole life, and `<dir>` names the
//! session's workspace (its key; as session-files since round 9, R9-5): the
//! per-session *holder* of a NON-ROOT provider (docs/sessions.md,
//! "Non-root providers"). It owns the session workspace: a tmpfs bounded by
//! `size=<bytes>,nr_inodes=<inodes>`, mode 0700, owned by the session owner
//! uid U, mounted on `<dir>` in a mount namespace of its own, inside a user
//! namespace where only U exists. Each session sandbox's bwrap is started
//! inside these two namespaces (the launcher's `namespaceHolder` option),
//! and the file helper (`session-files`) runs there as U.
//!
//! Steps, with the provider on the other end of stdin/stdout:
//! 0. read the request line;
//! 1. `unshare(CLONE_NEWUSER)`, then say `unshared` on stdout;
//! 2. the provider maps U (newuidmap/newgidmap, from outside: only it may
//!    use its subordinate range) and writes `mapped` on stdin;
//! 3. still holding the creator's capabilities in the new user namespace
//!    (no exec since step 1), `unshare(CLONE_NEWNS)`, make every mount
//!    private (nothing of ours propagates back), mount the tmpfs;
//! 4. say `ready`; the provider records `{pid, start}` in the session
//!    record and writes `keep` (EOF instead: exit, the tmpfs with it, so a
//!    provider killed before the record leaves nothing unknown); then let
//!    go of stdin/stdout and wait for SIGTERM or SIGKILL.
//!    The workspace lives as long as this process (and any sandbox still
//!    inside a copy of its mount namespace): not across a reboot.
//!
//! EOF before `mapped` (the provider died): exit at once, nothing mounted.
//! It never exits by itself once ready (only a signal ends it); before
//! that, exit status 2 is a usage error and 3..=7 name the failing step
//! (the message on stderr).

use std::io::{BufRead, Write};

use nix::mount::{mount, MsFlags};
use nix::sched::{unshare, CloneFlags};

/// Exit statuses, one per failing step.
const USAGE: i32 = 2;
const UNSHARE_USER: i32 = 3;
const NOT_MAPPED: i32 = 4;
const UNSHARE_MOUNT: i32 = 5;
const MOUNT_TMPFS: i32 = 6;
const NOT_KEPT: i32 = 7;

/// What the holder was asked to hold.
#[derive(Debug, PartialEq, Eq)]
pub struct HolderSpec {
    pub uid: u32,
    pub dir: String,
    pub bytes: u64,
    pub inodes: u64,
}

/// Pure: the request's fields → the spec, or why not.
pub fn parse(args: &[String]) -> Result<HolderSpec, String> {
    let [uid, dir, bytes, inodes] = args else {
        return Err(
            "usage: cordon-exec-agent session-holder, request on stdin: [uid, dir, bytes, inodes]"
                .into(),
        );
    };
    let number = |what: &str, text: &str| {
        text.parse::<u64>()
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| format!("{what} must be a positive integer, not {text:?}"))
    };
    let uid = u32::try_from(number("uid", uid)?).map_err(|_| "uid out of range".to_string())?;
    if !dir.starts_with('/') || dir.contains('\0') || dir.split('/').any(|s| s == "..") {
        return Err(format!(
            "dir must be an absolute path without `..`, not {dir:?}"
        ));
    }
    Ok(HolderSpec {
        uid,
        dir: dir.clone(),
        bytes: number("bytes", bytes)?,
        inodes: number("inodes", inodes)?,
    })
}

/// Pure: the tmpfs options (uid/gid are read in the holder's namespace, where U is U).
pub fn tmpfs_options(spec: &HolderSpec) -> String {
    format!(
        "size={},nr_inodes={},mode=0700,uid={},gid={}",
        spec.bytes, spec.inodes, spec.uid, spec.uid
    )
}

fn fail(status: i32, message: String) -> ! {
    eprintln!("cordon-exec-agent session-holder: {message}");
    std::process::exit(status)
}

/// One line from the provider, trimmed; `None` at EOF or on an error.
/// Through the shared, buffered stdin: what the request's read buffered
/// past its line is read here.
fn read_word() -> Option<String> {
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(n) if n > 0 => Some(line.trim().to_string()),
        _ => None,
    }
}

fn say(word: &str) {
    let mut out = std::io::stdout().lock();
    if writeln!(out, "{word}").and_then(|()| out.flush()).is_err() {
        // The provider is gone: nobody will use (or tear down) what we hold.
        std::process::exit(NOT_MAPPED);
    }
}

/// Steps 0–4 of the module doc; never returns.
pub fn main(args: &[String]) -> ! {
    if !args.is_empty() {
        fail(
            USAGE,
            "takes no arguments: the request comes on stdin".into(),
        );
    }
    let request = crate::session_files::read_request(&mut std::io::stdin().lock())
        .unwrap_or_else(|e| fail(USAGE, e));
    let spec = parse(&request).unwrap_or_else(|e| fail(USAGE, e));
    if let Err(e) = unshare(CloneFlags::CLONE_NEWUSER) {
        fail(UNSHARE_USER, format!("unshare(CLONE_NEWUSER): {e}"));
    }
    say("unshared");
    if read_word() != Some("mapped".into()) {
        fail(NOT_MAPPED, "the provider did not map the owner uid".into());
    }
    if let Err(e) = unshare(CloneFlags::CLONE_NEWNS) {
        fail(UNSHARE_MOUNT, format!("unshare(CLONE_NEWNS): {e}"));
    }
    let private = MsFlags::MS_REC | MsFlags::MS_PRIVATE;
    if let Err(e) = mount(None::<&str>, "/", None::<&str>, private, None::<&str>) {
        fail(UNSHARE_MOUNT, format!("make mounts private: {e}"));
    }
    let flags = MsFlags::MS_NOSUID | MsFlags::MS_NODEV;
    let options = tmpfs_options(&spec);
    if let Err(e) = mount(
        Some("cordon-session"),
        spec.dir.as_str(),
        Some("tmpfs"),
        flags,
        Some(options.as_str()),
    ) {
        fail(
            MOUNT_TMPFS,
            format!("mount tmpfs {options} on {}: {e}", spec.dir),
        );
    }
    say("ready");
    // The provider records {pid, start} durably, then says `keep`: a
    // provider that dies before that (EOF) leaves no holder nobody knows of.
    if read_word() != Some("keep".into()) {
        fail(NOT_KEPT, "the provider did not record the holder".into());
    }
    // Hold nothing of the provider's: its pipes close, its cwd is not pinned.
    let _ = std::env::set_current_dir("/");
    for fd in 0..3 {
        let _ = nix::unistd::close(fd);
    }
    loop {
        // Until SIGTERM/SIGKILL (default actions: the process ends, and
        // with it the mount namespace and the tmpfs).
        nix::unistd::pause();
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_holder_spec_is_four_positive_numbers_and_an_absolute_dir() {
        let spec = parse(&args(&["1342177281", "/tmp/s/k", "1048576", "64"])).unwrap();
        assert_eq!(
            tmpfs_options(&spec),
            "size=1048576,nr_inodes=64,mode=0700,uid=1342177281,gid=1342177281"
        );
        assert!(parse(&args(&["1", "relative", "1", "1"])).is_err());
        assert!(parse(&args(&["1", "/a/../b", "1", "1"])).is_err());
        assert!(parse(&args(&["0", "/a", "1", "1"])).is_err());
        assert!(parse(&args(&["1", "/a", "1"])).is_err());
        assert!(parse(&args(&["1", "/a", "1,uid=0", "1"])).is_err());
    }

    #[test]
    fn the_request_is_one_json_line_and_the_step_words_follow_it() {
        // As the provider writes it (holder.js): the request, later `mapped`.
        let mut input: &[u8] = b"[\"1342177281\",\"/tmp/s/k\",\"1048576\",\"64\"]\nmapped\n";
        let request = crate::session_files::read_request(&mut input).unwrap();
        assert_eq!(parse(&request).unwrap().dir, "/tmp/s/k");
        assert_eq!(input, b"mapped\n", "what follows stays for read_word");
        // The old argv form on stdin is no request.
        let mut words: &[u8] = b"1342177281 /tmp/s/k 1048576 64\n";
        assert!(crate::session_files::read_request(&mut words).is_err());
    }
}
