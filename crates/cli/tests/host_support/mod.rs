//! A `cordon host` child process on a Unix socket in a temp dir, and a raw
//! client speaking `cordon-remote-v1` frames (docs/remote.md) with std
//! sockets: nothing of the host's code is reused, so a framing mistake on
//! either side shows.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::CORDON;

pub const HELLO: u8 = 0x01;
pub const WELCOME: u8 = 0x02;
pub const UPLOAD: u8 = 0x03;
pub const SPAWN: u8 = 0x04;
pub const STARTED: u8 = 0x05;
pub const REFUSED: u8 = 0x06;
pub const DATA: u8 = 0x10;
pub const END: u8 = 0x11;
pub const STDERR: u8 = 0x12;
pub const STDERR_END: u8 = 0x13;
pub const CREDIT: u8 = 0x14;
pub const STOP: u8 = 0x20;
pub const EXIT: u8 = 0x21;
pub const PING: u8 = 0x30;
pub const PONG: u8 = 0x31;
pub const RECEIPT_QUERY: u8 = 0x40;
pub const RECEIPTS: u8 = 0x41;

/// How long a test waits for any one frame before failing (never hangs).
const FRAME_WAIT: Duration = Duration::from_secs(20);

/// Where a started host's stderr goes.
enum Stderr {
    Inherit,
    Capture,
    To(Stdio),
}

pub struct HostProcess {
    /// Short (a socket path is at most 107 bytes) and 0755: the sandbox's
    /// uid traverses it to the uploaded workspace.
    pub dir: tempfile::TempDir,
    pub socket: PathBuf,
    pub child: Child,
}

impl HostProcess {
    /// Starts a host whose configuration is the defaults below merged with
    /// `overrides` (top-level keys replace).
    pub fn start(tag: &str, overrides: Value) -> HostProcess {
        HostProcess::start_with(tag, overrides, Stderr::Inherit)
    }

    /// As [`HostProcess::start`], the host's stderr being `stderr` (a pipe
    /// the test holds, say).
    pub fn start_with_stderr(tag: &str, overrides: Value, stderr: Stdio) -> HostProcess {
        HostProcess::start_with(tag, overrides, Stderr::To(stderr))
    }

    /// As [`HostProcess::start`], the host's stderr going to
    /// [`HostProcess::stderr_text`] instead of the test's.
    pub fn start_capturing_stderr(tag: &str, overrides: Value) -> HostProcess {
        HostProcess::start_with(tag, overrides, Stderr::Capture)
    }

