//! The relay's set-up steps, run as the real binary outside a sandbox:
//! `--fd4-from N` puts the egress channel on fd 4 for the program, and an
//! fd 4 that is already open fails the set-up (exit 125) instead of being
//! silently replaced; the program's environment has no `PWD` but the
//! planned one, the rest in the order given; a program that cannot run
//! exits 127 or 126, as with `env`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::fd::{AsFd, AsRawFd, IntoRawFd, OwnedFd, RawFd};

use nix::fcntl::{FcntlArg, FdFlag};
use std::os::unix::net::UnixDatagram;
use std::os::unix::process::CommandExt;
use std::process::{Command, Output};

/// Runs the relay with `slot` holding one end of a datagram pair and, when
/// `occupy_fd4`, a file already open on fd 4; the program is `sh -c script`.
fn relay(slot: RawFd, occupy_fd4: bool, script: &str) -> Output {
    let (ours, theirs) = UnixDatagram::pair().unwrap();
    let theirs = OwnedFd::from(theirs);
    let devnull = OwnedFd::from(std::fs::File::open("/dev/null").unwrap());
    let mut command = Command::new(env!("CARGO_BIN_EXE_cordon-egress-relay"));
    command.args([
        "--fd4-from",
        &slot.to_string(),
        "--",
        "/bin/sh",
        "-c",
        script,
    ]);
    // SAFETY: only dup2 and fcntl (async-signal-safe) run between fork and
    // exec; the duplicates are deliberately left open (into_raw_fd) for the
    // relay.
    unsafe {
        command.pre_exec(move || {
            if theirs.as_raw_fd() == slot {
                // Our end already sits in the slot (other tests open
                // descriptors meanwhile): dup2 onto itself would keep its
                // close-on-exec and the relay would find the slot empty.
                nix::fcntl::fcntl(theirs.as_fd(), FcntlArg::F_SETFD(FdFlag::empty()))?;
            } else {
                let _ = nix::unistd::dup2_raw(theirs.as_fd(), slot)?.into_raw_fd();
            }
            if occupy_fd4 && devnull.as_raw_fd() == 4 {
                nix::fcntl::fcntl(devnull.as_fd(), FcntlArg::F_SETFD(FdFlag::empty()))?;
            } else if occupy_fd4 {
                let _ = nix::unistd::dup2_raw(devnull.as_fd(), 4)?.into_raw_fd();
            }
            Ok(())
        });
    }
    let output = command.output().unwrap();
    drop(ours);
    output
}

#[test]
fn the_egress_channel_moves_to_fd_4_and_its_slot_is_closed() {
    let out = relay(
        9,
        false,
        "[ -S /proc/self/fd/4 ] && [ ! -e /proc/self/fd/9 ]",
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "fd 4 is the socket, fd 9 is gone: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn an_fd_4_already_open_fails_the_set_up_instead_of_being_replaced() {
    let out = relay(9, true, "exit 0");
    assert_eq!(out.status.code(), Some(125));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("cordon-egress-relay: cannot install the egress channel on fd 4"),
        "{stderr}"
    );
}

/// Runs the relay with `--listen` against a stand-in engine socket that
/// reads the hand-over and answers `answer` (or closes without one).
fn listen_against(answer: Option<u8>) -> (Output, bool) {
    use std::io::{Read, Write};
    let dir = std::env::temp_dir().join(format!(
        "cordon-relay-test-{}-{answer:?}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("engine.sock");
    let _ = std::fs::remove_file(&path);
    let engine = std::os::unix::net::UnixListener::bind(&path).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let stand_in = std::thread::spawn(move || {
        let (mut conn, _) = engine.accept().unwrap();
        let mut marker = [0u8; 1];
        let carried = conn.read(&mut marker).unwrap() == 1;
        if let Some(byte) = answer {
            conn.write_all(&[byte]).unwrap();
        }
        carried
    });
    let output = Command::new(env!("CARGO_BIN_EXE_cordon-egress-relay"))
        .args(["--listen", &port.to_string(), "--engine"])
        .arg(&path)
        .args(["--", "/bin/sh", "-c", "echo program-ran"])
        .output()
        .unwrap();
    let carried = stand_in.join().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    (output, carried)
}

#[test]
fn the_listener_is_handed_to_the_engine_before_the_program_runs() {
    let (out, carried) = listen_against(Some(0));
    assert!(carried, "the engine got the hand-over");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "program-ran\n");
}

#[test]
fn a_listener_the_engine_refuses_or_never_answers_fails_the_set_up_before_the_program() {
    for answer in [Some(1), None] {
        let (out, _) = listen_against(answer);
        assert_eq!(out.status.code(), Some(125), "{answer:?}");
        assert!(out.stdout.is_empty(), "the program never ran");
        assert!(String::from_utf8_lossy(&out.stderr)
            .starts_with("cordon-egress-relay: cannot hand the proxy listener to the engine"));
    }
}

/// The relay's last step alone (no set-up flags): exec the program.
fn exec_only(extra: &[&str], program: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cordon-egress-relay"))
        .args(extra)
        .arg("--")
        .args(program)
        .env_clear()
        .env("PWD", "/set-by-bwrap")
        .output()
        .unwrap()
}

#[test]
fn the_program_gets_no_pwd_from_bwrap_or_the_planned_one() {
    let out = exec_only(&[], &["/usr/bin/env"]);
    let env = String::from_utf8_lossy(&out.stdout);
    assert!(!env.lines().any(|l| l.starts_with("PWD=")), "{env}");
    let out = exec_only(&["--pwd", "/workspace/sub"], &["/usr/bin/env"]);
    let env = String::from_utf8_lossy(&out.stdout);
    assert!(env.lines().any(|l| l == "PWD=/workspace/sub"), "{env}");
    assert!(!env.contains("/set-by-bwrap"), "{env}");
}

#[test]
fn a_program_that_cannot_run_exits_127_when_missing_and_126_otherwise() {
    let missing = exec_only(&[], &["/nonexistent/program"]);
    assert_eq!(missing.status.code(), Some(127));
    assert!(String::from_utf8_lossy(&missing.stderr).starts_with("cordon-egress-relay: cannot run"));
    let not_executable = exec_only(&[], &[env!("CARGO_MANIFEST_DIR")]);
    assert_eq!(not_executable.status.code(), Some(126));
}

#[test]
fn an_alive_fd_that_is_not_open_fails_the_set_up_before_the_program() {
    let out = exec_only(
        &["--alive-fd", "900"],
        &["/bin/sh", "-c", "echo program-ran"],
    );
    assert_eq!(out.status.code(), Some(125));
    assert!(out.stdout.is_empty(), "the program never ran");
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("cordon-egress-relay: --alive-fd 900"));
}

#[test]
fn the_program_gets_the_environment_in_the_order_it_was_given() {
    // Started through env(1): Command would hand the relay a sorted list.
    let out = Command::new("/usr/bin/env")
        .args(["-i", "ZED=1", "PWD=/x", "ALPHA=2"])
        .arg(env!("CARGO_BIN_EXE_cordon-egress-relay"))
        .args(["--", "/usr/bin/env"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "ZED=1\nALPHA=2\n");
}
