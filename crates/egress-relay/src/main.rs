//! cordon-egress-relay: the first program bwrap starts in every sandbox
//! (cordon's in-sandbox starter; its name is from when it served the
//! mediated network only).
//!
//! `cordon-egress-relay [--alive-fd N] [--listen PORT --engine PATH] [--fd4-from N] [--pwd DIR] -- PROGRAM ARGS…`
//!
//! Steps, in order (any failure exits 125 with one `cordon-egress-relay:`
//! line on stderr, before the program starts):
//! 1. `--alive-fd N`: the provider-liveness gate (provider_gate.rs): the
//!    program starts only once the sandbox's init has armed its
//!    parent-death signal and while the outer bwrap (so the provider) lives;
//! 2. `--fd4-from N`: move descriptor N to fd 4 (the fd-4 egress channel; bwrap
//!    keeps its own fd 4 for `--info-fd`, so the launcher passes it higher);
//! 3. `--listen`: bind 127.0.0.1:PORT in the sandbox's private network
//!    namespace — before the program starts, so its first connect cannot race
//!    it — and hand the listening socket to the engine over the engine socket
//!    (SCM_RIGHTS, answered by the engine), then close it: the engine accepts
//!    and relays every connection itself, and no relay process stays behind;
//! 4. exec the program in this process (same pid: signals and exit status
//!    are the program's own), its environment without the `PWD` bwrap
//!    exports after its chdir (or with `--pwd DIR`, the planned one). A
//!    program that cannot be executed exits 127 (not found) or 126 (any
//!    other reason), as `env` and the shells do.
//!
//! The relay holds no secret and no route out: the engine socket is the only
//! thing it can reach, and the engine decides everything.

mod fds;
mod handoff;
mod provider_gate;

use std::ffi::OsString;
use std::net::{Ipv4Addr, SocketAddrV4, TcpListener};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;

/// Exit status when the relay cannot set up (documented in docs/network.md).
const SETUP_FAILED: i32 = 125;
/// Exit status when the program cannot be found.
const NOT_FOUND: i32 = 127;
/// Exit status when the program was found but cannot be executed.
const NOT_EXECUTABLE: i32 = 126;
/// The descriptor the fd-4 egress channel must occupy in the program.
const EGRESS_CHANNEL_FD: i32 = 4;

#[derive(Debug, Default)]
struct Args {
    listen: Option<u16>,
    engine: Option<PathBuf>,
    fd4_from: Option<i32>,
    alive_fd: Option<i32>,
    pwd: Option<OsString>,
    program: Vec<OsString>,
}

fn parse(mut raw: impl Iterator<Item = OsString>) -> Result<Args, String> {
    let mut args = Args::default();
    while let Some(flag) = raw.next() {
        let mut value = |name: &str| raw.next().ok_or_else(|| format!("{name} needs a value"));
        match flag.to_str() {
            Some("--listen") => {
                let v = value("--listen")?;
                args.listen = Some(
                    v.to_str()
                        .and_then(|s| s.parse().ok())
                        .ok_or("--listen takes a port")?,
                );
            }
            Some("--engine") => args.engine = Some(PathBuf::from(value("--engine")?)),
            Some("--alive-fd") => {
                let v = value("--alive-fd")?;
                args.alive_fd = Some(
                    v.to_str()
                        .and_then(|s| s.parse().ok())
                        .filter(|fd: &i32| *fd >= 0)
                        .ok_or("--alive-fd takes a descriptor")?,
                );
            }
            Some("--pwd") => args.pwd = Some(value("--pwd")?),
            Some("--fd4-from") => {
                let v = value("--fd4-from")?;
                args.fd4_from = Some(
                    v.to_str()
                        .and_then(|s| s.parse().ok())
                        .ok_or("--fd4-from takes a descriptor")?,
                );
            }
            Some("--") => {
                args.program = raw.collect();
                break;
            }
            _ => return Err(format!("unknown argument {flag:?}")),
        }
    }
    if args.program.is_empty() {
        return Err("no program after --".into());
    }
    if args.listen.is_some() != args.engine.is_some() {
        return Err("--listen and --engine go together".into());
    }
    Ok(args)
}

fn fail(message: &str) -> ! {
    eprintln!("cordon-egress-relay: {message}");
    std::process::exit(SETUP_FAILED);
}

fn main() {
    // First: until it execs the program, this process must not be
    // ptrace-able or its /proc/<pid>/mem writable from elsewhere in the
    // sandbox (same uid; round 5, R5-1). The exec makes it dumpable again.
    if let Err(e) = nix::sys::prctl::set_dumpable(false) {
        fail(&format!("cannot make itself non-dumpable: {e}"));
    }
    let args = parse(std::env::args_os().skip(1)).unwrap_or_else(|e| fail(&e));
    if let Some(fd) = args.alive_fd {
        let alive = fds::adopt(fd).unwrap_or_else(|e| fail(&format!("--alive-fd {fd}: {e}")));
        let status = provider_gate::StatusFiles {
            init: std::path::Path::new(provider_gate::INIT_STATUS),
            own: std::path::Path::new(provider_gate::OWN_STATUS),
        };
        if let Err(e) = provider_gate::pass(alive, &status, provider_gate::ARM_BOUND) {
            fail(&e.to_string());
        }
    }
    if let Some(from) = args.fd4_from {
        if let Err(e) = fds::move_to(from, EGRESS_CHANNEL_FD) {
            fail(&format!("cannot install the egress channel on fd 4: {e}"));
        }
    }
    if let (Some(port), Some(engine)) = (args.listen, &args.engine) {
        let listener = TcpListener::bind(SocketAddrV4::new(Ipv4Addr::LOCALHOST, port))
            .unwrap_or_else(|e| fail(&format!("cannot listen on 127.0.0.1:{port}: {e}")));
        if let Err(e) = handoff::hand_over_listener(&listener, engine) {
            fail(&format!(
                "cannot hand the proxy listener to the engine: {e}"
            ));
        }
        drop(listener); // the program never holds it (close-on-exec anyway)
    }
    let (program, rest) = args
        .program
        .split_first()
        .unwrap_or_else(|| fail("no program"));
    // In this process's own environment, not through Command's: the
    // program then gets the variables in bwrap's order (Command would
    // rebuild the list sorted). Single-threaded here, so no getenv races.
    std::env::remove_var("PWD");
    if let Some(pwd) = &args.pwd {
        std::env::set_var("PWD", pwd);
    }
    let error = std::process::Command::new(program).args(rest).exec();
    eprintln!("cordon-egress-relay: cannot run {program:?}: {error}");
    let status = match error.kind() {
        std::io::ErrorKind::NotFound => NOT_FOUND,
        _ => NOT_EXECUTABLE,
    };
    std::process::exit(status);
}
