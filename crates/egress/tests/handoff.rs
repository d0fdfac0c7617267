//! The relay's hand-over (issue 19): the in-sandbox relay passes each
//! accepted client socket to the engine (one marker byte, SCM_RIGHTS) and
//! leaves the data path. The passed socket is the sandbox's too — it can keep
//! a copy and change the shared file's flags and options — so these tests do
//! what a hostile sandbox would: clear `O_NONBLOCK` behind the engine's back
//! and hand over a socket that lingers an hour on close with bytes stuck in
//! it. Each must leave the engine's runtime free (a later client is still
//! served) — the engine's runtime is the launcher's, a shard of one thread
//! per core, and three such sockets are handed over, so a single blocked
//! thread per socket would starve it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::io::{IoSlice, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::time::Duration;

use cordon_egress::client_stream::HANDOFF_MARKER;
use cordon_egress::Quotas;
use nix::fcntl::{fcntl, FcntlArg, OFlag};
use nix::sys::socket::{sendmsg, setsockopt, sockopt, ControlMessage, MsgFlags};

use support::*;

/// A loopback TCP connection as the relay sees it: the program's end and
/// the end the relay accepted (the one it hands over).
fn program_and_accepted() -> (TcpStream, TcpStream) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let program = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let (accepted, _) = listener.accept().unwrap();
    program
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    (program, accepted)
}

/// What the relay does: connect to the engine socket, send the marker with
/// the socket attached.
fn hand_over(run: &Run, socket: &TcpStream) {
    let channel = UnixStream::connect(run.engine.socket_path()).unwrap();
    sendmsg::<()>(
        channel.as_raw_fd(),
        &[IoSlice::new(&[HANDOFF_MARKER])],
        &[ControlMessage::ScmRights(&[socket.as_raw_fd()])],
        MsgFlags::empty(),
        None,
    )
    .unwrap();
}

/// A client handed over now is still served: the runtime's workers are free.
fn assert_still_served(run: &Run) {
    let (mut program, accepted) = program_and_accepted();
    hand_over(run, &accepted);
    drop(accepted);
    program
        .write_all(b"CONNECT nowhere.test:1 HTTP/1.1\r\n\r\n")
        .unwrap();
    let head = read_tcp_head(&mut program);
    assert!(
        head.starts_with("HTTP/1.1 403"),
        "a later client was answered: {head:?}"
    );
}

#[test]
fn a_handed_over_client_socket_is_relayed_by_the_engine_and_its_receipt_is_exact() {
    let echo = Echo::start(1);
    let mut run = start(
        vec![private("echo.test", echo.port())],
        Quotas::default(),
        false,
    );
    let (program, accepted) = program_and_accepted();
    hand_over(&run, &accepted);
    drop(accepted); // the relay's copy closes: the engine's is the last
    tunnel_round_trip_with_exact_receipt(&mut run, program, echo.port(), 50_000);
    echo.stop(0);
}

/// Waits (at most 5 s) for the engine's adoption to set `O_NONBLOCK` on the
/// file `socket` shares with the engine's copy.
fn wait_until_nonblocking(socket: &TcpStream) {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let flags = OFlag::from_bits_truncate(fcntl(socket, FcntlArg::F_GETFL).unwrap());
        if flags.contains(OFlag::O_NONBLOCK) {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the engine adopts the socket (a stalled engine never does)"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn a_handed_over_socket_whose_o_nonblock_the_sandbox_clears_blocks_no_worker() {
    let mut run = start(vec![], Quotas::default(), false);
    let mut kept = Vec::new();
    for _ in 0..3 {
        let (mut program, accepted) = program_and_accepted();
        hand_over(&run, &accepted);
        // The sandbox keeps its copy and, once the engine has adopted the
        // socket (adopting sets `O_NONBLOCK` on the shared file, so a clear
        // before it would be undone), makes the shared file blocking, then
        // sends half a request: the engine reads it and reads again.
        wait_until_nonblocking(&accepted);
        fcntl(&accepted, FcntlArg::F_SETFL(OFlag::empty())).unwrap();
        program.write_all(b"CONN").unwrap();
        kept.push((program, accepted));
    }
    std::thread::sleep(Duration::from_millis(200));
    assert_still_served(&run);
    drop(kept);
    run.engine.finish();
}

#[test]
fn a_handed_over_socket_that_lingers_an_hour_with_bytes_stuck_blocks_no_worker_when_closed() {
    let mut run = start(vec![], Quotas::default(), false);
    let mut programs = Vec::new();
    for _ in 0..3 {
        let (mut program, accepted) = program_and_accepted();
        // Fill what the program never reads, then linger an hour on close:
        // the last close of `accepted` would wait in tcp_close for it.
        accepted.set_nonblocking(true).unwrap();
        let block = vec![0u8; 65536];
        let mut idle = 0;
        while idle < 20 {
            match (&accepted).write(&block) {
                Ok(n) if n > 0 => idle = 0,
                _ => {
                    idle += 1;
                    std::thread::sleep(Duration::from_millis(2));
                }
            }
        }
        let linger = nix::libc::linger {
            l_onoff: 1,
            l_linger: 3600,
        };
        setsockopt(&accepted, sockopt::Linger, &linger).unwrap();
        hand_over(&run, &accepted);
        drop(accepted); // the engine holds the last reference
                        // A request that is refused at once: the engine closes the socket.
        program
            .write_all(b"CONNECT nowhere.test:1 HTTP/1.1\r\n\r\n")
            .unwrap();
        programs.push(program);
    }
    // The refusals' replies cannot be written (the program's queue is
    // full): each ends at the handshake deadline (5 s), then closes.
    std::thread::sleep(Duration::from_secs(6));
    assert_still_served(&run);
    drop(programs);
    run.engine.finish();
}
