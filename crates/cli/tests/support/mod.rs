//! Runs the built `cordon` binary; every test uses the real sandbox.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

pub const CORDON: &str = env!("CARGO_BIN_EXE_cordon");
pub const SH: &str = "/bin/sh";

/// Why these tests cannot run here, if they cannot (printed loudly).
pub fn skip_reason() -> Option<String> {
    let probe = Command::new(CORDON)
        .args(["run", "--", "/bin/true"])
        .stdin(Stdio::null())
        .output()
        .ok()?;
    if probe.status.code() == Some(126) {
        return Some(String::from_utf8_lossy(&probe.stderr).into_owned());
    }
    None
}

#[macro_export]
macro_rules! require_sandbox {
    () => {
        if let Some(reason) = support::skip_reason() {
            // CI installs everything a launch needs (.ci/run): there a
            // skip would hide a broken launcher, so it fails instead.
            assert!(
                std::env::var_os("CI").is_none_or(|v| v == "false"),
                "CI host cannot launch sandboxes: {reason}"
            );
            eprintln!("SKIPPED: this host cannot launch sandboxes: {reason}");
            support::log_skip(module_path!(), &reason);
            return;
        }
    };
}

/// Appends a skip to `$CORDON_SKIP_LOG`, which scripts/test.js counts and
/// lists after the run (so a skip outside CI is still seen).
pub fn log_skip(test: &str, reason: &str) {
    let Some(log) = std::env::var_os("CORDON_SKIP_LOG") else {
        return;
    };
    let line = serde_json::json!({"file": file!(), "name": test, "reason": reason});
    if let Ok(mut file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
    {
        let _ = writeln!(file, "{line}");
    }
}

/// `cordon run <args…>` with every stdio stream piped.
fn spawn_run(args: &[&str]) -> Child {
    Command::new(CORDON)
        .arg("run")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn cordon")
}

/// `cordon run <args…>` with `input` on stdin, to completion.
pub fn run(args: &[&str], input: &[u8]) -> Output {
    let mut child = spawn_run(args);
    let mut stdin = child.stdin.take().expect("stdin");
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().expect("wait cordon");
    writer.join().expect("writer");
    out
}

/// Starts `cordon run` and returns once the program wrote `ready\n` to fd 3.
pub fn start_until_ready(args: &[&str]) -> (Child, BufReader<std::process::ChildStdout>) {
    let mut child = spawn_run(args);
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    stdout.read_line(&mut line).expect("read ready");
    assert_eq!(line, "ready\n");
    (child, stdout)
}

pub fn signal(child: &Child, signal: i32) {
    let signal = Signal::try_from(signal).expect("a signal number");
    kill(Pid::from_raw(child.id() as i32), signal).expect("kill");
}

pub fn finish(mut child: Child, mut stdout: impl Read) -> (i32, String) {
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).expect("read stdout");
    let status = child.wait().expect("wait");
    (status.code().expect("cordon exits, it is not killed"), rest)
}

pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!(
            "cordon-cli-{tag}-{}-{:?}",
            std::process::id(),
            std::time::SystemTime::now()
        ));
        let dir = PathBuf::from(dir.to_string_lossy().replace([' ', '{', '}', ':', ','], ""));
        std::fs::create_dir_all(&dir).expect("mkdir");
        TempDir(dir)
    }

    pub fn path(&self, name: &str) -> String {
        self.0.join(name).to_string_lossy().into_owned()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn receipt(path: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(Path::new(path)).expect("receipt file");
    serde_json::from_str(&text).expect("receipt JSON")
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}
