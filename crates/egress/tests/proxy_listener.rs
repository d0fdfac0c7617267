//! The proxy port's listener, handed to the engine once by the relay
//! (issue 19): the engine accepts the program's connections itself. The
//! descriptor is the sandbox's word, so these tests pass what a hostile
//! sandbox could — a socket that is not a TCP listener, one bound elsewhere,
//! one from another network namespace, a second listener later — and kill
//! a served listener through a copy kept behind the engine's back.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::io::{IoSlice, Read, Write};
use std::net::{TcpListener, TcpStream, UdpSocket};
use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::time::{Duration, Instant};

use cordon_egress::proxy_listener::{LISTENER_ACCEPTED, LISTENER_MARKER, LISTENER_REFUSED};
use nix::sys::socket::{sendmsg, ControlMessage, MsgFlags};

use support::*;

/// What the relay does: one marker byte carrying `fd`, then the answer.
fn hand_over(run: &Run, fd: RawFd) -> u8 {
    let mut channel = UnixStream::connect(run.engine.socket_path()).unwrap();
    sendmsg::<()>(
        channel.as_raw_fd(),
        &[IoSlice::new(&[LISTENER_MARKER])],
        &[ControlMessage::ScmRights(&[fd])],
        MsgFlags::empty(),
        None,
    )
    .unwrap();
    channel
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut answer = [0u8; 1];
    channel.read_exact(&mut answer).unwrap();
    answer[0]
}

/// A listener on 127.0.0.1 and its port.
fn loopback_listener() -> (TcpListener, u16) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    (listener, port)
}

/// Is a CONNECT on `port` answered by the engine within a second?
fn answered(port: u16) -> bool {
    let Ok(mut client) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    client
        .set_read_timeout(Some(Duration::from_secs(1)))
        .unwrap();
    client
        .write_all(b"CONNECT nowhere.test:1 HTTP/1.1\r\n\r\n")
        .unwrap();
    read_tcp_head(&mut client).starts_with("HTTP/1.1 403")
}

#[test]
fn a_listener_handed_over_first_is_served_and_its_streams_have_exact_receipts() {
    let echo = Echo::start(1);
    let (listener, port) = loopback_listener();
    let mut run = start_expecting_listener(vec![private("echo.test", echo.port())], port);
    assert_eq!(hand_over(&run, listener.as_raw_fd()), LISTENER_ACCEPTED);
    drop(listener); // the relay closes its copy before the program runs
    let program = TcpStream::connect(("127.0.0.1", port)).unwrap();
    tunnel_round_trip_with_exact_receipt(&mut run, program, echo.port(), 40_000);
    echo.stop(0);
}

/// Each descriptor the relay's message could carry instead of the proxy
/// port's TCP listener, and whether the engine serves it.
#[test]
fn a_first_message_without_a_tcp_listener_on_127_0_0_1_and_the_proxy_port_is_refused() {
    let (_, port) = loopback_listener(); // a port to expect (closed again)
    let dir = tempdir::Dir::new();
    let cases: Vec<(&str, OwnedFd)> = vec![
        ("a UDP socket on the port", {
            OwnedFd::from(UdpSocket::bind(("127.0.0.1", port)).unwrap())
        }),
        ("a Unix listener", {
            OwnedFd::from(UnixListener::bind(dir.0.join("l.sock")).unwrap())
        }),
        (
            "a TCP listener on another port",
            OwnedFd::from(loopback_listener().0),
        ),
        ("a TCP listener on 0.0.0.0", {
            OwnedFd::from(TcpListener::bind(("0.0.0.0", port)).unwrap())
        }),
        ("a connected TCP socket", {
            let (listener, p) = loopback_listener();
            let client = TcpStream::connect(("127.0.0.1", p)).unwrap();
            drop(listener);
            OwnedFd::from(client)
        }),
    ];
    for (what, fd) in cases {
        let mut run = start_expecting_listener(vec![], port);
        assert_eq!(hand_over(&run, fd.as_raw_fd()), LISTENER_REFUSED, "{what}");
        run.engine.finish();
    }
}

