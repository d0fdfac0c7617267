//! Node checks a receipt's signature the way docs/remote.md tells a
//! provider to, with `lib/code-mode/audit.js`'s `canonicalJson`: shared by
//! the signing unit tests and the TLS host tests.

#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use std::io::Write;
use std::process::{Command, Stdio};

/// What every script starts with: `crypto`, audit.js's `canonicalJson`
/// (its path is `process.argv[1]`) and `input`, the JSON given on stdin.
const PRELUDE: &str = r#"
    const crypto = require('node:crypto');
    const { canonicalJson } = require(process.argv[1]);
    const input = JSON.parse(require('node:fs').readFileSync(0, 'utf8'));
"#;

/// Runs `script` under `node -e` after [`PRELUDE`], with `input` on its
/// stdin; returns what it printed (it must succeed).
pub fn run_with_audit(script: &str, input: &serde_json::Value) -> String {
    let audit = concat!(env!("CARGO_MANIFEST_DIR"), "/../../lib/code-mode/audit.js");
    let mut child = Command::new("node")
        .args(["-e", &format!("{PRELUDE}{script}"), audit])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("node");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout).into_owned()
}
