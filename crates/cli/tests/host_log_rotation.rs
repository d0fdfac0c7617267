//! `cordon host` and logrotate (docs/remote.md § Log rotation): SIGHUP
//! reopens `logFile` at its path, so a log renamed away stops growing and
//! a new one begins — no line lost or written twice across the rename, and
//! the host keeps serving. The new file is 0600 and never a symlink planted
//! at the path. A real host child process; sessions are real connections.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[macro_use]
mod support;
mod host_support;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use host_support::*;
use nix::sys::signal::Signal;
use serde_json::{json, Value};

/// Bound of every wait (a loaded 2-core CI box).
const WAIT: Duration = Duration::from_secs(30);

/// Waits for `condition` (bounded; `what` names it in the failure).
fn eventually(what: &str, mut condition: impl FnMut() -> bool) {
    let until = Instant::now() + WAIT;
    while !condition() {
        assert!(Instant::now() < until, "never happened: {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The `session` lines' ids in a log file (none if it does not exist).
fn session_ids(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("every line is one JSON object"))
        .filter(|l| l["event"] == "session")
        .map(|l| l["session"].as_str().expect("a session id").to_string())
        .collect()
}

/// One connection through `welcome`, then closed: one `session` line.
fn one_session(host: &HostProcess) {
    let (client, _) = host.session();
    drop(client);
}

fn log_config(dir: &Path) -> (PathBuf, Value) {
    let log = dir.join("host.log");
    // Every session here runs nothing: its line passes the bound on such
    // lines (R11-2), set far above what these tests make.
    let bound = json!({"failureLogBurst": 1_000_000, "failureLogPerMinute": 1_000_000});
    (log.clone(), json!({ "logFile": log, "handshake": bound }))
}

#[test]
fn sighup_reopens_the_log_at_its_path_and_no_line_is_lost_or_doubled_across_the_rename() {
    let logs = tempfile::tempdir().unwrap();
    let (log, config) = log_config(logs.path());
    let rotated = logs.path().join("host.log.1");
    let host = Arc::new(HostProcess::start("host-rotate", config));

    // Sessions keep coming while the log is rotated under them.
    let (stop, made) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicUsize::new(0)),
    );
    let traffic = {
        let (host, stop, made) = (Arc::clone(&host), Arc::clone(&stop), Arc::clone(&made));
        std::thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                one_session(&host);
                made.fetch_add(1, Ordering::SeqCst);
            }
        })
    };
    eventually("20 lines in the first log", || {
        session_ids(&log).len() >= 20
    });
    std::fs::rename(&log, &rotated).unwrap();
    host.signal(Signal::SIGHUP);
    eventually("a new log at the path", || log.exists());
    eventually("20 lines in the new log", || session_ids(&log).len() >= 20);
    stop.store(true, Ordering::SeqCst);
    traffic.join().unwrap();
    let made = made.load(Ordering::SeqCst);

    let total = || session_ids(&rotated).len() + session_ids(&log).len();
    eventually("a line per session made", || total() >= made);
    let (old, new) = (session_ids(&rotated), session_ids(&log));
    let all: HashSet<&String> = old.iter().chain(&new).collect();
    assert_eq!(old.len() + new.len(), made, "a line per session, no more");
    assert_eq!(all.len(), made, "no line written to both files");
    assert!(
        old.len() >= 20 && new.len() >= 20,
        "{} {}",
        old.len(),
        new.len()
    );
    assert_eq!(mode(&log), 0o600);
    // SIGHUP did not stop the host.
    let mut host = Arc::try_unwrap(host)
        .ok()
        .expect("the traffic thread ended");
    assert!(host.child.try_wait().unwrap().is_none(), "the host exited");
    one_session(&host);
    eventually("the next session in the new log", || {
        session_ids(&log).len() == new.len() + 1
    });
    host.stop();
}

