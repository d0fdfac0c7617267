#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use std::io::{IoSlice, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::sync::mpsc;
use std::time::Duration;

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::socket::{sendmsg, ControlMessage};

fn send_with(channel: &impl AsRawFd, bytes: &[u8], fds: &[RawFd]) {
    sendmsg::<()>(
        channel.as_raw_fd(),
        &[IoSlice::new(bytes)],
        &[ControlMessage::ScmRights(fds)],
        MsgFlags::empty(),
        None,
    )
    .unwrap();
}

/// A loopback TCP connection whose sender holds unsent data (the receiver
/// never reads) and lingers an hour on close.
pub(crate) fn lingering_pair() -> (TcpStream, TcpStream) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let sender = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let (receiver, _) = listener.accept().unwrap();
    sender.set_nonblocking(true).unwrap();
    let block = vec![0u8; 65536];
    let mut idle = 0;
    while idle < 20 {
        match (&sender).write(&block) {
            Ok(n) if n > 0 => idle = 0,
            _ => {
                idle += 1;
                std::thread::sleep(Duration::from_millis(2));
            }
        }
    }
    let linger = libc::linger {
        l_onoff: 1,
        l_linger: 3600,
    };
    setsockopt(&sender, sockopt::Linger, &linger).unwrap();
    (sender, receiver)
}

#[test]
fn a_passed_lingering_tcp_socket_is_reset_and_the_receive_returns_at_once() {
    let (sandbox, host) = UnixStream::pair().unwrap();
    let (sender, receiver) = lingering_pair();
    send_with(&sandbox, b"frame", &[sender.as_raw_fd()]);
    drop(sender); // the host's copy is now the last reference
    let (done, returned) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = [0u8; 64];
        let got = recv_neutralising(host.as_fd(), &mut buf, MsgFlags::empty()).unwrap();
        done.send((got, buf[..got.bytes].to_vec())).unwrap();
    });
    // A bound for a hang, not a timing claim: unfixed, the receive would
    // wait in tcp_close for the hour of linger.
    let (got, bytes) = returned.recv_timeout(Duration::from_secs(60)).unwrap();
    assert_eq!(bytes, b"frame");
    assert!(got.had_ancillary);
    // The close was abortive: the peer sees a reset (POLLERR), not a
    // connection that stays up while the sender lingers.
    let mut fds = [PollFd::new(receiver.as_fd(), PollFlags::empty())];
    poll(&mut fds, PollTimeout::from(60_000u16)).unwrap();
    let events = fds[0].revents().unwrap();
    assert!(events.contains(PollFlags::POLLERR), "{events:?}");
}

#[test]
fn every_passed_descriptor_is_closed_and_none_stays_in_this_process() {
    let (sandbox, host) = UnixStream::pair().unwrap();
    let (read_end, write_end) =
        nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC | nix::fcntl::OFlag::O_NONBLOCK).unwrap();
    let copies: Vec<OwnedFd> = (0..SCM_MAX_FD)
        .map(|_| write_end.try_clone().unwrap())
        .collect();
    let raw: Vec<RawFd> = copies.iter().map(AsRawFd::as_raw_fd).collect();
    send_with(&sandbox, b"x", &raw);
    drop(copies);
    drop(write_end);
    let mut buf = [0u8; 8];
    let got = recv_neutralising(host.as_fd(), &mut buf, MsgFlags::empty()).unwrap();
    assert_eq!(
        (got.bytes, got.had_ancillary, got.truncated),
        (1, true, false)
    );
    // The closer thread runs detached: EOF once it has closed every copy
    // (one copy left open would keep the pipe at EAGAIN).
    let mut pfd = [PollFd::new(read_end.as_fd(), PollFlags::POLLIN)];
    poll(&mut pfd, PollTimeout::from(60_000u16)).unwrap();
    assert_eq!(nix::unistd::read(&read_end, &mut buf), Ok(0));
}

