//! One command: spawned as the leader of its own process group, its stdout
//! and stderr pumped to the host in bounded chunks, its exit reported after
//! the last chunk. Steps: spawn (new process group, explicit env, cwd) →
//! `STARTED` → one thread pumps both streams and watches for the exit → on
//! exit it drains what is already buffered for at most `DRAIN_MS` (a
//! background process may hold the pipes open forever) → `EXIT`.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use serde::Deserialize;

use crate::frame::{self, Writer};

/// Commands one agent runs at once (the host's own bound is lower).
pub const MAX_COMMANDS: usize = 64;
/// After the command exited, how long its pipes are still read (ms): what
/// it wrote just before exiting arrives; a background process that keeps
/// the pipe open does not keep the command from settling.
const DRAIN_MS: u64 = 100;
/// Poll period of a pump (ms): how soon it notices the command exited.
const PUMP_POLL_MS: u16 = 20;
/// After each read discarded past the cap: at most one pipe-full (64 KiB)
/// per stream per pause, ~12 MB/s, so output past the cap still drains (a
/// long build log ends) while `yes` sits blocked on its pipe almost always.
const DISCARD_PAUSE: Duration = Duration::from_millis(5);

/// An `EXEC` frame's JSON payload.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExecRequest {
    pub argv: Vec<String>,
    pub cwd: String,
    pub env: Vec<(String, String)>,
    /// `STDIN` chunks follow (an empty one closes); else stdin is /dev/null.
    pub stdin: bool,
    /// The host's cap on this command's output, stdout and stderr together
    /// (bytes). Past it the agent still reads the pipes (so the command is
    /// never blocked on a full pipe) but sends nothing more (round 11, R11-5:
    /// the host decoded and dropped gigabytes a second on its own CPU).
    #[serde(rename = "outputBytes")]
    pub output_bytes: u64,
}

struct Running {
    pgid: i32,
    /// The command's stdin writer thread; dropped (stdin closed) by an empty `STDIN`.
    stdin: Option<Sender<Vec<u8>>>,
}

pub type Out = Arc<Writer<std::fs::File>>;

/// The live commands, by the host's id.
#[derive(Default, Clone)]
pub struct Table(Arc<Mutex<HashMap<u32, Running>>>);

impl Table {
    fn with<T>(&self, f: impl FnOnce(&mut HashMap<u32, Running>) -> T) -> T {
        match self.0.lock() {
            Ok(mut map) => f(&mut map),
            Err(poisoned) => f(&mut poisoned.into_inner()),
        }
    }

    /// Signals a command's group (only SIGINT, SIGTERM, SIGKILL are sent).
    pub fn signal(&self, id: u32, signal: u8) {
        let signal = match i32::from(signal) {
            2 => Signal::SIGINT,
            15 => Signal::SIGTERM,
            _ => Signal::SIGKILL,
        };
        if let Some(pgid) = self.with(|m| m.get(&id).map(|r| r.pgid)) {
            let _ = killpg(Pid::from_raw(pgid), signal);
        }
    }

    /// Hands a `STDIN` chunk to the command's writer thread; an empty one
    /// closes the command's stdin. The host sends a chunk only after the
    /// previous one was acknowledged, so at most one waits here.
    pub fn feed(&self, id: u32, data: Vec<u8>) {
        self.with(|m| {
            let Some(running) = m.get_mut(&id) else {
                return;
            };
            if data.is_empty() {
                running.stdin = None;
            } else if let Some(stdin) = &running.stdin {
                let _ = stdin.send(data);
            }
        });
    }

    /// SIGKILL to every live group: the host is gone.
    pub fn kill_all(&self) {
        for pgid in self.with(|m| m.values().map(|r| r.pgid).collect::<Vec<_>>()) {
            let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
        }
    }
}

fn refuse(out: &Out, id: u32, message: &str) -> io::Result<()> {
    out.send(
        frame::EXIT,
        id,
        &frame::exit_payload(frame::SPAWN_FAILED, 0, message),
    )
}

/// The agent's working directory, read once (bwrap's `--chdir`).
fn is_agent_cwd(cwd: &str) -> bool {
    static AGENT_CWD: OnceLock<Option<PathBuf>> = OnceLock::new();
    AGENT_CWD
        .get_or_init(|| std::env::current_dir().ok())
        .as_deref()
        .is_some_and(|own| own == Path::new(cwd))
}