#[test]
fn a_first_message_with_no_descriptor_is_refused() {
    let (_, port) = loopback_listener();
    let mut run = start_expecting_listener(vec![], port);
    let mut channel = UnixStream::connect(run.engine.socket_path()).unwrap();
    channel.write_all(&[LISTENER_MARKER]).unwrap();
    channel
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut answer = [0u8; 1];
    channel.read_exact(&mut answer).unwrap();
    assert_eq!(answer[0], LISTENER_REFUSED);
    run.engine.finish();
}

/// A listener bound to 127.0.0.1:PORT in a network namespace of its own
/// (`unshare -rn`), received here: the process passing it (this one) is in
/// another namespace, so serving it would answer that namespace's clients.
fn listener_from_another_namespace(port: u16) -> OwnedFd {
    let dir = tempdir::Dir::new();
    let path = dir.0.join("back.sock");
    let back = UnixListener::bind(&path).unwrap();
    let code = format!(
        "import socket,sys\nl=socket.socket();l.bind(('127.0.0.1',{port}));l.listen()\n\
         u=socket.socket(socket.AF_UNIX);u.connect(sys.argv[1])\n\
         socket.send_fds(u,[b'L'],[l.fileno()]);u.recv(1)"
    );
    let script = "ip link set lo up && exec python3 -c \"$0\" \"$1\"";
    let mut child = std::process::Command::new("unshare")
        .args(["-rn", "sh", "-c", script, &code])
        .arg(&path)
        .spawn()
        .expect("unshare (util-linux) runs: CI installs it");
    let (conn, _) = back.accept().unwrap();
    let (_, fd) = recv_with_fd(conn.as_fd(), 1);
    drop(conn);
    assert!(child.wait().unwrap().success());
    fd.expect("the child passed its listener")
}

#[test]
fn a_listener_from_another_network_namespace_than_its_sender_is_refused() {
    let (_, port) = loopback_listener();
    let foreign = listener_from_another_namespace(port);
    let mut run = start_expecting_listener(vec![], port);
    assert_eq!(hand_over(&run, foreign.as_raw_fd()), LISTENER_REFUSED);
    run.engine.finish();
}

#[test]
fn a_listener_sent_after_the_first_connection_is_never_served() {
    let (first, port) = loopback_listener();
    let mut run = start_expecting_listener(vec![], port);
    assert_eq!(hand_over(&run, first.as_raw_fd()), LISTENER_ACCEPTED);
    drop(first);
    // The program's own listener, sent the relay's way: it is only a
    // malformed proxy request (a marker byte), never accepted on.
    let (second, second_port) = loopback_listener();
    let mut channel = UnixStream::connect(run.engine.socket_path()).unwrap();
    let sent = sendmsg::<()>(
        channel.as_raw_fd(),
        &[IoSlice::new(&[LISTENER_MARKER])],
        &[ControlMessage::ScmRights(&[second.as_raw_fd()])],
        MsgFlags::empty(),
        None,
    );
    // Refused at the sender where the kernel can (the engine socket takes
    // descriptors on the relay's connection only); neutralised elsewhere.
    assert_eq!(
        sent.err(),
        kernel_refuses_descriptors().then_some(nix::errno::Errno::EPERM)
    );
    channel
        .set_read_timeout(Some(Duration::from_secs(1)))
        .unwrap();
    let mut reply = [0u8; 64];
    let n = channel.read(&mut reply).unwrap_or(0);
    assert_ne!(&reply[..n], [LISTENER_ACCEPTED], "no listener answer");
    assert!(!answered(second_port), "the second listener is not served");
    assert!(answered(port), "the first still is");
    run.engine.finish();
}

/// Whether this kernel can turn passed descriptors away at the sender
/// (`SO_PASSRIGHTS`, Linux 6.16+).
fn kernel_refuses_descriptors() -> bool {
    let (probe, _) = UnixStream::pair().unwrap();
    cordon_passed_fds::refuse_passed_descriptors(probe.as_fd())
}