#[test]
fn bytes_without_descriptors_arrive_as_with_read() {
    let (mut sandbox, host) = UnixStream::pair().unwrap();
    sandbox.write_all(b"{\"a\":1}\n").unwrap();
    drop(sandbox);
    let mut buf = [0u8; 64];
    let got = recv_neutralising(host.as_fd(), &mut buf, MsgFlags::empty()).unwrap();
    assert_eq!(&buf[..got.bytes], b"{\"a\":1}\n");
    assert!(!got.had_ancillary);
    let end = recv_neutralising(host.as_fd(), &mut buf, MsgFlags::empty()).unwrap();
    assert_eq!(end.bytes, 0, "end of stream");
}

#[test]
fn one_passed_descriptor_is_kept_and_more_are_all_neutralised() {
    let (sandbox, host) = UnixStream::pair().unwrap();
    let (read_end, write_end) =
        nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC | nix::fcntl::OFlag::O_NONBLOCK).unwrap();
    send_with(&sandbox, b"k", &[write_end.as_raw_fd()]);
    send_with(
        &sandbox,
        b"n",
        &[write_end.as_raw_fd(), write_end.as_raw_fd()],
    );
    drop(write_end);
    let mut buf = [0u8; 8];
    let (got, kept) = recv_keeping_one(host.as_fd(), &mut buf, MsgFlags::empty()).unwrap();
    assert_eq!((got.bytes, buf[0]), (1, b'k'));
    let kept = kept.expect("the one descriptor is kept");
    let (got, none) = recv_keeping_one(host.as_fd(), &mut buf, MsgFlags::empty()).unwrap();
    assert_eq!((got.bytes, buf[0], got.had_ancillary), (1, b'n', true));
    assert!(none.is_none(), "two descriptors: none kept");
    // Only the kept copy holds the pipe open now (the two others were
    // closed on the closer thread): once it closes, the read end sees EOF.
    drop(kept);
    let mut pfd = [PollFd::new(read_end.as_fd(), PollFlags::POLLIN)];
    poll(&mut pfd, PollTimeout::from(60_000u16)).unwrap();
    assert_eq!(nix::unistd::read(&read_end, &mut buf), Ok(0));
}

#[test]
fn a_kept_lingering_socket_is_released_at_once_and_closed_gracefully() {
    let (sender, mut receiver) = lingering_pair();
    let fd = OwnedFd::from(sender);
    let (done, returned) = mpsc::channel();
    std::thread::spawn(move || {
        release_kept(fd);
        done.send(()).unwrap();
    });
    // A bound for a hang, not a timing claim: an inline close would wait
    // the hour of linger.
    returned.recv_timeout(Duration::from_secs(60)).unwrap();
    // Graceful: every byte the sender queued arrives, then EOF (a reset
    // would cut the stream short with ECONNRESET).
    receiver
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut all = Vec::new();
    std::io::Read::read_to_end(&mut receiver, &mut all).unwrap();
    assert!(!all.is_empty());
}

/// Runs `close` on a thread and fails (rather than hanging) when it has not
/// returned within a bound far past any honest close: unfixed, the close
/// waits in tcp_close for the hour of linger.
fn closes_promptly(what: &str, close: impl FnOnce() + Send + 'static) {
    let (done, returned) = mpsc::channel();
    std::thread::spawn(move || {
        close();
        let _ = done.send(());
    });
    assert!(
        returned.recv_timeout(Duration::from_secs(30)).is_ok(),
        "{what}: the close blocked on a queued lingering socket"
    );
}

#[test]
fn a_drained_stream_closes_at_once_with_a_lingering_socket_queued_and_refuses_more() {
    let (sandbox, host) = UnixStream::pair().unwrap();
    let (sender, _receiver) = lingering_pair();
    send_with(&sandbox, b"frame", &[sender.as_raw_fd()]);
    drop(sender); // the queued copy is the last reference
    closes_promptly("stream", move || {
        drain(host.as_fd());
        drop(host);
    });
    let refused = sendmsg::<()>(
        sandbox.as_raw_fd(),
        &[IoSlice::new(b"more")],
        &[],
        MsgFlags::MSG_NOSIGNAL,
        None,
    );
    assert!(refused.is_err(), "nothing can be queued once drained");
}

