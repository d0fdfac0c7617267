//! The engine's server side against real loopback servers and real Unix
//! sockets (no mocks: the only stand-in is the resolver, so names can be
//! made to resolve to 127.0.0.1 without touching the host's DNS).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::{UnixDatagram, UnixStream};
use std::sync::atomic::Ordering;

use cordon_egress::fd4_codec::{decode_response, encode_request, Fd4Request, RESPONSE_BYTES};
use cordon_egress::scm_rights::send_datagram;
use cordon_egress::sni::client_hello_for_tests;
use cordon_egress::{Destination, DestinationOptions, Quotas, StreamEnd, StreamProtocol};

use support::*;

#[test]
fn an_allowed_connect_stream_relays_both_ways_and_its_receipt_is_exact() {
    let echo = Echo::start(1);
    let mut run = start(
        vec![private("echo.test", echo.port())],
        Quotas::default(),
        false,
    );
    let (mut s, head) = connect_via_http(&run, &format!("echo.test:{}", echo.port()));
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    echo_round_trip(&mut s, &[7u8; 100_000]);
    s.shutdown(std::net::Shutdown::Write).unwrap();
    assert_eq!(s.read(&mut [0u8; 1]).unwrap(), 0, "EOF propagates back");
    drop(s);
    let receipts = run.engine.finish().receipts;
    let r = only(&receipts);
    assert_eq!(r.protocol, StreamProtocol::HttpConnect);
    assert_eq!(r.result, "allowed");
    assert_eq!(r.host.as_deref(), Some("echo.test"));
    assert_eq!(r.port, Some(echo.port()));
    assert_eq!(r.pinned_address.as_deref(), Some("127.0.0.1"));
    assert_eq!((r.bytes_from_client, r.bytes_to_client), (100_000, 100_000));
    assert_eq!(r.end, Some(StreamEnd::Closed));
    assert_eq!(
        (r.policy_digest.as_str(), r.invocation_id.as_str(), r.id),
        ("sha256:test", "inv-test", 1)
    );
    echo.stop(0);
}

#[test]
fn a_socks5_hostname_connect_is_resolved_on_the_host_and_relayed() {
    let echo = Echo::start(1);
    let mut run = start(
        vec![private("echo.test", echo.port())],
        Quotas::default(),
        false,
    );
    let mut s = proxy(&run);
    s.write_all(&[5, 1, 0]).unwrap();
    let mut reply = [0u8; 2];
    s.read_exact(&mut reply).unwrap();
    assert_eq!(reply, [5, 0]);
    let mut req = vec![5, 1, 0, 3, 9];
    req.extend_from_slice(b"echo.test");
    req.extend_from_slice(&echo.port().to_be_bytes());
    s.write_all(&req).unwrap();
    let mut reply = [0u8; 10];
    s.read_exact(&mut reply).unwrap();
    assert_eq!(reply[1], 0, "SOCKS5 success");
    echo_round_trip(&mut s, b"over socks");
    drop(s);
    let receipts = run.engine.finish().receipts;
    let r = only(&receipts);
    assert_eq!(
        (r.protocol, r.result.as_str(), r.bytes_from_client),
        (StreamProtocol::Socks5, "allowed", 10)
    );
    echo.stop(0);
}

#[test]
fn a_forwarded_http_request_reaches_upstream_without_proxy_credentials() {
    let upstream = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = upstream.local_addr().unwrap().port();
    let server = std::thread::spawn(move || {
        let (mut conn, _) = upstream.accept().unwrap();
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            conn.read_exact(&mut byte).unwrap();
            head.push(byte[0]);
        }
        conn.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
            .unwrap();
        String::from_utf8(head).unwrap()
    });
    let mut run = start(vec![private("echo.test", port)], Quotas::default(), false);
    let mut s = proxy(&run);
    write!(s, "GET http://echo.test:{port}/x HTTP/1.1\r\nHost: echo.test:{port}\r\nProxy-Authorization: Basic c2VjcmV0\r\n\r\n").unwrap();
    let mut response = String::new();
    s.read_to_string(&mut response).unwrap();
    assert!(response.ends_with("\r\n\r\nok"), "{response}");
    let seen = server.join().unwrap();
    assert_eq!(
        seen,
        format!("GET /x HTTP/1.1\r\nHost: echo.test:{port}\r\nConnection: close\r\n\r\n")
    );
    let receipts = run.engine.finish().receipts;
    let r = only(&receipts);
    assert_eq!(
        (r.protocol, r.result.as_str()),
        (StreamProtocol::HttpForward, "allowed")
    );
    assert_eq!(r.bytes_from_client, seen.len() as u64);
    assert_eq!(r.bytes_to_client, response.len() as u64);
}

