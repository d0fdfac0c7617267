//! Which `splice(2)` directions can block the calling thread whatever
//! `SPLICE_F_NONBLOCK` says, on this kernel: which sockets a relay that
//! splices (instead of copying through a buffer, `byte_relay.rs`) could
//! use without a sandbox being able to park a runtime worker
//! (docs/performance.md › Splice instead of copy cites it).
//!
//! Each case makes the splice the engine would make while the descriptor's
//! *file* has `O_NONBLOCK` cleared — what a sandbox process that holds a copy
//! of the same file (a passed socket) can do at any time — and nothing can
//! flow: no bytes to read, or a peer that stopped reading. A call still
//! pending after a second is reported `BLOCKS` (then unblocked); one that
//! returns `EAGAIN` is safe. The last case asks whether a splice out of a Unix
//! stream socket consumes descriptors the peer attached (SCM_RIGHTS) — they
//! would then be released on the splicing thread, where the last close of a
//! socket with `SO_LINGER` waits (round 4, R4-4). And whether a splice into
//! a socket whose peer reset raises SIGPIPE (a `send` can pass
//! `MSG_NOSIGNAL`; a splice cannot).
//!   cargo run --release -p cordon-egress --example splice_directions
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{IoSlice, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::sync::mpsc;
use std::time::Duration;

use nix::fcntl::{fcntl, splice, FcntlArg, OFlag, SpliceFFlags};
use nix::sys::socket::{sendmsg, ControlMessage, MsgFlags};

fn set_blocking(fd: impl AsFd, blocking: bool) {
    let flags = OFlag::from_bits_truncate(fcntl(fd.as_fd(), FcntlArg::F_GETFL).unwrap());
    let flags = if blocking {
        flags - OFlag::O_NONBLOCK
    } else {
        flags | OFlag::O_NONBLOCK
    };
    fcntl(fd.as_fd(), FcntlArg::F_SETFL(flags)).unwrap();
}

fn pipe() -> (OwnedFd, OwnedFd) {
    nix::unistd::pipe2(OFlag::O_CLOEXEC | OFlag::O_NONBLOCK).unwrap()
}

fn tcp_pair() -> (TcpStream, TcpStream) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let a = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let (b, _) = listener.accept().unwrap();
    (a, b)
}

/// Runs `splice` on another thread; `unblock` is called if it has not
/// returned within a second. Returns the verdict.
fn verdict(
    call: impl FnOnce() -> nix::Result<usize> + Send + 'static,
    unblock: impl FnOnce(),
) -> String {
    let (tx, rx) = mpsc::channel();
    let thread = std::thread::spawn(move || {
        let _ = tx.send(call());
    });
    let verdict = match rx.recv_timeout(Duration::from_secs(1)) {
        Ok(r) => format!("returns {r:?} (safe)"),
        Err(_) => {
            unblock();
            format!("BLOCKS (then {:?})", rx.recv().unwrap())
        }
    };
    thread.join().unwrap();
    verdict
}

/// Fills `socket`'s path to a peer that does not read, until EAGAIN.
fn fill(socket: &impl AsFd) {
    set_blocking(socket, false);
    let chunk = [0u8; 65536];
    while nix::unistd::write(socket.as_fd(), &chunk).is_ok() {}
}

fn read_case(name: &str, source: impl AsFd + Send + 'static, cleared: bool, wake: impl FnOnce()) {
    let copy = source.as_fd().try_clone_to_owned().unwrap(); // the other holder's copy: same file
    set_blocking(&source, false);
    if cleared {
        set_blocking(&copy, true);
    }
    let (r, w) = pipe();
    let v = verdict(
        move || {
            let got = splice(
                &source,
                None,
                &w,
                None,
                65536,
                SpliceFFlags::SPLICE_F_NONBLOCK,
            );
            drop(r);
            got
        },
        wake,
    );
    println!("{name:<58} {v}");
}

fn write_case(name: &str, dest: impl AsFd + Send + 'static, cleared: bool, wake: impl FnOnce()) {
    fill(&dest);
    let copy = dest.as_fd().try_clone_to_owned().unwrap();
    if cleared {
        set_blocking(&copy, true);
    }
    let (r, w) = pipe();
    nix::unistd::write(&w, &[7u8; 4096]).unwrap();
    let v = verdict(
        move || {
            let got = splice(&r, None, &dest, None, 4096, SpliceFFlags::SPLICE_F_NONBLOCK);
            drop(w);
            got
        },
        wake,
    );
    println!("{name:<58} {v}");
}

