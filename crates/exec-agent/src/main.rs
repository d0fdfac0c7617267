//! cordon-exec-agent: the long-lived program of a session sandbox
//! (docs/sessions.md). It speaks session-exec-v1 on fd 3 with the host:
//! `READY` once, then for each `EXEC` a command in its own process group
//! whose output comes back as `STDOUT`/`STDERR` chunks and whose end comes
//! back as `EXIT`. It is on the untrusted side of the boundary: the host
//! validates everything it sends. EOF on fd 3 kills every command group.

mod command;
mod frame;
mod inherited_fds;
mod owner_capabilities;
mod session_files;
mod session_holder;
mod tree_removal;

use std::fs::File;
use std::io::{self, BufReader};
use std::os::fd::{AsFd, FromRawFd};
use std::sync::Arc;

use nix::fcntl::{fcntl, FcntlArg, FdFlag};

/// The protocol channel the launcher hands the program.
const CHANNEL_FD: i32 = 3;
/// What `READY` says, so a host never drives an agent of another protocol.
const PROTOCOL: &str = "session-exec-v1";

fn serve(channel: File) -> io::Result<()> {
    // Commands must never inherit the channel: one could then forge frames.
    fcntl(channel.as_fd(), FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC))?;
    let out: command::Out = Arc::new(frame::Writer::new(channel.try_clone()?));
    let ready = format!(
        "{{\"protocol\":\"{PROTOCOL}\",\"pid\":{}}}",
        std::process::id()
    );
    out.send(frame::READY, 0, ready.as_bytes())?;
    let table = command::Table::default();
    let mut input = BufReader::new(channel);
    let result = loop {
        match frame::read_frame(&mut input) {
            Ok(Some(f)) => match f.kind {
                frame::EXEC => command::start(&table, &out, f.id, &f.payload)?,
                frame::STDIN => table.feed(f.id, f.payload),
                frame::SIGNAL => table.signal(f.id, f.payload.first().copied().unwrap_or(9)),
                other => {
                    break Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("unknown frame kind {other}"),
                    ))
                }
            },
            Ok(None) => break Ok(()),
            Err(e) => break Err(e),
        }
    };
    table.kill_all();
    result
}

fn main() {
    // The session helpers of a non-root provider (docs/sessions.md): argv
    // decides before fd 3 is touched; inside a sandbox they can do nothing
    // the sandbox could not do itself.
    let args: Vec<String> = std::env::args().skip(1).collect();
    let helper = args.first().map(String::as_str);
    if matches!(helper, Some("session-holder" | "session-files")) {
        if let Err(e) = inherited_fds::close() {
            eprintln!("cordon-exec-agent: cannot close inherited descriptors: {e}");
            std::process::exit(2);
        }
    }
    match helper {
        Some("session-holder") => session_holder::main(&args[1..]),
        Some("session-files") => session_files::main(&args[1..]),
        _ => {}
    }
    // First, before fd 3 is read: no process of the sandbox (same uid) may
    // open this one's /proc/<pid>/mem or ptrace it and forge frames
    // (round 5, R5-1). Commands exec, which makes them dumpable again: they
    // are the untrusted side anyway.
    if let Err(e) = nix::sys::prctl::set_dumpable(false) {
        eprintln!("cordon-exec-agent: cannot make itself non-dumpable: {e}");
        std::process::exit(1);
    }
    // SAFETY: the launcher opened fd 3 for this program (the session's
    // protocol socket) and nothing else in this fresh process owns it.
    let channel = unsafe { File::from_raw_fd(CHANNEL_FD) };
    if let Err(e) = serve(channel) {
        eprintln!("cordon-exec-agent: {e}");
        std::process::exit(1);
    }
}
