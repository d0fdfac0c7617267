//! Issue 19: once a run's stream quota is spent, a flood of fd-4 datagrams
//! and proxy connections costs the provider no CPU — the engine stops
//! reading both (the fd-4 channel and the listener close), so every later
//! attempt fails in the sandbox. Alone in its test binary: the probe reads
//! the CPU time of every thread of this process but the flooding one (the
//! engine's workers and whatever they start).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cordon_egress::scm_rights::send_datagram;
use cordon_egress::Quotas;
use support::*;

/// CPU time so far (utime + stime, clock ticks) of every thread of this
/// process but `flooder`.
fn ticks_but(flooder: i32) -> u64 {
    let mut ticks = 0;
    for task in std::fs::read_dir("/proc/self/task").unwrap() {
        let task = task.unwrap();
        if task.file_name().to_str() == Some(&flooder.to_string()) {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(task.path().join("stat")) else {
            continue; // the thread ended meanwhile
        };
        let close = stat.rfind(')').unwrap();
        let fields: Vec<&str> = stat[close + 2..].split(' ').collect();
        ticks += fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    }
    ticks
}

#[test]
fn a_flood_past_the_spent_stream_quota_costs_the_provider_no_cpu_and_one_receipt_per_frontend() {
    let quotas = Quotas {
        max_streams: 4,
        ..Quotas::default()
    };
    let mut run = start(vec![], quotas, true);
    let channel = run.fd4.take().unwrap();
    // Spend the quota with junk (each datagram counts), then one more of
    // each kind: refused for the quota, and the frontends stop reading.
    for _ in 0..5 {
        send_datagram(channel.as_fd(), b"junk", None).unwrap();
        let mut reply = [0u8; 16];
        channel.recv(&mut reply).unwrap();
    }
    let proxy_refused = UnixStream::connect(run.engine.socket_path()).unwrap();
    wait_until(|| UnixStream::connect(run.engine.socket_path()).is_err());
    drop(proxy_refused);
    channel.set_nonblocking(true).unwrap();
    let path = run.engine.socket_path().to_owned();
    let stop = Arc::new(AtomicBool::new(false));
    let flooding = Arc::clone(&stop);
    // The flood reads its replies, so an engine that still served the
    // channel would never be parked by a full reply queue.
    let (tid_tx, tid_rx) = std::sync::mpsc::channel();
    let flood = std::thread::spawn(move || {
        // /proc/thread-self is a link to <pid>/task/<tid>.
        let me = std::fs::read_link("/proc/thread-self").unwrap();
        let tid: i32 = me.file_name().unwrap().to_str().unwrap().parse().unwrap();
        tid_tx.send(tid).unwrap();
        let mut sent = 0u64;
        let mut reply = [0u8; 16];
        while !flooding.load(Ordering::Relaxed) {
            if send_datagram(channel.as_fd(), b"junk", None).is_ok() {
                sent += 1;
            }
            // A closed seqpacket channel reads as end of file (Ok(0)).
            while matches!(channel.recv(&mut reply), Ok(n) if n > 0) {}
            if UnixStream::connect(&path).is_ok() {
                sent += 1;
            }
        }
        sent
    });
    let flooder = tid_rx.recv().unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let (before, started) = (ticks_but(flooder), Instant::now());
    std::thread::sleep(Duration::from_secs(2));
    let spent = ticks_but(flooder).saturating_sub(before);
    let elapsed = started.elapsed();
    stop.store(true, Ordering::Relaxed);
    let accepted = flood.join().unwrap();
    eprintln!("engine workers: {spent} ticks in {elapsed:?} of flood ({accepted} attempts taken)");
    // 2 s of one busy core is ~200 ticks; a stopped frontend spends ~0.
    assert!(
        spent <= 20,
        "the engine spent {spent} ticks of CPU in 2 s of a flood past its quota"
    );
    assert_eq!(accepted, 0, "nothing past the quota reached the engine");
    let receipts = run.engine.finish().receipts;
    let results: Vec<&str> = receipts.iter().map(|r| r.result.as_str()).collect();
    assert_eq!(
        results,
        [
            "protocol-error",
            "protocol-error",
            "protocol-error",
            "protocol-error",
            "quota-streams",
            "quota-streams"
        ]
    );
}
