//! What one orphaned-init sweep (host/orphan_init.rs) costs on this host:
//! it `stat`s every process's `/proc/<pid>/exe`, so its time grows with the
//! host's process count. `--extra N` starts N idle processes first (each a
//! `sleep`), to see that growth side by side with the host as it is.
//!
//! `cargo run --release -p cordon-launcher --example orphan_sweep_cost -- --extra 1000`

use std::process::{Child, Command, Stdio};
use std::time::Instant;

const ROUNDS: usize = 200;

fn processes() -> usize {
    std::fs::read_dir("/proc").map_or(0, |d| {
        d.flatten()
            .filter(|e| {
                e.file_name()
                    .to_str()
                    .is_some_and(|n| n.parse::<u32>().is_ok())
            })
            .count()
    })
}

/// Median and 90th percentile, in ms, of `ROUNDS` sweeps.
fn measure() -> (f64, f64) {
    let bwrap = std::path::Path::new("/usr/bin/bwrap");
    let mut times: Vec<f64> = (0..ROUNDS)
        .map(|_| {
            let started = Instant::now();
            cordon_launcher::host::orphan_init::sweep(bwrap);
            started.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    times.sort_by(f64::total_cmp);
    (times[ROUNDS / 2], times[ROUNDS * 9 / 10])
}

fn main() {
    let extra: usize = std::env::args()
        .skip_while(|a| a != "--extra")
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    let (p50, p90) = measure();
    println!(
        "{} processes: sweep p50 {p50:.3} ms, p90 {p90:.3} ms",
        processes()
    );
    if extra == 0 {
        return;
    }
    let mut idle: Vec<Child> = (0..extra)
        .filter_map(|_| {
            Command::new("/bin/sleep")
                .arg("600")
                .stdout(Stdio::null())
                .spawn()
                .ok()
        })
        .collect();
    let (p50, p90) = measure();
    println!(
        "{} processes: sweep p50 {p50:.3} ms, p90 {p90:.3} ms",
        processes()
    );
    for child in &mut idle {
        let _ = child.kill();
        let _ = child.wait();
    }
}
