//! A host for tests: spawns the real `cordon-runner` with one end of a
//! socketpair installed as its fd 3, and speaks code-bridge-v1 to it.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::{json, Value};

pub mod rng;

pub const RUNNER: &str = env!("CARGO_BIN_EXE_cordon-runner");
/// Longest a test waits for one frame or for the process to end.
pub const PATIENCE: Duration = Duration::from_secs(10);

/// The signal mask the runner inherits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChildMask {
    Inherit,
    /// SIGINT and SIGTERM blocked, as some supervisors leave them.
    BlockTermination,
}

pub struct Host {
    pub child: Child,
    socket: UnixStream,
    reader: BufReader<UnixStream>,
    /// Drains stderr as it comes, so that a chatty runner never blocks.
    stderr: Option<JoinHandle<String>>,
}

/// The end of a run: exit status, stderr, and every frame read to EOF.
#[derive(Debug)]
pub struct Ended {
    pub status: ExitStatus,
    pub code: Option<i32>,
    pub stderr: String,
}

impl Host {
    /// Spawns the runner with `args`, its bridge on fd 3.
    pub fn spawn(args: &[&str]) -> Host {
        Host::spawn_with(args, ChildMask::Inherit)
    }

    pub fn spawn_with(args: &[&str], mask: ChildMask) -> Host {
        let (ours, theirs) = UnixStream::pair().expect("socketpair");
        let theirs_fd = theirs.as_raw_fd();
        let mut command = Command::new(RUNNER);
        command
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        // SAFETY: between fork and exec only async-signal-safe calls run:
        // dup2 installs the socketpair end as fd 3 (clearing close-on-exec),
        // sigemptyset/sigaddset/sigprocmask optionally block two signals.
        unsafe {
            command.pre_exec(move || {
                if libc::dup2(theirs_fd, 3) == -1 {
                    return Err(std::io::Error::last_os_error());
                }
                if mask == ChildMask::BlockTermination {
                    let mut set = std::mem::zeroed::<libc::sigset_t>();
                    libc::sigemptyset(&mut set);
                    libc::sigaddset(&mut set, libc::SIGTERM);
                    libc::sigaddset(&mut set, libc::SIGINT);
                    libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
                }
                Ok(())
            });
        }
        let mut child = command.spawn().expect("spawn cordon-runner");
        drop(theirs);
        ours.set_read_timeout(Some(PATIENCE)).expect("timeout");
        let reader = BufReader::new(ours.try_clone().expect("clone"));
        let mut pipe = child.stderr.take().expect("stderr pipe");
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            text
        });
        Host {
            child,
            socket: ours,
            reader,
            stderr: Some(stderr),
        }
    }

    pub fn send(&mut self, frame: &Value) {
        let mut bytes = serde_json::to_vec(frame).expect("json");
        bytes.push(b'\n');
        self.send_raw(&bytes);
    }

    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.socket.write_all(bytes).expect("write to runner");
    }

    /// Writes what the runner still accepts; a runner that already gave up
    /// (and closed) is not an error here.
    pub fn send_raw_lossy(&mut self, bytes: &[u8]) {
        let _ = self.socket.write_all(bytes);
    }

    /// Half-closes the host's write side (the runner reads EOF).
    pub fn shut_write(&self) {
        let _ = self.socket.shutdown(std::net::Shutdown::Write);
    }

    /// Half-closes the host's read side: the runner's next write fails
    /// (EPIPE), while the host can still write to it.
    pub fn shut_read(&self) {
        let _ = self.socket.shutdown(std::net::Shutdown::Read);
    }

    /// Waits for the process without reading anything further.
    pub fn wait_unread(mut self) -> Ended {
        self.wait()
    }

    /// The next frame's raw line (newline excluded); `None` at EOF.
    pub fn recv_line(&mut self) -> Option<String> {
        let mut line = String::new();
        match self.reader.read_line(&mut line) {
            Ok(0) => None,
            Ok(_) => Some(line.trim_end_matches('\n').to_owned()),
            Err(error) if error.kind() == std::io::ErrorKind::ConnectionReset => None,
            Err(error) => panic!("reading a frame: {error}"),
        }
    }

    pub fn recv(&mut self) -> Value {
        let line = self.recv_line().expect("a frame, not EOF");
        serde_json::from_str(&line).expect("runner frames are JSON")
    }

    /// Sends an execute frame and returns `ready`.
    pub fn execute(&mut self, code: &str, tools: &[&str]) -> Value {
        self.execute_with(
            code,
            tools,
            json!({"maxToolCalls": 64, "maxResultBytes": 524288, "timeoutMs": 5000}),
        )
    }

    pub fn execute_with(&mut self, code: &str, tools: &[&str], limits: Value) -> Value {
        let tools: Vec<Value> = tools.iter().map(|name| json!({"name": name})).collect();
        self.send(
            &json!({"version": "code-bridge-v1", "type": "execute", "executionId": "exec-1",
                          "code": code, "tools": tools, "limits": limits}),
        );
        let ready = self.recv();
        assert_eq!(ready["type"], "ready", "{ready}");
        ready
    }

    /// Sends an execute frame carrying `extensions` (cordon's extensions to
    /// v1) and returns `ready`.
    pub fn execute_ext(
        &mut self,
        code: &str,
        tools: &[&str],
        limits: Value,
        extensions: Value,
    ) -> Value {
        let tools: Vec<Value> = tools.iter().map(|name| json!({"name": name})).collect();
        self.send(
            &json!({"version": "code-bridge-v1", "type": "execute", "executionId": "exec-1",
                    "code": code, "tools": tools, "limits": limits, "extensions": extensions}),
        );
        let ready = self.recv();
        assert_eq!(ready["type"], "ready", "{ready}");
        ready
    }

    /// Answers the tool call `id` with `ok:true`.
    pub fn reply_ok(&mut self, id: u64, result: Value) {
        self.send(&json!({"version": "code-bridge-v1", "type": "tool.result", "id": id, "ok": true, "result": result}));
    }

    /// Reads frames until the terminal one, answering nothing.
    pub fn terminal(&mut self) -> Value {
        loop {
            let frame = self.recv();
            if frame["type"] == "execution.result" {
                return frame;
            }
        }
    }

    pub fn signal(&self, signal: i32) {
        let signal = Signal::try_from(signal).expect("a signal number");
        kill(Pid::from_raw(self.child.id() as i32), signal).expect("kill failed");
    }

    /// Shuts both directions of the host's end, as a host that went away,
    /// then waits for the process.
    pub fn disconnect(mut self) -> Ended {
        let _ = self.socket.shutdown(std::net::Shutdown::Both);
        self.wait()
    }

    /// Reads to EOF (asserting that no further frame arrives) and waits for
    /// the process.
    pub fn end(mut self) -> Ended {
        let mut rest = Vec::new();
        let _ = self.reader.read_to_end(&mut rest);
        assert!(
            rest.is_empty(),
            "unexpected bytes after the last frame: {:?}",
            String::from_utf8_lossy(&rest)
        );
        self.wait()
    }

    fn wait(&mut self) -> Ended {
        let started = Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                break status;
            }
            assert!(started.elapsed() < PATIENCE, "runner did not exit");
            std::thread::sleep(Duration::from_millis(2));
        };
        let stderr = self
            .stderr
            .take()
            .map(|t| t.join().expect("stderr thread"))
            .unwrap_or_default();
        Ended {
            status,
            code: status.code(),
            stderr,
        }
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Runs `code` with `tools` under `args`, answering no tool call, and
/// returns the terminal frame and how the process ended.
pub fn run(args: &[&str], code: &str, tools: &[&str]) -> (Value, Ended) {
    let mut host = Host::spawn(args);
    host.execute(code, tools);
    let terminal = host.terminal();
    let ended = host.end();
    assert_eq!(ended.code, Some(0), "stderr: {}", ended.stderr);
    (terminal, ended)
}

/// The `error.kind` of a terminal frame, or "ok".
pub fn kind(terminal: &Value) -> String {
    if terminal["ok"] == true {
        return "ok".into();
    }
    terminal["error"]["kind"].as_str().unwrap_or("?").to_owned()
}