#[test]
fn destinations_not_allowed_are_refused_with_their_reason_and_never_connected() {
    let echo = Echo::start(1);
    let p = echo.port();
    let mut run = start(
        vec![
            private("echo.test", p),
            Destination::parse_pair(&format!("rebind.test:{p}")).unwrap(),
            Destination::parse_pair(&format!("127.0.0.1:{p}")).unwrap(),
        ],
        Quotas::default(),
        false,
    );
    let cases = [
        (
            format!("echo.test:{}", p.wrapping_add(1).max(1)),
            "no-destination",
        ), // another port
        (format!("other.test:{p}"), "no-destination"), // another host
        (format!("localhost:{p}"), "no-destination"),  // another name for the same address
        (format!("127.0.0.2:{p}"), "no-destination"),  // an IP literal not listed
        (format!("rebind.test:{p}"), "private-address"), // a name resolving to loopback
        (format!("127.0.0.1:{p}"), "private-address"), // a listed private literal, not allowed private
        (format!("[::1]:{p}"), "unsupported"),         // IPv6 literal
        (format!("bad_name:{p}"), "malformed-name"),
    ];
    for (target, reason) in &cases {
        let (_s, head) = connect_via_http(&run, target);
        assert!(
            head.starts_with("HTTP/1.1 403") || head.starts_with("HTTP/1.1 501"),
            "{target}: {head}"
        );
        assert!(
            head.contains(&format!("X-Cordon-Refusal: {reason}\r\n")),
            "{target}: {head}"
        );
    }
    let receipts = run.engine.finish().receipts;
    assert_eq!(receipts.len(), cases.len());
    for (r, (_, reason)) in receipts.iter().zip(&cases) {
        assert_eq!(&r.result, reason);
        assert_eq!((r.bytes_from_client, r.bytes_to_client), (0, 0));
    }
    assert_eq!(
        echo.received.load(Ordering::SeqCst),
        0,
        "no refused stream reached upstream"
    );
    echo.stop(1);
}

#[test]
fn an_sni_mismatch_is_refused_before_any_byte_goes_upstream() {
    let echo = Echo::start(3);
    let sni_dest = Destination::new(
        "echo.test",
        echo.port(),
        DestinationOptions {
            allow_private_addresses: true,
            require_tls_sni: true,
        },
    )
    .unwrap();
    let mut run = start(vec![sni_dest], Quotas::default(), false);
    let target = format!("echo.test:{}", echo.port());
    let (mut wrong, head) = connect_via_http(&run, &target);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    wrong
        .write_all(&client_hello_for_tests(Some("evil.example")))
        .unwrap();
    assert_closed(&mut wrong);
    let (mut plain, _) = connect_via_http(&run, &target);
    plain.write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
    assert_closed(&mut plain);
    let hello = client_hello_for_tests(Some("echo.test"));
    let (mut right, _) = connect_via_http(&run, &target);
    right.write_all(&hello).unwrap();
    let mut back = vec![0u8; hello.len()];
    right.read_exact(&mut back).unwrap();
    drop(right);
    let receipts = run.engine.finish().receipts;
    let results: Vec<_> = receipts
        .iter()
        .map(|r| (r.result.as_str(), r.sni_verified, r.bytes_from_client))
        .collect();
    assert_eq!(
        results,
        [
            ("sni-mismatch", false, 0),
            ("sni-absent", false, 0),
            ("allowed", true, hello.len() as u64)
        ]
    );
    assert_eq!(
        echo.received.load(Ordering::SeqCst),
        hello.len() as u64,
        "only the verified stream's bytes reached upstream"
    );
    echo.stop(0);
}

