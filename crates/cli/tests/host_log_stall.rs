//! The host's log never stalls a connection (docs/remote.md § Logging):
//! its lines are written on a thread of their own. A real host whose stderr
//! (where its lines go without `logFile`) is a pipe the test filled and
//! does not read: every write to it blocks. Meanwhile failed handshakes
//! queue their lines (more than the runtime has worker threads: with the
//! writes on the workers, each one stuck a worker and the next handshake
//! never got its `welcome`), and a new client is still welcomed and runs a
//! sandbox to its `exit`. Then the test reads the pipe: the lines that
//! waited are all there.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[macro_use]
mod support;
mod host_support;

use std::io::{Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::process::Stdio;
use std::time::{Duration, Instant};

use host_support::*;
use nix::fcntl::{fcntl, FcntlArg, OFlag};
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use serde_json::{json, Value};

/// Whether `fd` (the pipe's write end) would take one more byte now.
fn writable(fd: &OwnedFd) -> bool {
    let mut fds = [PollFd::new(fd.as_fd(), PollFlags::POLLOUT)];
    poll(&mut fds, PollTimeout::ZERO).expect("poll") > 0
}

/// Everything in the pipe now (its read end is non-blocking).
fn drain(reader: &mut std::fs::File, into: &mut Vec<u8>) {
    let mut buf = [0u8; 65536];
    loop {
        match reader.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => into.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return,
            Err(e) => panic!("read the pipe: {e}"),
        }
    }
}

/// Reads the pipe to its end when dropped (declared after the host, so
/// before the host's own drop): a host stuck on its log (the bug this file
/// tests) then unblocks and stops at its SIGTERM instead of hanging the
/// failed test.
struct DrainOnDrop(Option<std::fs::File>);

impl Drop for DrainOnDrop {
    fn drop(&mut self) {
        if let Some(mut reader) = self.0.take() {
            let _ = fcntl(&reader, FcntlArg::F_SETFL(OFlag::empty()));
            std::thread::spawn(move || std::io::copy(&mut reader, &mut std::io::sink()));
        }
    }
}

#[test]
fn a_handshake_and_a_run_go_on_while_every_write_of_the_log_is_blocked() {
    require_sandbox!();
    let (read_end, write_end) = nix::unistd::pipe().expect("pipe");
    // Only the read end is made non-blocking (its own file description):
    // the host's writes through the write end still block on a full pipe.
    fcntl(&read_end, FcntlArg::F_SETFL(OFlag::O_NONBLOCK)).expect("O_NONBLOCK");
    let host_stderr = write_end.try_clone().expect("dup");
    let host = HostProcess::start_with_stderr("log-stall", json!({}), Stdio::from(host_stderr));
    let mut guard = DrainOnDrop(Some(std::fs::File::from(read_end)));
    let reader = guard.0.as_mut().unwrap();
    let mut seen = Vec::new();
    // Wait for the start-up line, so nothing else of the host is on its
    // way into the pipe while the test fills it.
    let until = Instant::now() + Duration::from_secs(20);
    while !String::from_utf8_lossy(&seen).contains("listening on") {
        assert!(Instant::now() < until, "no start-up line: {seen:?}");
        drain(reader, &mut seen);
        std::thread::sleep(Duration::from_millis(20));
    }
    // Fill the pipe: the smallest capacity, written whole by the test.
    let capacity = fcntl(&write_end, FcntlArg::F_SETPIPE_SZ(4096)).expect("F_SETPIPE_SZ") as usize;
    drain(reader, &mut seen);
    let mut filler = std::fs::File::from(write_end.try_clone().expect("dup"));
    filler
        .write_all(&vec![b'#'; capacity])
        .expect("fill the pipe");
    assert!(!writable(&write_end), "the pipe is full");

    // More failed handshakes than the runtime has workers (2): each queues
    // a session line the writer cannot write. The host closes each one
    // after its line is queued.
    for _ in 0..4 {
        let mut bad = host.connect();
        bad.send_json(SPAWN, &json!({}));
        assert!(bad.recv().is_none(), "a failed handshake is a silent close");
    }
    // A new client: welcomed, and its sandbox runs to `exit`.
    let (mut client, welcome) = host.session();
    assert_eq!(welcome["v"], 1);
    let started = client.spawn(
        &["-c", "exit 7"],
        json!({"policy": read_only(), "invocationId": "while-stalled"}),
    );
    assert!(started["pid"].is_u64(), "{started}");
    let (_, _, exit) = client.run_to_exit();
    assert_eq!(exit["returncode"], 7, "{exit}");
    drop(client);
    // All the while nobody read the pipe: it is still full, so every
    // write of a log line blocked (or has not been tried).
    assert!(!writable(&write_end), "the pipe stayed full");

    // Now read it: the filler, then the lines that waited, none lost.
    let until = Instant::now() + Duration::from_secs(30);
    let lines = loop {
        drain(reader, &mut seen);
        let text = String::from_utf8_lossy(&seen).into_owned();
        let lines: Vec<Value> = text
            .lines()
            .filter_map(|l| serde_json::from_str(l.trim_start_matches('#')).ok())
            .collect();
        let sessions = lines.iter().filter(|l| l["event"] == "session").count();
        if sessions >= 5 {
            break lines;
        }
        assert!(Instant::now() < until, "the log so far: {text}");
        std::thread::sleep(Duration::from_millis(20));
    };
    let failed = lines
        .iter()
        .filter(|l| l["outcome"] == "handshake-failed")
        .count();
    assert_eq!(failed, 4, "{lines:?}");
    assert!(lines
        .iter()
        .any(|l| l["event"] == "run" && l["invocationId"] == "while-stalled"));
    assert!(lines.iter().all(|l| l["event"] != "log-dropped"));
    drop(guard);
    drop(host);
}
