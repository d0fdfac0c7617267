//! Step stamps for attribution (`bench/timeline.js`, docs/performance.md
//! "Where a run's time goes"): when the provider's environment names a file
//! in `CORDON_STEP_TRACE`, each step of a run appends one line
//! `<invocation id> <step> <CLOCK_MONOTONIC ns>` to it (one `write(2)` on an
//! `O_APPEND` descriptor, so lines of concurrent runs never interleave).
//! Node's `process.hrtime.bigint()` reads the same clock, so a bench lines
//! the launcher's steps up with its own. Unset (the default), a stamp is one
//! load of an initialised `OnceLock`. Never part of the receipt: the trace
//! is the provider's own file, for measurement only.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::sync::OnceLock;

use nix::time::{clock_gettime, ClockId};

/// The environment variable naming the trace file (read once per process).
pub const TRACE_ENV: &str = "CORDON_STEP_TRACE";

static TRACE: OnceLock<Option<File>> = OnceLock::new();

fn trace_file() -> Option<&'static File> {
    TRACE
        .get_or_init(|| {
            let path = std::env::var_os(TRACE_ENV)?;
            OpenOptions::new().append(true).create(true).open(path).ok()
        })
        .as_ref()
}

/// Nanoseconds on CLOCK_MONOTONIC (the clock of Node's `hrtime`).
pub fn monotonic_ns() -> u128 {
    clock_gettime(ClockId::CLOCK_MONOTONIC)
        .map(|t| t.tv_sec() as u128 * 1_000_000_000 + t.tv_nsec() as u128)
        .unwrap_or(0)
}

/// Records that `step` of run `invocation_id` happened now (no-op untraced).
pub fn stamp(invocation_id: &str, step: &str) {
    if let Some(mut file) = trace_file() {
        let line = format!("{invocation_id} {step} {}\n", monotonic_ns());
        // Best effort: a full disk must not fail a run that is only traced.
        let _ = file.write_all(line.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotonic_ns_never_goes_backwards() {
        let a = monotonic_ns();
        let b = monotonic_ns();
        assert!(a > 0 && b >= a);
    }
}