#[test]
fn byte_and_stream_quotas_close_or_refuse_streams_with_a_receipt_saying_so() {
    let echo = Echo::start(1);
    let quotas = Quotas {
        max_bytes_out: 10,
        max_streams: 1,
        ..Quotas::default()
    };
    let mut run = start(vec![private("echo.test", echo.port())], quotas, false);
    let target = format!("echo.test:{}", echo.port());
    let (mut s, _) = connect_via_http(&run, &target);
    s.write_all(&[1u8; 50]).unwrap();
    let echoed = read_until_closed(&mut s);
    assert!(echoed.len() <= 10, "{} bytes came back", echoed.len());
    wait_until(|| echo.received.load(Ordering::SeqCst) >= 10);
    assert_eq!(
        echo.received.load(Ordering::SeqCst),
        10,
        "only the quota's bytes went upstream"
    );
    // The second stream is refused at accept: closed before any reply (the
    // write may already fail, which is the same refusal seen earlier).
    let mut second = proxy(&run);
    let _ = write!(second, "CONNECT {target} HTTP/1.1\r\n\r\n");
    assert!(
        read_until_closed(&mut second).is_empty(),
        "second stream closed at accept"
    );
    let receipts = run.engine.finish().receipts;
    assert_eq!(receipts[0].end, Some(StreamEnd::QuotaBytesOut));
    assert_eq!(receipts[0].bytes_from_client, 10);
    assert_eq!(receipts[1].result, "quota-streams");
    echo.stop(0);
}

fn fd4_request(channel: &UnixDatagram, host: &str, port: u16) -> (u8, Option<OwnedFd>) {
    channel
        .send(&encode_request(&Fd4Request {
            host: host.into(),
            port,
        }))
        .unwrap();
    let (bytes, fd) = recv_with_fd(channel.as_fd(), 64);
    assert_eq!(bytes.len(), RESPONSE_BYTES);
    (decode_response(&bytes).unwrap(), fd)
}

#[test]
fn the_fd4_channel_hands_over_a_relay_end_for_allowed_destinations_only() {
    let echo = Echo::start(1);
    let mut run = start(
        vec![private("echo.test", echo.port())],
        Quotas::default(),
        true,
    );
    let channel = run.fd4.take().unwrap();
    let (status, fd) = fd4_request(&channel, "echo.test", echo.port());
    assert_eq!(status, 0);
    let mut stream = UnixStream::from(fd.unwrap());
    echo_round_trip(&mut stream, b"fd4 bytes");
    drop(stream);
    let (status, fd) = fd4_request(&channel, "other.test", echo.port());
    assert_eq!((status, fd.is_none()), (1, true), "DENIED, no descriptor");
    channel.send(b"MECQ\x01").unwrap();
    let (bytes, fd) = recv_with_fd(channel.as_fd(), 64);
    assert_eq!(
        (decode_response(&bytes), fd.is_none()),
        (Some(4), true),
        "MALFORMED"
    );
    // A request carrying a descriptor: refused at the sender where the
    // kernel can (SO_PASSRIGHTS off on the engine's end, 6.16+), otherwise
    // received and malformed (no ancillary data allowed).
    let req = encode_request(&Fd4Request {
        host: "echo.test".into(),
        port: echo.port(),
    });
    let refused_at_sender = match send_datagram(channel.as_fd(), &req, Some(channel.as_fd())) {
        Err(e) if e.raw_os_error() == Some(nix::libc::EPERM) => true,
        sent => {
            sent.unwrap();
            let (bytes, _) = recv_with_fd(channel.as_fd(), 64);
            assert_eq!(decode_response(&bytes), Some(4));
            false
        }
    };
    assert_eq!(
        refused_at_sender,
        cordon_passed_fds::refuse_passed_descriptors(channel.as_fd()),
        "refused at the sender exactly where the kernel knows SO_PASSRIGHTS"
    );
    let receipts = run.engine.finish().receipts;
    let results: Vec<_> = receipts
        .iter()
        .map(|r| (r.protocol, r.result.as_str()))
        .collect();
    let mut expected = vec![
        (StreamProtocol::Fd4, "allowed"),
        (StreamProtocol::Fd4, "no-destination"),
        (StreamProtocol::Fd4, "protocol-error"),
    ];
    if !refused_at_sender {
        expected.push((StreamProtocol::Fd4, "protocol-error"));
    }
    assert_eq!(results, expected);
    assert_eq!(receipts[0].bytes_from_client, 9);
    echo.stop(0);
}