#[test]
fn a_drained_datagram_channel_closes_at_once_and_refuses_more_even_behind_empty_datagrams() {
    use std::os::unix::net::UnixDatagram;
    let (sandbox, host) = UnixDatagram::pair().unwrap();
    let (sender, _receiver) = lingering_pair();
    // Zero-length datagrams read like an empty queue after a shutdown.
    sandbox.send(b"").unwrap();
    sandbox.send(b"").unwrap();
    send_with(&sandbox, b"MECQ", &[sender.as_raw_fd()]);
    drop(sender);
    closes_promptly("datagram", move || drain_and_close(OwnedFd::from(host)));
    assert!(
        sandbox.send(b"more").is_err(),
        "nothing can be queued once drained"
    );
}

#[test]
fn a_seqpacket_channel_drained_with_its_peer_closes_at_once_behind_any_number_of_empty_records() {
    use nix::sys::socket::{socketpair, AddressFamily, SockFlag, SockType};
    // Round 16n, R16n-1: after the shutdown an empty queue and a zero-length
    // record both read as 0; a peer with a large send buffer queued more of
    // them than `drain`'s fixed count, and the socket behind them was purged
    // by the close. 12 000 records (more than `drain`'s 4096 reads before its
    // shutdown and 4096 empty ones after) need ~9 MiB of send buffer (root: FORCE).
    let (sandbox, host) = socketpair(
        AddressFamily::Unix,
        SockType::SeqPacket,
        None,
        SockFlag::SOCK_CLOEXEC,
    )
    .unwrap();
    setsockopt(&sandbox, sockopt::SndBufForce, &(16 << 20)).unwrap();
    for _ in 0..12_000 {
        nix::sys::socket::send(sandbox.as_raw_fd(), b"", MsgFlags::MSG_DONTWAIT).unwrap();
    }
    let (sender, _receiver) = lingering_pair();
    send_with(&sandbox, b"MECQ", &[sender.as_raw_fd()]);
    drop(sender);
    let peer = sandbox.try_clone().unwrap();
    closes_promptly("seqpacket", move || {
        drain_with_peer(host.as_fd(), peer.as_fd());
        drop(host); // on this thread: a purge would wait the linger's hour
    });
    assert_eq!(unreceived(sandbox.as_fd()), Some(0));
}

#[test]
fn a_seqpacket_drain_reads_through_more_empty_records_than_an_unprivileged_sender_can_queue() {
    use nix::sys::socket::{socketpair, AddressFamily, SockFlag, SockType};
    // Round 16n, R16n-1: the fixed 4096 was fewer than the ~11 000 records a
    // sender queued with SO_SNDBUF at a 4 MiB wmem_max. Measured: as many as
    // this host lets an unprivileged SO_SNDBUF queue.
    let (sandbox, _host) = socketpair(
        AddressFamily::Unix,
        SockType::SeqPacket,
        None,
        SockFlag::SOCK_CLOEXEC,
    )
    .unwrap();
    setsockopt(&sandbox, sockopt::SndBuf, &(i32::MAX as usize)).unwrap();
    let mut queued = 0usize;
    while nix::sys::socket::send(sandbox.as_raw_fd(), b"", MsgFlags::MSG_DONTWAIT).is_ok() {
        queued += 1;
    }
    assert!(queued > 0);
    assert!(
        crate::drain::zero_records() > queued,
        "{} empty reads, {queued} records queued",
        crate::drain::zero_records()
    );
}