/// Starts command `id`; a refusal or spawn failure is reported as its `EXIT`.
pub fn start(table: &Table, out: &Out, id: u32, payload: &[u8]) -> io::Result<()> {
    let request: ExecRequest = match serde_json::from_slice(payload) {
        Ok(r) => r,
        Err(e) => return refuse(out, id, &format!("invalid exec request: {e}")),
    };
    if id == 0 || table.with(|m| m.contains_key(&id)) {
        return refuse(out, id, "command id 0 or already in use");
    }
    if table.with(|m| m.len()) >= MAX_COMMANDS {
        return refuse(out, id, "too many commands running in this session");
    }
    let Some((program, args)) = request.argv.split_first() else {
        return refuse(out, id, "empty argv");
    };
    let mut command = Command::new(program);
    // A command in the agent's own directory (the usual `/workspace`)
    // inherits it: with no `current_dir`, std spawns with `posix_spawn`
    // (vfork-like) instead of a full fork of the agent.
    if !is_agent_cwd(&request.cwd) {
        command.current_dir(&request.cwd);
    }
    let spawned = command
        .args(args)
        // The agent's own environment is the launcher's (empty, or the
        // mediated network's proxy variables); the host's entries go over it.
        .envs(request.env.iter().map(|(k, v)| (k, v)))
        .stdin(if request.stdin {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own process group: a timeout kills the command and what it started.
        .process_group(0)
        .spawn();
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) => return refuse(out, id, &format!("spawn {program}: {e}")),
    };
    let pid = child.id();
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        let _ = child.kill();
        let _ = child.wait();
        return refuse(out, id, "spawned without pipes");
    };
    let stdin = child
        .stdin
        .take()
        .map(|pipe| spawn_stdin_writer(pipe, id, out));
    table.with(|m| {
        m.insert(
            id,
            Running {
                pgid: pid as i32,
                stdin,
            },
        )
    });
    out.send(frame::STARTED, id, &pid.to_be_bytes())?;
    let pipes = [
        (File::from(OwnedFd::from(stdout)), frame::STDOUT),
        (File::from(OwnedFd::from(stderr)), frame::STDERR),
    ];
    let (table, out) = (table.clone(), out.clone());
    let cap = OutputCap::new(request.output_bytes);
    thread::spawn(move || {
        let status = supervise(&mut child, pipes, id, &out, cap);
        table.with(|m| m.remove(&id));
        let payload = match status {
            Ok(s) => match (s.code(), s.signal()) {
                (Some(code), _) => frame::exit_payload(frame::EXITED, code, ""),
                (None, Some(sig)) => frame::exit_payload(frame::SIGNALED, sig, ""),
                (None, None) => frame::exit_payload(frame::SPAWN_FAILED, 0, "unknown status"),
            },
            Err(e) => frame::exit_payload(frame::SPAWN_FAILED, 0, &format!("wait: {e}")),
        };
        let _ = out.send(frame::EXIT, id, &payload);
    });
    Ok(())
}

/// The command's stdin: each chunk is written on this thread (the command
/// may be slow to read, or never read), then acknowledged with `STDIN_ACK`,
/// also when it could not be written (the command closed its stdin), so the
/// host never waits on a reader that is gone. The pipe closes when the
/// sender is dropped (an empty `STDIN`, or the command's end).
fn spawn_stdin_writer(mut pipe: ChildStdin, id: u32, out: &Out) -> Sender<Vec<u8>> {
    let (sender, chunks) = channel::<Vec<u8>>();
    let out = out.clone();
    thread::spawn(move || {
        let mut open = true;
        for chunk in chunks {
            open = open && pipe.write_all(&chunk).is_ok();
            if out.send(frame::STDIN_ACK, id, &[]).is_err() {
                return;
            }
        }
    });
    sender
}

/// What is still forwarded of a command's output. Chunks are forwarded
/// while at most `limit` bytes were sent; the chunk that crosses the limit
/// is sent whole (at most `MAX_CHUNK_BYTES`), so the host sees more than its
/// cap and marks the result `truncated`; everything after it is read and
/// discarded here, inside the sandbox, on the sandbox's own CPU budget.
/// The host receives at most `limit + MAX_CHUNK_BYTES` bytes per command.
struct OutputCap {
    limit: u64,
    sent: u64,
}

