//! Alone in its test binary: descriptor and thread counts of the process
//! are only meaningful when no other test runs beside it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::Duration;

use cordon_egress::Quotas;
use support::*;

fn count_dir(path: &str) -> usize {
    std::fs::read_dir(path).unwrap().count()
}

#[test]
fn two_hundred_runs_with_streams_leak_no_descriptors_or_threads() {
    let echo = Echo::start(200);
    // Warm up once so lazily created process state is not counted as a leak.
    let mut warm = start(
        vec![private("echo.test", echo.port())],
        Quotas::default(),
        true,
    );
    let (mut s, _) = connect_via_http(&warm, &format!("echo.test:{}", echo.port()));
    echo_round_trip(&mut s, b"w");
    drop(s);
    warm.engine.finish();
    drop(warm);
    std::thread::sleep(Duration::from_millis(100));
    let (fds, threads) = (count_dir("/proc/self/fd"), count_dir("/proc/self/task"));
    for _ in 0..199 {
        let mut run = start(
            vec![private("echo.test", echo.port())],
            Quotas::default(),
            true,
        );
        let (mut s, _) = connect_via_http(&run, &format!("echo.test:{}", echo.port()));
        echo_round_trip(&mut s, b"x");
        run.engine.finish(); // stream still open: torn down
        drop(s);
        drop(run);
    }
    // The echo server's per-connection threads (test scaffolding, not the
    // engine) exit on EOF a moment later; the counts may only go down.
    wait_until(|| count_dir("/proc/self/fd") <= fds && count_dir("/proc/self/task") <= threads);
    let (fds_after, threads_after) = (count_dir("/proc/self/fd"), count_dir("/proc/self/task"));
    assert!(
        fds_after <= fds,
        "descriptors leaked: {fds} before, {fds_after} after 199 runs"
    );
    assert!(
        threads_after <= threads,
        "threads leaked: {threads} before, {threads_after} after 199 runs"
    );
    echo.stop(0);
}
