//! The engine's connect path alone, timed in one process (issue 19's
//! cross-check of bench section 8, without bwrap, python or Node): a
//! connect + 1-byte echo to a loopback echo server, samples interleaved
//! round-robin over
//! - `direct`: straight to the echo server;
//! - `listener`: through a listener handed to the engine (as built: the
//!   engine accepts);
//! - `engine socket`: CONNECT spoken on the engine's Unix socket.
//!
//! The destination is the literal 127.0.0.1 (no name lookup), as in bench
//! section 8. The engine runs on a two-worker runtime like the launcher's.
//!   cargo run --release -p cordon-egress --example connect_path [SAMPLES]
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/support/mod.rs"]
mod support;

use std::io::{IoSlice, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::Instant;

use cordon_egress::proxy_listener::LISTENER_MARKER;
use nix::sys::socket::{sendmsg, ControlMessage, MsgFlags};

/// An echo server on its own single-threaded runtime: a task per connection.
fn echo_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            loop {
                let (mut s, _) = listener.accept().await.unwrap();
                let _ = s.set_nodelay(true);
                tokio::spawn(async move {
                    let mut buf = [0u8; 64];
                    while let Ok(n) = s.read(&mut buf).await {
                        if n == 0 || s.write_all(&buf[..n]).await.is_err() {
                            return;
                        }
                    }
                });
            }
        });
    });
    port
}

fn send_marker(engine: &PathBuf, marker: u8, fd: i32) -> UnixStream {
    let channel = UnixStream::connect(engine).unwrap();
    sendmsg::<()>(
        channel.as_raw_fd(),
        &[IoSlice::new(&[marker])],
        &[ControlMessage::ScmRights(&[fd])],
        MsgFlags::empty(),
        None,
    )
    .unwrap();
    channel
}

/// CONNECT through `s`, then the 1-byte echo; returns when the `200` came.
/// The request goes in one write and the head is read as it comes (as an
/// HTTP client does; `write!` on the socket sent three segments and a byte
/// at a time read cost 38 more reads, both charged to the proxy before).
fn tunnel_echo(mut s: impl Read + Write, echo: u16) -> Instant {
    s.write_all(format!("CONNECT 127.0.0.1:{echo} HTTP/1.1\r\n\r\n").as_bytes())
        .unwrap();
    let mut head = Vec::new();
    let mut chunk = [0u8; 256];
    while !head.ends_with(b"\r\n\r\n") {
        let n = s.read(&mut chunk).unwrap();
        assert!(n > 0, "the proxy closed before its reply");
        head.extend_from_slice(&chunk[..n]);
    }
    assert!(head.starts_with(b"HTTP/1.1 200"));
    let admitted = Instant::now();
    s.write_all(b"x").unwrap();
    s.read_exact(&mut [0u8; 1]).unwrap();
    admitted
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let samples: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(500);
    let echo = echo_server();
    let (proxy_listener, proxy_port) = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let p = l.local_addr().unwrap().port();
        (l, p)
    };
    let quotas = cordon_egress::Quotas {
        max_streams: u64::MAX,
        ..Default::default()
    };
    let mut run = support::start_expecting_listener_with(
        vec![support::private("127.0.0.1", echo)],
        quotas,
        proxy_port,
    );
    let engine = run.engine.socket_path().to_owned();
    let mut answer = [0u8; 1];
    send_marker(&engine, LISTENER_MARKER, proxy_listener.as_raw_fd())
        .read_exact(&mut answer)
        .unwrap();
    assert_eq!(answer[0], 0, "the engine took the listener");
    drop(proxy_listener);
    // Per mode: total, and until the `200` (connect + admission + upstream connect).
    let mut times: [(Vec<f64>, Vec<f64>); 3] = Default::default();
    let us = |from: Instant, to: Instant| (to - from).as_secs_f64() * 1e6;
    for i in 0..samples + 20 {
        for (mode, (total, admit)) in times.iter_mut().enumerate() {
            let t = Instant::now();
            let admitted = match mode {
                0 => {
                    let mut s = TcpStream::connect(("127.0.0.1", echo)).unwrap();
                    s.set_nodelay(true).unwrap();
                    let connected = Instant::now();
                    s.write_all(b"x").unwrap();
                    s.read_exact(&mut [0u8; 1]).unwrap();
                    connected
                }
                1 => tunnel_echo(TcpStream::connect(("127.0.0.1", proxy_port)).unwrap(), echo),
                _ => tunnel_echo(UnixStream::connect(&engine).unwrap(), echo),
            };
            if i >= 20 {
                // the first 20 warm up
                total.push(us(t, Instant::now()));
                admit.push(us(t, admitted));
            }
        }
    }
    let names = ["direct", "listener (as built)", "engine socket"];
    let direct = median(times[0].0.clone());
    println!("connect + 1-byte echo, medians of {samples}, µs (interleaved)");
    println!(
        "{:<22}{:>8}  {:>9}  {:>12}  {:>8}",
        "mode", "total", "x direct", "until 200", "1B echo"
    );
    for (name, (total, admit)) in names.iter().zip(times) {
        let echo_phase = median(total.iter().zip(&admit).map(|(t, a)| t - a).collect());
        let (m, a) = (median(total), median(admit));
        println!(
            "{name:<22}{m:>8.0}  {:>9.2}  {a:>12.0}  {echo_phase:>8.0}",
            m / direct
        );
    }
    run.engine.finish();
}