#[test]
fn finishing_a_run_tears_down_an_open_stream() {
    let echo = Echo::start(1);
    let mut run = start(
        vec![private("echo.test", echo.port())],
        Quotas::default(),
        false,
    );
    let (mut s, _) = connect_via_http(&run, &format!("echo.test:{}", echo.port()));
    echo_round_trip(&mut s, b"open");
    assert_eq!(run.engine.open_streams(), 1);
    let receipts = run.engine.finish().receipts;
    assert_eq!(
        s.read(&mut [0u8; 4]).unwrap(),
        0,
        "the sandbox side sees EOF"
    );
    assert_eq!(only(&receipts).end, Some(StreamEnd::Cancelled));
    assert!(
        UnixStream::connect(run.engine.socket_path()).is_err(),
        "the socket is gone"
    );
    echo.stop(0);
}

#[test]
fn two_runs_cannot_use_each_others_destinations() {
    let (a, b) = (Echo::start(1), Echo::start(1));
    let mut run_a = start(
        vec![private("echo.test", a.port())],
        Quotas::default(),
        false,
    );
    let mut run_b = start(
        vec![private("other.test", b.port())],
        Quotas::default(),
        false,
    );
    let (_s, head) = connect_via_http(&run_b, &format!("echo.test:{}", a.port()));
    assert!(head.contains("X-Cordon-Refusal: no-destination"), "{head}");
    let (mut s, head) = connect_via_http(&run_a, &format!("echo.test:{}", a.port()));
    assert!(head.starts_with("HTTP/1.1 200"));
    echo_round_trip(&mut s, b"a");
    drop(s);
    assert_eq!(run_b.engine.finish().receipts[0].invocation_id, "inv-test");
    assert_eq!(run_a.engine.finish().receipts.len(), 1);
    a.stop(0);
    b.stop(1);
}

/// Whether the engine has closed its end of `s` (EOF or reset, seen
/// without waiting).
fn ended(s: &UnixStream) -> bool {
    let mut byte = [0u8; 1];
    match nix::sys::socket::recv(
        std::os::fd::AsRawFd::as_raw_fd(s),
        &mut byte,
        nix::sys::socket::MsgFlags::MSG_DONTWAIT | nix::sys::socket::MsgFlags::MSG_PEEK,
    ) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => e != nix::errno::Errno::EAGAIN,
    }
}

// Round 11, R11-8: a connection refused at accept (the concurrent-stream
// quota) waited for its first message up to the handshake deadline, so idle
// connections held a provider descriptor each past any concurrent bound.
#[test]
fn engine_socket_connections_past_the_concurrent_quota_are_closed_at_accept_while_idle_ones_hold_their_slots(
) {
    let echo = Echo::start(1);
    let quotas = Quotas {
        max_concurrent_streams: 2,
        ..Quotas::default()
    };
    let mut run = start(vec![private("echo.test", echo.port())], quotas, false);
    let idle = [proxy(&run), proxy(&run)];
    wait_until(|| run.engine.open_streams() == 2);
    assert_eq!(run.engine.open_streams(), 2);
    let mut refused: Vec<UnixStream> = (0..20).map(|_| proxy(&run)).collect();
    for s in &mut refused {
        assert_closed(s); // blocks until the engine closes it
    }
    // Closed at accept, not at the deadline: the idle ones, accepted first
    // and ended only by that deadline, are still open.
    assert!(
        idle.iter().all(|s| !ended(s)),
        "the refused connections were closed at the handshake deadline, not at accept"
    );
    assert_eq!(run.engine.open_streams(), 2, "refusals hold no slot");
    // The idle ones end at the handshake deadline, freeing their slots.
    for mut s in idle {
        assert_closed(&mut s);
    }
    wait_until(|| run.engine.open_streams() == 0);
    let (mut s, head) = connect_via_http(&run, &format!("echo.test:{}", echo.port()));
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    echo_round_trip(&mut s, b"after the flood");
    drop(s);
    let receipts = run.engine.finish().receipts;
    let count = |result: &str| receipts.iter().filter(|r| r.result == result).count();
    assert_eq!(count("quota-concurrent-streams"), 20);
    assert_eq!(count("protocol-error"), 2, "idle ones end at the deadline");
    assert_eq!(count("allowed"), 1);
    echo.stop(0);
}