#[test]
fn a_seqpacket_end_only_this_process_sends_to_is_drained_to_its_end_in_one_read_per_record() {
    use nix::sys::socket::{socketpair, AddressFamily, SockFlag, SockType};
    // The fd-4 channel at a run's end: the engine's replies (8 bytes, each
    // may carry a stream's socket) queued on the sandbox's end, the
    // engine's end closed. `drain` would read ~20 000 empty reads through.
    let (engine, sandbox) = socketpair(
        AddressFamily::Unix,
        SockType::SeqPacket,
        None,
        SockFlag::SOCK_CLOEXEC,
    )
    .unwrap();
    let mut receivers = Vec::new();
    for _ in 0..3 {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let sender = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (receiver, _) = listener.accept().unwrap();
        send_with(&engine, b"MECP\x01\0\0\0", &[sender.as_raw_fd()]);
        drop(sender); // the queued copy is the last reference
        receivers.push(receiver);
    }
    drop(engine);
    assert_eq!(crate::drain::drain_own_records(sandbox.as_fd()), 4);
    for mut receiver in receivers {
        // Each queued socket was received and closed, not left in the queue
        // (`sandbox` is still open: a socket left there would keep its
        // connection up, and the read would time out).
        receiver
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let mut byte = [0u8; 1];
        let read = std::io::Read::read(&mut receiver, &mut byte);
        assert!(
            matches!(read, Ok(0))
                || read.is_err_and(|e| e.kind() == std::io::ErrorKind::ConnectionReset),
            "the passed socket was closed"
        );
    }
}

#[test]
fn a_drained_listener_closes_at_once_with_a_lingering_socket_queued_in_its_backlog() {
    use std::os::unix::net::UnixListener;
    let dir = std::env::temp_dir().join(format!("cordon-drain-{}", std::process::id()));
    let _ = std::fs::remove_file(&dir);
    let listener = UnixListener::bind(&dir).unwrap();
    listener.set_nonblocking(true).unwrap();
    // Connected, never accepted: the queue belongs to the embryo connection.
    let client = UnixStream::connect(&dir).unwrap();
    let (sender, _receiver) = lingering_pair();
    send_with(&client, b"frame", &[sender.as_raw_fd()]);
    drop(sender);
    closes_promptly("listener", move || {
        drain_listener(listener.as_fd());
        drop(listener);
    });
    let _ = std::fs::remove_file(&dir);
}

/// Sends one byte carrying `fd` (SCM_RIGHTS) with raw libc calls only: for
/// a forked child of this multi-threaded test process, which must not
/// allocate.
fn send_fd_raw(socket: RawFd, fd: RawFd) -> bool {
    send_fd_raw_with(socket, fd, 0)
}

/// [`send_fd_raw`] with `flags` (`MSG_OOB`).
fn send_fd_raw_with(socket: RawFd, fd: RawFd, flags: libc::c_int) -> bool {
    #[repr(C)]
    struct Cmsg {
        hdr: libc::cmsghdr,
        fd: RawFd,
    }
    let mut byte = [b'u'];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    // SAFETY: zeroed plain C structs, filled in below before use.
    let mut cmsg: Cmsg = unsafe { std::mem::zeroed() };
    // SAFETY: pure arithmetic on a length.
    cmsg.hdr.cmsg_len = unsafe { libc::CMSG_LEN(std::mem::size_of::<RawFd>() as u32) } as usize;
    cmsg.hdr.cmsg_level = libc::SOL_SOCKET;
    cmsg.hdr.cmsg_type = libc::SCM_RIGHTS;
    cmsg.fd = fd;
    // SAFETY: as above.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = std::ptr::addr_of_mut!(cmsg).cast();
    msg.msg_controllen = std::mem::size_of::<Cmsg>();
    // SAFETY: every pointer in msg refers to a live local of the right size.
    unsafe { libc::sendmsg(socket, &msg, flags) == 1 }
}