impl OutputCap {
    fn new(limit: u64) -> Self {
        OutputCap { limit, sent: 0 }
    }

    /// Whether a chunk of `len` bytes is forwarded; counts it if so.
    fn forward(&mut self, len: usize) -> bool {
        if self.sent > self.limit {
            return false;
        }
        self.sent = self.sent.saturating_add(len as u64);
        true
    }
}

/// One thread per command (a thread costs ~10 syscalls to create; a warm
/// exec is short): both pipes pumped by one `poll`, the exit noticed by a
/// non-blocking wait at every wake-up (at least every `PUMP_POLL_MS`),
/// then at most `DRAIN_MS` more of output, then the reap.
fn supervise(
    child: &mut Child,
    pipes: [(File, u8); 2],
    id: u32,
    out: &Out,
    mut cap: OutputCap,
) -> io::Result<ExitStatus> {
    let mut open = pipes.map(Some);
    let mut buf = vec![0u8; frame::MAX_CHUNK_BYTES];
    let mut status = None;
    let mut drain_until: Option<Instant> = None;
    while open.iter().any(Option::is_some) {
        if status.is_none() {
            status = child.try_wait()?;
            if status.is_some() {
                drain_until = Some(Instant::now() + Duration::from_millis(DRAIN_MS));
            }
        }
        if drain_until.is_some_and(|t| Instant::now() >= t) {
            break;
        }
        let readable = match wait_readable(&open) {
            Ok(Some(readable)) => readable,
            Ok(None) if drain_until.is_some() => break,
            Ok(None) | Err(Errno::EINTR) => continue,
            Err(_) => break,
        };
        for (slot, ready) in open.iter_mut().zip(readable) {
            if let (Some((pipe, kind)), true) = (slot.as_mut(), ready) {
                match pipe.read(&mut buf) {
                    // Past the cap: discarded, then a pause, so a flooding
                    // command spends its time blocked on a full pipe instead
                    // of spinning with the agent on the machine's cores.
                    Ok(n) if n > 0 && !cap.forward(n) => thread::sleep(DISCARD_PAUSE),
                    Ok(n) if n > 0 && out.send(*kind, id, &buf[..n]).is_ok() => {}
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    _ => *slot = None,
                }
            }
        }
    }
    match status {
        Some(status) => Ok(status),
        None => child.wait(),
    }
}

/// Polls the open pipes for `PUMP_POLL_MS`: which are readable (or at
/// EOF), or `None` when none became so in time.
fn wait_readable(open: &[Option<(File, u8)>; 2]) -> Result<Option<[bool; 2]>, Errno> {
    let mut fds: Vec<PollFd> = open
        .iter()
        .flatten()
        .map(|(pipe, _)| PollFd::new(pipe.as_fd(), PollFlags::POLLIN))
        .collect();
    if poll(&mut fds, PollTimeout::from(PUMP_POLL_MS))? == 0 {
        return Ok(None);
    }
    let mut events = fds
        .iter()
        .map(|fd| fd.revents().is_some_and(|r| !r.is_empty()));
    let mut readable = [false; 2];
    for (flag, slot) in readable.iter_mut().zip(open) {
        if slot.is_some() {
            *flag = events.next().unwrap_or(false);
        }
    }
    Ok(Some(readable))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_is_forwarded_until_past_the_cap_then_discarded() {
        let mut cap = OutputCap::new(10);
        assert!(cap.forward(6));
        assert!(cap.forward(4), "exactly at the cap: still forwarded");
        assert!(
            cap.forward(3),
            "the chunk that crosses the cap tells the host it was exceeded"
        );
        assert!(!cap.forward(1));
        assert!(!cap.forward(frame::MAX_CHUNK_BYTES));
    }

    #[test]
    fn a_zero_cap_forwards_one_chunk_so_the_host_knows_output_was_cut() {
        let mut cap = OutputCap::new(0);
        assert!(cap.forward(5));
        assert!(!cap.forward(5));
    }
}
