//! Issue 19, finding 1: the engine's CPU while every stream of a run is
//! stalled, half-closed or reset on one side. Alone in its test binary: the
//! probe reads the whole process's CPU time (utime + stime), which is only
//! the engine's when no other test runs beside it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::os::unix::net::UnixStream;
use std::time::Duration;

use cordon_egress::Quotas;
use support::*;

/// The process's CPU time so far, in clock ticks (/proc/self/stat fields 14 + 15).
fn cpu_ticks() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    let after_comm = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = after_comm.split(' ').collect();
    // after_comm starts at field 3 (state): utime is field 14, stime 15.
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

/// A TCP connection whose close resets it (SO_LINGER 0).
fn reset(stream: std::net::TcpStream) {
    nix::sys::socket::setsockopt(
        &stream,
        nix::sys::socket::sockopt::Linger,
        &nix::libc::linger {
            l_onoff: 1,
            l_linger: 0,
        },
    )
    .unwrap();
    drop(stream);
}

#[test]
fn stalled_half_closed_and_reset_streams_cost_the_provider_no_cpu() {
    let upstream = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = upstream.local_addr().unwrap().port();
    let quotas = Quotas {
        max_concurrent_streams: 64,
        ..Quotas::default()
    };
    let run = start(vec![private("echo.test", port)], quotas, false);
    let target = format!("echo.test:{port}");
    let mut held: Vec<UnixStream> = Vec::new();
    let mut upstream_held = Vec::new();
    let open = |run: &Run| {
        let (s, head) = connect_via_http(run, &target);
        assert!(head.starts_with("HTTP/1.1 200"), "{head}");
        let (u, _) = upstream.accept().unwrap();
        (s, u)
    };
    // 1. The program stops reading a download while the upstream resets.
    for _ in 0..2 {
        let (s, mut u) = open(&run);
        u.set_nonblocking(true).unwrap();
        while u.write(&[0u8; 65536]).is_ok() {}
        reset(u);
        held.push(s);
    }
    // 2. The client closes while the engine holds bytes the upstream has not taken.
    for _ in 0..2 {
        let (mut s, u) = open(&run);
        s.set_nonblocking(true).unwrap();
        while s.write(&[1u8; 65536]).is_ok() {}
        drop(s);
        upstream_held.push(u); // never reads
    }
    // 3. A request sent and the stream closed while the upstream still works.
    for _ in 0..2 {
        let (mut s, u) = open(&run);
        s.write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
        drop(s);
        upstream_held.push(u); // silent, open
    }
    // 4. Half-closed both ways one at a time, and plain idle streams.
    for _ in 0..2 {
        let (s, u) = open(&run);
        s.shutdown(std::net::Shutdown::Write).unwrap();
        held.push(s);
        upstream_held.push(u);
        let (s, u) = open(&run);
        u.shutdown(std::net::Shutdown::Write).unwrap();
        held.push(s);
        upstream_held.push(u);
    }
    std::thread::sleep(Duration::from_millis(300)); // let every close land
    let before = cpu_ticks();
    std::thread::sleep(Duration::from_secs(2));
    let spent = cpu_ticks() - before;
    eprintln!("provider CPU with every stream stalled: {spent} ticks in 2 s");
    // 2 s of one spinning core is ~200 ticks; an idle engine spends ~0.
    assert!(
        spent <= 20,
        "the provider spent {spent} ticks of CPU in 2 s with every stream stalled"
    );
    let mut buf = [0u8; 1];
    let _ = held[0].read(&mut buf);
    drop((held, upstream_held, run));
}