/// A Unix socket made by another process (a forked child, since gone) with
/// `inner` queued in it, then `beside` in a record of its own, passed to
/// `channel`: what a sandbox passes in the nested case (round 14, R14-2).
/// With `consumed_out_of_band`, `inner` goes out of band and the child takes
/// the out-of-band byte itself before it passes the socket, leaving `inner`
/// on a zero-length record that a read frees unreceived (G1).
fn pass_nested_from_another_process(
    channel: &UnixStream,
    inner: RawFd,
    beside: RawFd,
    consumed_out_of_band: bool,
) {
    let channel = channel.as_raw_fd();
    // SAFETY: the child makes only async-signal-safe syscalls (socketpair,
    // sendmsg, recv, _exit) on descriptors it inherited, and never returns.
    match unsafe { nix::unistd::fork() }.unwrap() {
        nix::unistd::ForkResult::Child => {
            let mut pair = [0 as RawFd; 2];
            let mut byte = [0u8; 1];
            let flags = if consumed_out_of_band {
                libc::MSG_OOB
            } else {
                0
            };
            // SAFETY: a pointer to a live two-int array, as socketpair
            // takes; recv into a live one-byte array.
            let ok = unsafe {
                libc::socketpair(libc::AF_UNIX, libc::SOCK_STREAM, 0, pair.as_mut_ptr()) == 0
                    && send_fd_raw_with(pair[1], inner, flags)
                    && send_fd_raw(pair[1], beside)
                    && (!consumed_out_of_band
                        || libc::recv(pair[0], byte.as_mut_ptr().cast(), 1, libc::MSG_OOB) == 1)
                    && send_fd_raw(channel, pair[0])
            };
            // SAFETY: ends the forked child without running anything of the parent's.
            unsafe { libc::_exit(if ok { 0 } else { 1 }) }
        }
        nix::unistd::ForkResult::Parent { child } => {
            let status = nix::sys::wait::waitpid(child, None).unwrap();
            assert_eq!(status, nix::sys::wait::WaitStatus::Exited(child, 0));
        }
    }
}

/// Passes a lingering TCP socket nested in a foreign Unix socket (as
/// [`pass_nested_from_another_process`]) with a pipe's write end queued
/// after it, receives the message, and asserts that the pipe reads EOF:
/// every copy of it closed, so the closer got past the lingering socket.
fn nested_lingering_socket_does_not_hold_the_closer(consumed_out_of_band: bool) {
    let (sandbox, host) = UnixStream::pair().unwrap();
    let (sender, _receiver) = lingering_pair();
    let (read_end, write_end) =
        nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC | nix::fcntl::OFlag::O_NONBLOCK).unwrap();
    pass_nested_from_another_process(
        &sandbox,
        sender.as_raw_fd(),
        write_end.as_raw_fd(),
        consumed_out_of_band,
    );
    // The copies queued inside the passed socket are the last ones.
    drop(sender);
    drop(write_end);
    let mut buf = [0u8; 8];
    let got = recv_neutralising(host.as_fd(), &mut buf, MsgFlags::empty()).unwrap();
    assert_eq!((got.bytes, got.had_ancillary), (1, true));
    // A bound for a hang, not a timing claim: a closer held in tcp_close
    // for the hour of linger never closes the pipe's end.
    let mut pfd = [PollFd::new(read_end.as_fd(), PollFlags::POLLIN)];
    poll(&mut pfd, PollTimeout::from(30_000u16)).unwrap();
    assert_eq!(
        nix::unistd::read(&read_end, &mut buf),
        Ok(0),
        "the pipe's end queued beside the lingering socket is still open"
    );
}

#[test]
fn a_lingering_socket_queued_inside_a_passed_unix_socket_holds_no_thread() {
    nested_lingering_socket_does_not_hold_the_closer(false);
}

// G1: the sandbox takes the out-of-band byte itself, so a read of the
// passed socket frees the lingering socket inside the call, unreceived.
// Before the exiting thread, the closer read it and waited out the linger.
#[test]
fn a_lingering_socket_on_a_consumed_out_of_band_record_holds_no_thread() {
    nested_lingering_socket_does_not_hold_the_closer(true);
}

#[test]
fn a_socketpair_end_this_process_made_is_passed_back_untouched() {
    // The sandbox passing its own channel end back (the fd-4 channel over
    // itself): its queue and its other direction stay as they were.
    let (sandbox, host) = UnixStream::pair().unwrap();
    let (own_sandbox_end, own_host_end) = UnixStream::pair().unwrap();
    (&own_host_end).write_all(b"reply").unwrap();
    send_with(&sandbox, b"x", &[own_sandbox_end.as_raw_fd()]);
    let mut buf = [0u8; 8];
    recv_neutralising(host.as_fd(), &mut buf, MsgFlags::empty()).unwrap();
    // Give the detached closer thread time to (wrongly) empty it.
    std::thread::sleep(Duration::from_millis(300));
    own_sandbox_end.set_nonblocking(true).unwrap();
    let mut got = [0u8; 5];
    std::io::Read::read_exact(&mut &own_sandbox_end, &mut got).unwrap();
    assert_eq!(&got, b"reply", "the host's queued reply is still there");
    (&own_host_end).write_all(b"more").unwrap();
    (&own_sandbox_end).write_all(b"back").unwrap();
}