#[test]
fn a_symlink_planted_at_the_log_path_is_not_followed_at_sighup_and_lines_stay_in_the_old_file() {
    let logs = tempfile::tempdir().unwrap();
    let (log, config) = log_config(logs.path());
    let rotated = logs.path().join("host.log.1");
    let victim = logs.path().join("victim");
    std::fs::write(&victim, "untouched\n").unwrap();
    let host = HostProcess::start_capturing_stderr("host-rotate-link", config);
    one_session(&host);
    eventually("the first line", || session_ids(&log).len() == 1);

    std::fs::rename(&log, &rotated).unwrap();
    std::os::unix::fs::symlink(&victim, &log).unwrap();
    host.signal(Signal::SIGHUP);
    // Until the host reports the refused reopen (or, were it to follow
    // the link, until its lines reach the victim), sessions keep coming.
    let victim_written = || std::fs::read_to_string(&victim).unwrap() != "untouched\n";
    eventually("the reopen's outcome", || {
        one_session(&host);
        host.stderr_text().contains("reopen config.logFile") || victim_written()
    });
    let made = session_ids(&rotated).len();
    one_session(&host);
    eventually("the next line in the old file", || {
        session_ids(&rotated).len() > made
    });
    assert!(!victim_written(), "the host followed the planted symlink");
    let said = host.stderr_text();
    assert!(
        said.contains("a symlink at the log's path is never followed"),
        "{said}"
    );

    // The path made right, the next SIGHUP opens it.
    std::fs::remove_file(&log).unwrap();
    host.signal(Signal::SIGHUP);
    eventually("a new log at the path", || log.is_file());
    assert!(!std::fs::symlink_metadata(&log).unwrap().is_symlink());
    one_session(&host);
    eventually("a line in the new log", || !session_ids(&log).is_empty());
}

#[test]
fn a_host_whose_log_path_is_a_planted_symlink_refuses_to_start() {
    let logs = tempfile::tempdir().unwrap();
    let victim = logs.path().join("victim");
    std::fs::write(&victim, "untouched\n").unwrap();
    let log = logs.path().join("host.log");
    std::os::unix::fs::symlink(&victim, &log).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("host.json");
    let body = json!({
        "listen": {"unix": dir.path().join("host.sock")},
        "stateDir": dir.path().join("state"),
        "programs": {"sh": "/bin/sh"},
        "logFile": log,
    });
    std::fs::write(&config, body.to_string()).unwrap();
    let (status, said) = start_refused(&config);
    assert_eq!(status, Some(125));
    assert!(
        said.contains("config.logFile") && said.contains("a symlink"),
        "{said}"
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "untouched\n");
}

#[test]
fn a_log_file_another_user_planted_at_the_path_is_refused_at_sighup_and_never_written() {
    if nix_uid() != 0 {
        let reason = "only root can plant a file of another uid";
        eprintln!("SKIPPED: {reason}");
        support::log_skip(module_path!(), reason);
        return;
    }
    let logs = tempfile::tempdir().unwrap();
    let (log, config) = log_config(logs.path());
    let host = HostProcess::start_capturing_stderr("host-rotate-owner", config);
    one_session(&host);
    eventually("the first line", || session_ids(&log).len() == 1);
    // Another user's file where the next log goes: the host's lines
    // there would be that user's to read.
    std::fs::rename(&log, logs.path().join("host.log.1")).unwrap();
    std::fs::write(&log, "").unwrap();
    std::os::unix::fs::chown(&log, Some(65534), Some(65534)).unwrap();
    host.signal(Signal::SIGHUP);
    // The whole line: stderr is read as it comes, and a check between two
    // of its reads once saw only "…reopen config.logFile: " (CI run 80).
    let reopen_said = |text: &str| {
        text.split_inclusive('\n')
            .any(|line| line.contains("reopen config.logFile") && line.ends_with('\n'))
    };
    eventually("the reopen's outcome", || {
        one_session(&host);
        reopen_said(&host.stderr_text()) || !session_ids(&log).is_empty()
    });
    assert!(
        session_ids(&log).is_empty(),
        "the host wrote to uid 65534's file"
    );
    let said = host.stderr_text();
    assert!(said.contains("owned by uid 65534"), "{said}");
}
