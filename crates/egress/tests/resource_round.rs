//! Issue 19's findings 2 and 3 and the stop's end reason, as probes against
//! the real engine (loopback upstreams, real sockets).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::os::fd::AsFd;
use std::os::unix::net::UnixDatagram;
use std::sync::mpsc;
use std::time::Duration;

use cordon_egress::fd4_codec::{decode_response, encode_request, Fd4Request};
use cordon_egress::scm_rights::send_datagram;
use cordon_egress::{NetworkReceipts, Quotas, StreamEnd};

/// Beyond the engine's own teardown bound (2 s), with room for a loaded machine.
const SETTLE_BOUND: Duration = Duration::from_secs(5);
use support::*;

/// Finishes the run on another thread; None if it did not return in `bound`.
fn finish_within(mut run: Run, bound: Duration) -> Option<NetworkReceipts> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let receipts = run.engine.finish();
        let _ = tx.send(receipts);
        drop(run);
    });
    rx.recv_timeout(bound).ok()
}

#[test]
fn a_program_that_never_reads_its_replies_and_sends_fd4_over_fd4_cannot_keep_its_run_open() {
    let echo = Echo::start(1);
    // A stream quota above the junk it takes to fill the replies (a spent
    // quota closes the channel: quota_flood.rs).
    let quotas = Quotas {
        max_streams: 1_000_000,
        ..Quotas::default()
    };
    let mut run = start(vec![private("echo.test", echo.port())], quotas, true);
    let channel = run.fd4.take().unwrap();
    // Junk (each refused with a reply) until the engine's replies fill its
    // send buffer: the engine stops consuming, and the program's own unread
    // datagrams stay charged to its socket (SIOCOUTQ > 0).
    channel.set_nonblocking(true).unwrap();
    let mut sent = 0;
    loop {
        channel.send(b"junk").unwrap();
        sent += 1;
        if sent % 50 == 0 {
            std::thread::sleep(Duration::from_millis(30));
            if unsent_bytes(&channel) > 0 {
                break;
            }
        }
        assert!(sent < 50_000, "the engine never stopped consuming");
    }
    // Its own end over itself: the engine's receive queue now holds the
    // channel's other end, so the channel cannot close by the program alone.
    // Where the kernel can (SO_PASSRIGHTS off on the engine's end, 6.16+),
    // the send fails at the sender instead; the filled channel must still
    // settle.
    match send_datagram(channel.as_fd(), b"MECQ", Some(channel.as_fd())) {
        Err(e) if e.raw_os_error() == Some(nix::libc::EPERM) => {
            assert!(cordon_passed_fds::refuse_passed_descriptors(
                channel.as_fd()
            ));
        }
        sent => sent.unwrap(),
    }
    drop(channel);
    let receipts = finish_within(run, SETTLE_BOUND).expect("finish() returned: the run settles");
    assert!(receipts.receipts.iter().all(|r| r.result != "allowed"));
    assert!(!receipts.receipts.is_empty());
    echo.stop(1);
}

/// Bytes this socket sent that its peer has not read yet (SIOCOUTQ).
fn unsent_bytes(socket: &UnixDatagram) -> i32 {
    use std::os::fd::AsRawFd;
    let mut queued: nix::libc::c_int = 0;
    // SAFETY: SIOCOUTQ (same number as TIOCOUTQ) writes one int through
    // the pointer, which points at a live c_int.
    let rc = unsafe { nix::libc::ioctl(socket.as_raw_fd(), nix::libc::TIOCOUTQ, &mut queued) };
    assert_eq!(rc, 0);
    queued
}

fn fd4_status(channel: &UnixDatagram, host: &str, port: u16) -> u8 {
    channel
        .send(&encode_request(&Fd4Request {
            host: host.into(),
            port,
        }))
        .unwrap();
    let mut reply = [0u8; 64];
    let n = channel.recv(&mut reply).unwrap();
    decode_response(&reply[..n]).unwrap()
}

#[test]
fn a_flood_of_junk_refusals_never_pushes_out_the_receipt_of_a_stream_that_carried_data() {
    let echo = Echo::start(1);
    let quotas = Quotas {
        max_streams: 10_000,
        ..Quotas::default()
    };
    let mut run = start(vec![private("echo.test", echo.port())], quotas, true);
    let channel = run.fd4.take().unwrap();
    channel
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut reply = [0u8; 64];
    for _ in 0..4100 {
        channel.send(b"junk").unwrap();
        let n = channel.recv(&mut reply).unwrap();
        assert_eq!(decode_response(&reply[..n]), Some(4), "MALFORMED");
    }
    channel
        .send(&encode_request(&Fd4Request {
            host: "echo.test".into(),
            port: echo.port(),
        }))
        .unwrap();
    let (bytes, fd) = recv_with_fd(channel.as_fd(), 64);
    assert_eq!(decode_response(&bytes), Some(0));
    let mut stream = std::os::unix::net::UnixStream::from(fd.unwrap());
    echo_round_trip(&mut stream, b"after the flood");
    drop(stream);
    let done = run.engine.finish();
    let allowed: Vec<_> = done
        .receipts
        .iter()
        .filter(|r| r.result == "allowed")
        .collect();
    assert_eq!(allowed.len(), 1, "the real stream has its receipt");
    assert_eq!(allowed[0].bytes_from_client, 15);
    assert_eq!(done.receipts.len(), 4096 + 1, "refusals are capped at 4096");
    assert_eq!(done.dropped, 4, "refusals past the cap are counted");
    echo.stop(0);
}

