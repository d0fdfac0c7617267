//! The engine's data path alone, timed in one process (the cross-check of
//! `bench/compare.js --rows tput` without bwrap, python or Node): 32 MiB
//! streams over loopback, samples interleaved round-robin over
//! - `direct`: straight to the server;
//! - `listener`: a CONNECT tunnel through a listener handed to the engine
//!   (the engine accepted the connection: as the proxy port is served);
//! - `engine socket`: a CONNECT tunnel spoken on the engine's Unix socket.
//!
//! Each way: `up` (the client sends, the server counts and answers the
//! count at EOF, as bench section 8) and `down` (the server sends, the
//! client counts). Printed: median MB/s, × direct, and the mean CPU the
//! engine's runtime workers spent per stream (their threads' utime + stime)
//! and the whole process's (client, server and engine: `all ms`).
//!   cargo run --release -p cordon-egress --example relay_throughput [SAMPLES] [MIB]
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/support/mod.rs"]
mod support;

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::time::Instant;

const CHUNK: usize = 64 * 1024;

/// A server: on a connection, reads one byte naming the way (`u`/`d`);
/// `u`: counts until EOF and answers the count; `d`: sends `size` bytes.
fn server(size: usize) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in listener.incoming() {
            let mut s = s.unwrap();
            std::thread::spawn(move || {
                let mut way = [0u8; 1];
                s.read_exact(&mut way).unwrap();
                let mut buf = vec![0u8; CHUNK];
                if way[0] == b'u' {
                    let mut total = 0usize;
                    loop {
                        let n = s.read(&mut buf).unwrap();
                        if n == 0 {
                            break;
                        }
                        total += n;
                    }
                    s.write_all(total.to_string().as_bytes()).unwrap();
                } else {
                    for _ in 0..size / CHUNK {
                        s.write_all(&buf).unwrap();
                    }
                }
            });
        }
    });
    port
}

/// CONNECT through `s`; returns when the `200` came.
fn tunnel<S: Read + Write>(mut s: S, port: u16) -> S {
    s.write_all(format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n").as_bytes())
        .unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        s.read_exact(&mut byte).unwrap();
        head.push(byte[0]);
    }
    assert!(head.starts_with(b"HTTP/1.1 200"));
    s
}

trait Stream: Read + Write {
    fn half_close(&self);
}
impl Stream for TcpStream {
    fn half_close(&self) {
        self.shutdown(Shutdown::Write).unwrap();
    }
}
impl Stream for UnixStream {
    fn half_close(&self) {
        self.shutdown(Shutdown::Write).unwrap();
    }
}

/// One stream; MB/s.
fn transfer(mut s: impl Stream, up: bool, size: usize) -> f64 {
    let mut buf = vec![0u8; CHUNK];
    let t = Instant::now();
    s.write_all(if up { b"u" } else { b"d" }).unwrap();
    if up {
        for _ in 0..size / CHUNK {
            s.write_all(&buf).unwrap();
        }
        s.half_close();
        let mut reply = String::new();
        s.read_to_string(&mut reply).unwrap();
        assert_eq!(reply.parse::<usize>().unwrap(), size);
    } else {
        let mut total = 0;
        while total < size {
            let n = s.read(&mut buf).unwrap();
            assert!(n > 0);
            total += n;
        }
    }
    size as f64 / t.elapsed().as_secs_f64() / 1e6
}

/// CPU (ms) of this whole process: client, server and engine threads.
fn process_cpu_ms() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
    (fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()) as f64 * 10.0
}

/// CPU (ms) of this process's tokio runtime workers ("tokio-rt-worker"): the engine's threads.
fn engine_cpu_ms() -> f64 {
    let mut ticks = 0u64;
    for task in std::fs::read_dir("/proc/self/task").unwrap() {
        let path = task.unwrap().path();
        let Ok(stat) = std::fs::read_to_string(path.join("stat")) else {
            continue;
        };
        let (open, close) = (stat.find('(').unwrap(), stat.rfind(')').unwrap());
        if !stat[open + 1..close].starts_with("tokio-r") {
            continue;
        }
        let fields: Vec<&str> = stat[close + 2..].split(' ').collect();
        ticks += fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    }
    ticks as f64 * 10.0 // USER_HZ 100
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let samples: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(20);
    let mib: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(32);
    let size = mib * 1024 * 1024;
    let port = server(size);
    let proxy_listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let proxy_port = proxy_listener.local_addr().unwrap().port();
    let quotas = cordon_egress::Quotas {
        max_streams: u64::MAX,
        max_bytes_out: u64::MAX,
        max_bytes_in: u64::MAX,
        ..Default::default()
    };
    let mut run = support::start_expecting_listener_with(
        vec![support::private("127.0.0.1", port)],
        quotas,
        proxy_port,
    );
    let engine = run.engine.socket_path().to_owned();
    support::serve_listener(&run, &proxy_listener);
    drop(proxy_listener);

    let names = ["direct", "listener", "engine socket"];
    // [mode][up, down] -> (MB/s samples, engine CPU ms samples, process CPU ms samples)
    type Samples = (Vec<f64>, Vec<f64>, Vec<f64>);
    let mut results: Vec<[Samples; 2]> = (0..3).map(|_| Default::default()).collect();
    for i in 0..samples + 2 {
        for (mode, per_way) in results.iter_mut().enumerate() {
            for (way, (rates, cpu, total)) in per_way.iter_mut().enumerate() {
                let up = way == 0;
                let before = engine_cpu_ms();
                let before_total = process_cpu_ms();
                let rate = match mode {
                    0 => {
                        let s = TcpStream::connect(("127.0.0.1", port)).unwrap();
                        transfer(s, up, size)
                    }
                    1 => {
                        let s = TcpStream::connect(("127.0.0.1", proxy_port)).unwrap();
                        transfer(tunnel(s, port), up, size)
                    }
                    _ => transfer(
                        tunnel(UnixStream::connect(&engine).unwrap(), port),
                        up,
                        size,
                    ),
                };
                if i >= 2 {
                    // the first two warm up
                    rates.push(rate);
                    cpu.push(engine_cpu_ms() - before);
                    total.push(process_cpu_ms() - before_total);
                }
            }
        }
    }
    println!("{mib} MiB streams, medians of {samples}, interleaved");
    println!(
        "{:<15}{:>10}{:>10}{:>12}{:>10}{:>10}{:>10}{:>12}{:>10}",
        "mode",
        "up MB/s",
        "x direct",
        "engine ms",
        "all ms",
        "down MB/s",
        "x direct",
        "engine ms",
        "all ms"
    );
    let direct: Vec<f64> = (0..2).map(|w| median(results[0][w].0.clone())).collect();
    for (name, per_way) in names.iter().zip(results) {
        let mut line = format!("{name:<15}");
        for (way, (rates, cpu, total)) in per_way.into_iter().enumerate() {
            let r = median(rates);
            let mean = |v: Vec<f64>| v.iter().sum::<f64>() / v.len() as f64; // 10 ms ticks
            line += &format!(
                "{r:>10.0}{:>10.2}{:>12.1}{:>10.1}",
                r / direct[way],
                mean(cpu),
                mean(total)
            );
        }
        println!("{line}");
    }
    run.engine.finish();
}