    fn start_with(tag: &str, overrides: Value, stderr: Stderr) -> HostProcess {
        let dir = tempfile::Builder::new()
            .prefix(&format!("ch-{tag}-"))
            .tempdir()
            .expect("temp dir");
        std::fs::set_permissions(
            dir.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .expect("chmod");
        let socket = dir.path().join("host.sock");
        let mut config = json!({
            "listen": {"unix": socket},
            "stateDir": dir.path().join("state"),
            "allowUids": [nix_uid()],
            "programs": {"sh": "/bin/sh"},
        });
        for (key, value) in overrides.as_object().expect("object") {
            config[key] = value.clone();
        }
        let path = dir.path().join("host.json");
        std::fs::write(&path, config.to_string()).expect("write config");
        let stderr = match stderr {
            Stderr::Capture => Stdio::from(
                std::fs::File::create(dir.path().join("host.stderr")).expect("stderr file"),
            ),
            Stderr::Inherit => Stdio::inherit(),
            Stderr::To(stdio) => stdio,
        };
        let child = spawn_host(&path, stderr);
        let mut host = HostProcess { dir, socket, child };
        host.wait_listening(|socket| socket.exists());
        host
    }

    /// Waits until the host accepts on its socket (a stale socket left by
    /// a killed host may already be at the path).
    fn wait_listening(&mut self, ready: impl Fn(&std::path::Path) -> bool) {
        let until = Instant::now() + Duration::from_secs(20);
        while !ready(&self.socket) {
            assert!(Instant::now() < until, "the host never placed its socket");
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("cordon host exited at start-up: {status}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGKILL: the host gets no chance to clean up or keep receipts.
    pub fn kill_hard(&mut self) {
        // Our own unreaped child: the pid cannot have been reused.
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(self.child.id() as i32),
            nix::sys::signal::Signal::SIGKILL,
        );
        let _ = self.child.wait();
    }

    /// SIGTERM, and the host's exit awaited: its graceful stop.
    pub fn stop(&mut self) {
        self.signal(nix::sys::signal::Signal::SIGTERM);
        let status = self.child.wait().expect("wait for the host");
        assert!(status.success(), "the host stopped with {status}");
    }

    pub fn signal(&self, signal: nix::sys::signal::Signal) {
        // Our own unreaped child: the pid cannot have been reused.
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(self.child.id() as i32), signal)
            .expect("signal the host");
    }

    /// What the host wrote on stderr (started with
    /// [`HostProcess::start_capturing_stderr`]).
    pub fn stderr_text(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("host.stderr")).unwrap_or_default()
    }

    /// A new host on the same configuration and state (after kill_hard or
    /// stop).
    pub fn restart(&mut self) {
        self.child = spawn_host(&self.dir.path().join("host.json"), Stdio::inherit());
        self.wait_listening(|socket| UnixStream::connect(socket).is_ok());
    }

    /// [`HostProcess::restart`], the new host's stderr going to
    /// [`HostProcess::stderr_text`] (the file started afresh).
    pub fn restart_capturing_stderr(&mut self) {
        let file = std::fs::File::create(self.dir.path().join("host.stderr")).expect("stderr file");
        self.child = spawn_host(&self.dir.path().join("host.json"), Stdio::from(file));
        self.wait_listening(|socket| UnixStream::connect(socket).is_ok());
    }

    pub fn connect(&self) -> Client {
        let stream = UnixStream::connect(&self.socket).expect("connect");
        stream.set_read_timeout(Some(FRAME_WAIT)).expect("timeout");
        Client { stream }
    }

    /// A client past `welcome`.
    pub fn session(&self) -> (Client, Value) {
        let mut client = self.connect();
        client.send_json(HELLO, &json!({"v": 1}));
        let (kind, welcome) = client.recv().expect("welcome");
        assert_eq!(kind, WELCOME);
        (
            client,
            serde_json::from_slice(&welcome).expect("welcome JSON"),
        )
    }

    /// The receipt the host kept for `invocation_id` (of any tenant),
    /// waiting for it.
    pub fn kept_receipt(&self, invocation_id: &str) -> Value {
        let text =
            std::fs::read_to_string(self.kept_receipt_file(invocation_id)).expect("read receipt");
        serde_json::from_str(&text).expect("receipt JSON")
    }

    /// The file of the receipt kept for `invocation_id`, waiting for it:
    /// `receipts/<tenant dir>/i-<id>/<name>.json`.
    pub fn kept_receipt_file(&self, invocation_id: &str) -> PathBuf {
        let dir = self.dir.path().join("state/receipts");
        let until = Instant::now() + Duration::from_secs(20);
        loop {
            let found = std::fs::read_dir(&dir).ok().and_then(|owners| {
                owners.flatten().find_map(|owner| {
                    let run = owner.path().join(format!("i-{invocation_id}"));
                    std::fs::read_dir(run)
                        .ok()?
                        .flatten()
                        .find(|e| e.file_name().to_string_lossy().ends_with(".json"))
                })
            });
            if let Some(entry) = found {
                return entry.path();
            }
            assert!(
                Instant::now() < until,
                "no receipt kept for {invocation_id}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The host's resident memory (kB), from /proc.
    pub fn rss_kb(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("host status");
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmRSS")
    }
}

fn spawn_host(config: &std::path::Path, stderr: Stdio) -> Child {
    Command::new(CORDON)
        .args(["host", "--config"])
        .arg(config)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .expect("spawn cordon host")
}

impl Drop for HostProcess {
    fn drop(&mut self) {
        // Our own unreaped child: the pid cannot have been reused.
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(self.child.id() as i32),
            nix::sys::signal::Signal::SIGTERM,
        );
        let _ = self.child.wait();
    }
}

pub fn nix_uid() -> u32 {
    nix::unistd::getuid().as_raw()
}

pub struct Client {
    pub stream: UnixStream,
}

impl Client {
    pub fn send(&mut self, kind: u8, payload: &[u8]) {
        let mut frame = ((payload.len() + 1) as u32).to_be_bytes().to_vec();
        frame.push(kind);
        frame.extend_from_slice(payload);
        // A host that closed on us is what some tests want to see.
        let _ = self.stream.write_all(&frame);
    }

    pub fn send_json(&mut self, kind: u8, value: &Value) {
        self.send(kind, value.to_string().as_bytes());
    }

    /// The next frame; `None` when the host closed the connection. A frame
    /// not arriving within FRAME_WAIT fails the test.
    pub fn recv(&mut self) -> Option<(u8, Vec<u8>)> {
        let mut head = [0u8; 5];
        if let Err(e) = self.stream.read_exact(&mut head) {
            assert!(
                !matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ),
                "no frame within {FRAME_WAIT:?}"
            );
            return None;
        }
        let len = u32::from_be_bytes([head[0], head[1], head[2], head[3]]) as usize;
        let mut payload = vec![0u8; len - 1];
        self.stream.read_exact(&mut payload).ok()?;
        Some((head[4], payload))
    }

    /// The next frame, or `None` when none came within the read timeout
    /// the caller set (the connection must still be open).
    pub fn recv_or_idle(&mut self) -> Option<(u8, Vec<u8>)> {
        let mut head = [0u8; 5];
        match self.stream.read_exact(&mut head) {
            Ok(()) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return None
            }
            Err(e) => panic!("the host closed the connection: {e}"),
        }
        let len = u32::from_be_bytes([head[0], head[1], head[2], head[3]]) as usize;
        let mut payload = vec![0u8; len - 1];
        let saved = self.stream.read_timeout().unwrap();
        self.stream.set_read_timeout(Some(FRAME_WAIT)).unwrap();
        self.stream.read_exact(&mut payload).expect("frame payload");
        self.stream.set_read_timeout(saved).unwrap();
        Some((head[4], payload))
    }

    /// The next frame as JSON of `kind`.
    pub fn expect_json(&mut self, kind: u8) -> Value {
        let (got, payload) = self.recv().expect("a frame");
        assert_eq!(got, kind, "frame {}", String::from_utf8_lossy(&payload));
        serde_json::from_slice(&payload).expect("JSON payload")
    }

    /// Reads to EOF; returns the bytes the host sent first (none expected
    /// of a silent close).
    pub fn read_to_close(&mut self) -> Vec<u8> {
        let mut rest = Vec::new();
        match self.stream.read_to_end(&mut rest) {
            Ok(_) => rest,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => rest,
            Err(e) => panic!("the host did not close within {FRAME_WAIT:?}: {e}"),
        }
    }

    pub fn spawn(&mut self, args: &[&str], options: Value) -> Value {
        self.send_json(
            SPAWN,
            &json!({"program": "sh", "args": args, "options": options}),
        );
        let (kind, payload) = self.recv().expect("started or refused");
        let value: Value = serde_json::from_slice(&payload).expect("JSON");
        assert!(kind == STARTED || kind == REFUSED, "{value}");
        value
    }

    /// Relays until `exit`, granting credit for everything received;
    /// returns (fd 3 bytes, stderr bytes, exit).
    pub fn run_to_exit(&mut self) -> (Vec<u8>, Vec<u8>, Value) {
        let (mut fd3, mut stderr) = (Vec::new(), Vec::new());
        loop {
            let (kind, payload) = self.recv().expect("the host closed before exit");
            match kind {
                DATA => {
                    fd3.extend_from_slice(&payload);
                    self.credit(0, payload.len());
                }
                STDERR => {
                    stderr.extend_from_slice(&payload);
                    self.credit(1, payload.len());
                }
                PING => self.send(PONG, &payload),
                EXIT => {
                    let exit = serde_json::from_slice(&payload).expect("exit JSON");
                    return (fd3, stderr, exit);
                }
                _ => {}
            }
        }
    }

    pub fn credit(&mut self, stream: u8, bytes: usize) {
        let mut payload = vec![stream];
        payload.extend_from_slice(&(bytes as u32).to_be_bytes());
        self.send(CREDIT, &payload);
    }
}

/// The read-only preset's shape, as a client would send it.
pub fn read_only() -> Value {
    json!({"formatVersion": 1,
           "filesystem": {"workspace": "read", "temp": "write"},
           "network": {"mode": "none"},
           "process": {"treeConfinement": "required"}})
}

/// Whether a process exists.
pub fn alive(pid: u64) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

/// Waits up to `bound` for `pid` to be gone.
pub fn gone_within(pid: u64, bound: Duration) -> bool {
    let until = Instant::now() + bound;
    while alive(pid) {
        if Instant::now() >= until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}

/// Starts `sleep 60` after `ready` on fd 3; returns (client, bwrap pid).
pub fn running_sleeper(host: &HostProcess, id: &str) -> (Client, u64) {
    let (mut client, _) = host.session();
    let started = client.spawn(
        &["-c", "echo ready >&3; exec sleep 60"],
        json!({"policy": read_only(), "invocationId": id}),
    );
    let pid = started["pid"].as_u64().expect("pid");
    loop {
        let (kind, payload) = client.recv().expect("ready");
        if kind == DATA {
            assert_eq!(payload, b"ready\n");
            return (client, pid);
        }
    }
}

pub fn mode(path: &std::path::Path) -> u32 {
    std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(path).unwrap().permissions())
        & 0o7777
}

/// `cordon host --config CONFIG` expected to refuse to start: its exit
/// status and stderr.
pub fn start_refused(config: &std::path::Path) -> (Option<i32>, String) {
    let output = finish_within(
        Command::new(CORDON)
            .args(["host", "--config"])
            .arg(config)
            .stderr(Stdio::piped()),
    );
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    (output.status.code(), stderr)
}

/// Runs a host expected to refuse to start; kills it (and fails) if it
/// is still running after 20 s.
pub fn finish_within(command: &mut std::process::Command) -> std::process::Output {
    let mut child = command
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("spawn host");
    let until = Instant::now() + Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() >= until {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the host started where it must refuse to");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("host output")
}

/// A client past `welcome`, authenticated by `token`.
pub fn hello(host: &HostProcess, token: &str) -> Client {
    let mut client = host.connect();
    client.send_json(HELLO, &json!({"v": 1, "token": token}));
    let (kind, _) = client.recv().expect("welcome");
    assert_eq!(kind, WELCOME);
    client
}

/// `receipt-query` of `id` as `token`'s tenant: the receipts answered.
pub fn query(host: &HostProcess, token: &str, id: &str) -> Vec<Value> {
    let mut client = hello(host, token);
    client.send_json(RECEIPT_QUERY, &json!({"invocationId": id}));
    let answer = client.expect_json(RECEIPTS);
    assert!(client.recv().is_none(), "the host closes after the answer");
    answer["receipts"].as_array().expect("receipts").clone()
}

/// What `tokens` maps a token by.
pub fn sha256_hex(text: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