fn main() {
    println!(
        "kernel {}",
        std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .unwrap()
            .trim()
    );
    for cleared in [false, true] {
        let state = if cleared {
            "O_NONBLOCK cleared"
        } else {
            "O_NONBLOCK set"
        };

        let (mut peer, socket) = tcp_pair();
        read_case(
            &format!("TCP socket -> pipe, nothing to read, {state}"),
            socket,
            cleared,
            move || {
                peer.write_all(b"x").unwrap();
            },
        );

        let (peer, socket) = tcp_pair();
        write_case(
            &format!("pipe -> TCP socket, peer not reading, {state}"),
            socket,
            cleared,
            move || {
                let mut peer = peer;
                let mut sink = vec![0u8; 1 << 20];
                set_blocking(&peer, false);
                for _ in 0..64 {
                    let _ = peer.read(&mut sink);
                }
            },
        );

        let (mut peer, socket) = UnixStream::pair().unwrap();
        read_case(
            &format!("Unix stream -> pipe, nothing to read, {state}"),
            socket,
            cleared,
            move || {
                peer.write_all(b"x").unwrap();
            },
        );

        let (peer, socket) = UnixStream::pair().unwrap();
        write_case(
            &format!("pipe -> Unix stream, peer not reading, {state}"),
            socket,
            cleared,
            move || {
                let mut peer = peer;
                let mut sink = vec![0u8; 1 << 20];
                set_blocking(&peer, false);
                for _ in 0..64 {
                    let _ = peer.read(&mut sink);
                }
            },
        );
    }

    // SCM_RIGHTS on a Unix stream: one byte carrying a pipe's write end; the
    // sender closes its copy. If the splice consumes the descriptor, the
    // pipe's read end sees EOF (the last write end closed — by the splicer).
    let (peer, socket) = UnixStream::pair().unwrap();
    let (probe_r, probe_w) = pipe();
    sendmsg::<()>(
        peer.as_raw_fd(),
        &[IoSlice::new(b"y")],
        &[ControlMessage::ScmRights(&[probe_w.as_raw_fd()])],
        MsgFlags::empty(),
        None,
    )
    .unwrap();
    drop(probe_w);
    set_blocking(&socket, false);
    let (r, w) = pipe();
    let got = splice(
        &socket,
        None,
        &w,
        None,
        65536,
        SpliceFFlags::SPLICE_F_NONBLOCK,
    );
    drop((r, w));
    let mut byte = [0u8; 1];
    let eof = nix::unistd::read(&probe_r, &mut byte) == Ok(0);
    println!(
        "{:<58} splice {got:?}; attached descriptor {}",
        "Unix stream -> pipe, byte carries SCM_RIGHTS",
        if eof {
            "RELEASED BY THE SPLICING THREAD"
        } else {
            "still queued / held"
        }
    );

    // A splice into a socket whose peer is gone: SIGPIPE or only EPIPE?
    // (In a child with SIGPIPE at its default; Node and Rust programs ignore it.)
    let (peer, socket) = tcp_pair();
    nix::sys::socket::setsockopt(
        &peer,
        nix::sys::socket::sockopt::Linger,
        &nix::libc::linger {
            l_onoff: 1,
            l_linger: 0,
        },
    )
    .unwrap();
    drop(peer); // reset
    std::thread::sleep(Duration::from_millis(100));
    let (r, w) = pipe();
    nix::unistd::write(&w, b"z").unwrap();
    // SAFETY: the child only resets a signal disposition, splices and exits.
    match unsafe { nix::unistd::fork() }.unwrap() {
        nix::unistd::ForkResult::Child => {
            // SAFETY: restoring the default disposition of SIGPIPE.
            unsafe {
                nix::sys::signal::signal(
                    nix::sys::signal::Signal::SIGPIPE,
                    nix::sys::signal::SigHandler::SigDfl,
                )
            }
            .unwrap();
            let _ = splice(&r, None, &socket, None, 1, SpliceFFlags::SPLICE_F_NONBLOCK);
            let _ = splice(&r, None, &socket, None, 1, SpliceFFlags::SPLICE_F_NONBLOCK);
            std::process::exit(0);
        }
        nix::unistd::ForkResult::Parent { child } => {
            let status = nix::sys::wait::waitpid(child, None).unwrap();
            println!(
                "{:<58} child {status:?}",
                "pipe -> reset TCP socket, SIGPIPE at default"
            );
        }
    }
}