/// Sends one byte carrying `fd` on a new connection to the engine socket.
fn pass_on_new_connection(run: &Run, fd: RawFd) -> (UnixStream, nix::Result<usize>) {
    let channel = UnixStream::connect(run.engine.socket_path()).unwrap();
    let sent = sendmsg::<()>(
        channel.as_raw_fd(),
        &[IoSlice::new(b"C")],
        &[ControlMessage::ScmRights(&[fd])],
        MsgFlags::empty(),
        None,
    );
    (channel, sent)
}

// W26-1/W26-2 (white-box round of 2026-12-06): whatever a program passed on
// the engine socket was received into the provider's table and closed there,
// at a cost it chose (a file with 30 000 POSIX locks: each close walks them;
// one run filled the provider's table to its limit). Only the relay's
// connection may pass one now; every later connection refuses at the sender.
#[test]
fn after_the_relays_connection_the_engine_socket_refuses_passed_descriptors() {
    // Before 6.16 (no SO_PASSRIGHTS) the sends go through and the engine
    // neutralises what they carry: the pipe's write end is then closed.
    let refused = kernel_refuses_descriptors().then_some(nix::errno::Errno::EPERM);
    let (pipe_read, pipe_write) = nix::unistd::pipe().unwrap();
    let mut kept = Vec::new();
    // With the relay's listener taken first.
    let (first, port) = loopback_listener();
    let mut run = start_expecting_listener(vec![], port);
    assert_eq!(hand_over(&run, first.as_raw_fd()), LISTENER_ACCEPTED);
    for _ in 0..3 {
        let (channel, sent) = pass_on_new_connection(&run, pipe_write.as_raw_fd());
        assert_eq!(sent.err(), refused);
        kept.push(channel);
    }
    // And with no listener to take, from the first connection on.
    let mut plain = start(vec![], cordon_egress::quota::Quotas::default(), false);
    let (channel, sent) = pass_on_new_connection(&plain, pipe_write.as_raw_fd());
    assert_eq!(sent.err(), refused);
    kept.push(channel);
    drop(pipe_write);
    run.engine.finish();
    plain.engine.finish();
    // Every copy is closed either way: EOF, not a hang.
    let mut buf = [0u8; 1];
    assert_eq!(nix::unistd::read(&pipe_read, &mut buf), Ok(0));
    drop(kept);
}

/// How many of this process's descriptors refer to the same socket as `fd`.
fn references_to(fd: RawFd) -> usize {
    let target = std::fs::read_link(format!("/proc/self/fd/{fd}")).unwrap();
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter(|link| *link == target)
        .count()
}

/// CPU time so far (utime + stime, clock ticks) of this whole process.
fn process_ticks() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .unwrap()
        .1
        .split_whitespace()
        .collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

#[test]
fn a_listener_shut_down_through_a_kept_copy_is_released_without_a_retry_loop() {
    let (listener, port) = loopback_listener();
    let mut run = start_expecting_listener(vec![], port);
    assert_eq!(hand_over(&run, listener.as_raw_fd()), LISTENER_ACCEPTED);
    assert!(answered(port));
    assert_eq!(
        references_to(listener.as_raw_fd()),
        3,
        "ours and the engine's two"
    );
    // The copy's holder kills the shared listener: accept fails EINVAL
    // from now on, and epoll reports it ready at once, every time.
    nix::sys::socket::shutdown(listener.as_raw_fd(), nix::sys::socket::Shutdown::Both).unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while references_to(listener.as_raw_fd()) > 1 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        references_to(listener.as_raw_fd()),
        1,
        "the engine released its two references to the dead listener"
    );
    let ticks = process_ticks();
    std::thread::sleep(Duration::from_secs(1));
    let spent = process_ticks() - ticks;
    assert!(
        spent <= 10,
        "{spent} clock ticks in 1 s after the listener died"
    );
    drop(listener);
    run.engine.finish();
}
