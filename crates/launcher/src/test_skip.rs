//! Loud skips for tests that need something of the host (bwrap, a C
//! compiler, a writable cgroup). Outside CI a skip prints `SKIPPED` and is
//! appended to `$CORDON_SKIP_LOG` (scripts/test.js counts and lists them);
//! under `CI` the host is supposed to have everything (.ci/run installs it),
//! so a skip there is a failure.

use std::io::Write;

/// Skips the calling test with `reason`, or panics under CI.
pub fn skip(test: &str, reason: &str) {
    assert!(
        std::env::var_os("CI").is_none_or(|v| v == "false"),
        "{test} would skip under CI: {reason}"
    );
    eprintln!("SKIPPED {test}: {reason}");
    let Some(log) = std::env::var_os("CORDON_SKIP_LOG") else {
        return;
    };
    let line = serde_json::json!({"file": file!(), "name": test, "reason": reason});
    if let Ok(mut file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
    {
        let _ = writeln!(file, "{line}");
    }
}