#[test]
fn junk_fd4_datagrams_count_against_the_stream_quota() {
    let echo = Echo::start(1);
    let quotas = Quotas {
        max_streams: 3,
        ..Quotas::default()
    };
    let mut run = start(vec![private("echo.test", echo.port())], quotas, true);
    let channel = run.fd4.take().unwrap();
    let mut reply = [0u8; 64];
    for _ in 0..3 {
        channel.send(b"junk").unwrap();
        channel.recv(&mut reply).unwrap();
    }
    assert_eq!(
        fd4_status(&channel, "echo.test", echo.port()),
        6,
        "RESOURCE: the junk spent the stream quota"
    );
    let results: Vec<_> = run
        .engine
        .finish()
        .receipts
        .iter()
        .map(|r| r.result.clone())
        .collect();
    assert_eq!(
        results,
        [
            "protocol-error",
            "protocol-error",
            "protocol-error",
            "quota-streams"
        ]
    );
    echo.stop(1);
}

#[test]
fn a_stop_during_the_proxy_handshake_is_recorded_as_cancelled_not_as_a_client_fault() {
    let run = start(vec![private("echo.test", 9)], Quotas::default(), false);
    let mut s = proxy(&run);
    s.write_all(b"CONNECT echo.te").unwrap(); // the rest never comes
    wait_until(|| run.engine.open_streams() == 1);
    std::thread::sleep(Duration::from_millis(50));
    let receipts = finish_within(run, SETTLE_BOUND).unwrap();
    assert_eq!(only(&receipts.receipts).result, "cancelled");
}

#[test]
fn a_stop_while_waiting_for_the_client_hello_ends_an_admitted_stream_as_cancelled() {
    let upstream = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = upstream.local_addr().unwrap().port();
    let sni = cordon_egress::Destination::new(
        "echo.test",
        port,
        cordon_egress::DestinationOptions {
            allow_private_addresses: true,
            require_tls_sni: true,
        },
    )
    .unwrap();
    let run = start(vec![sni], Quotas::default(), false);
    let (mut s, head) = connect_via_http(&run, &format!("echo.test:{port}"));
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    s.write_all(&[0x16, 3, 1]).unwrap(); // a ClientHello that never completes
    let _upstream_side = upstream.accept().unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let receipts = finish_within(run, SETTLE_BOUND).unwrap();
    let r = only(&receipts.receipts);
    assert_eq!(
        (r.result.as_str(), r.end, r.sni_verified),
        ("allowed", Some(StreamEnd::Cancelled), false)
    );
    let mut buf = [0u8; 1];
    assert!(
        matches!(s.read(&mut buf), Ok(0) | Err(_)),
        "the stream is closed"
    );
}

/// A resolver that takes 300 ms and records how many lookups ran at once.
struct SlowResolver {
    now: std::sync::atomic::AtomicUsize,
    most: std::sync::atomic::AtomicUsize,
}

impl cordon_egress::Resolve for SlowResolver {
    fn resolve(&self, _host: &str, _port: u16) -> std::io::Result<Vec<std::net::IpAddr>> {
        use std::sync::atomic::Ordering::SeqCst;
        let now = self.now.fetch_add(1, SeqCst) + 1;
        self.most.fetch_max(now, SeqCst);
        std::thread::sleep(Duration::from_millis(300));
        self.now.fetch_sub(1, SeqCst);
        Ok(vec!["127.0.0.1".parse().unwrap()])
    }
}

#[test]
fn many_streams_to_a_slow_name_hold_at_most_four_blocking_lookups_of_the_provider() {
    let echo = Echo::start(16);
    let slow = std::sync::Arc::new(SlowResolver {
        now: 0.into(),
        most: 0.into(),
    });
    let run = std::sync::Arc::new(start_with(
        vec![private("echo.test", echo.port())],
        Quotas::default(),
        false,
        slow.clone(),
    ));
    let target = format!("echo.test:{}", echo.port());
    let clients: Vec<_> = (0..16)
        .map(|_| {
            let (run, target) = (run.clone(), target.clone());
            std::thread::spawn(move || connect_via_http(&run, &target).1)
        })
        .collect();
    for c in clients {
        assert!(c.join().unwrap().starts_with("HTTP/1.1 200"));
    }
    let most = slow.most.load(std::sync::atomic::Ordering::SeqCst);
    assert!(most <= 4, "{most} lookups ran at once");
    drop(run);
    echo.stop(0);
}