// W25-1: an out-of-band byte on a Unix stream socket carries descriptors
// that an ordinary read frees inside the call (a lingering TCP socket then
// held the reading thread in tcp_close). The drain takes them inline and
// hands them over.
#[test]
fn descriptors_sent_out_of_band_are_handed_to_the_drain_not_freed_inside_a_read() {
    use nix::sys::socket::{sendmsg, ControlMessage, MsgFlags};
    use std::io::IoSlice;
    let (host, sandbox) = std::os::unix::net::UnixStream::pair().unwrap();
    let devnull = std::fs::File::open("/dev/null").unwrap();
    let fds = [devnull.as_raw_fd()];
    sendmsg::<()>(
        sandbox.as_raw_fd(),
        &[IoSlice::new(b"a")],
        &[],
        MsgFlags::empty(),
        None,
    )
    .unwrap();
    sendmsg::<()>(
        sandbox.as_raw_fd(),
        &[IoSlice::new(b"!")],
        &[ControlMessage::ScmRights(&fds)],
        MsgFlags::MSG_OOB,
        None,
    )
    .unwrap();
    let mut handed = Vec::new();
    crate::drain::drain_into(host.as_fd(), crate::drain::EmptyRead::ByKind, &mut |fds| {
        handed.extend(fds)
    });
    assert_eq!(handed.len(), 1, "the out-of-band byte's descriptor");
}

/// Makes `syscall` fail with `EPERM` in every thread of this process, and in
/// every thread started later, where one of `rules` matches (every call
/// where there are none).
pub(crate) fn refuse_in_every_thread(syscall: i64, rules: Vec<seccompiler::SeccompRule>) {
    use seccompiler::{BpfProgram, SeccompAction, SeccompFilter};
    let filter = SeccompFilter::new(
        [(syscall, rules)].into_iter().collect(),
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        std::env::consts::ARCH.try_into().unwrap(),
    )
    .unwrap();
    let program: BpfProgram = filter.try_into().unwrap();
    seccompiler::apply_filter_all_threads(&program).unwrap();
}

/// Run by the test below in a process of its own: with `unshare` refused
/// (a seccomp filter, as some container profiles do), the exiting thread
/// gets no private table, and the descriptors close on that thread instead.
#[test]
#[ignore = "run by without_a_private_table_the_exiting_thread_closes_them_itself"]
fn no_unshare_child() {
    refuse_in_every_thread(libc::SYS_unshare, vec![]);
    assert_eq!(
        nix::sched::unshare(nix::sched::CloneFlags::CLONE_FILES),
        Err(nix::errno::Errno::EPERM),
        "control: unshare is refused"
    );
    let (sandbox, host) = UnixStream::pair().unwrap();
    let (read_end, write_end) =
        nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC | nix::fcntl::OFlag::O_NONBLOCK).unwrap();
    send_with(&sandbox, b"x", &[write_end.as_raw_fd()]);
    drop(write_end);
    let mut buf = [0u8; 8];
    let got = recv_neutralising(host.as_fd(), &mut buf, MsgFlags::empty()).unwrap();
    assert_eq!((got.bytes, got.had_ancillary), (1, true));
    let mut pfd = [PollFd::new(read_end.as_fd(), PollFlags::POLLIN)];
    poll(&mut pfd, PollTimeout::from(10_000u16)).unwrap();
    assert_eq!(nix::unistd::read(&read_end, &mut buf), Ok(0), "closed");
}

#[test]
fn without_a_private_table_the_exiting_thread_closes_them_itself() {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "tests::no_unshare_child",
            "--ignored",
            "--nocapture",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains("1 passed"),
        "{:?}\n{text}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}
