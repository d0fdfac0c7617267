//! Test support for the tests that launch real sandboxes: run one launch
//! request to its end, and a loud check that bwrap is here.

use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

use crate::events::{Completion, Event, EventSink, LaunchFailure};

struct Finish(Mutex<Sender<Result<Completion, LaunchFailure>>>);

impl EventSink for Finish {
    fn emit(&self, event: Event) {
        if let Event::Finished(result) = event {
            let _ = self.0.lock().unwrap().send(result);
        }
    }
}

/// Loud: under CI a host without bwrap is a failure, never a skip.
pub fn bwrap_present(suite: &str) -> bool {
    let present = std::path::Path::new("/usr/bin/bwrap").exists();
    if !present {
        crate::test_skip::skip(suite, "needs /usr/bin/bwrap");
    }
    present
}

/// Launches `options` (a launch request document) and waits up to 60 s for
/// its `Finished` event.
pub fn run_to_end(options: &Value) -> Result<Completion, LaunchFailure> {
    let (tx, rx) = channel();
    let sink = Arc::new(Finish(Mutex::new(tx)));
    let _handle = crate::launch(&options.to_string(), sink).unwrap();
    rx.recv_timeout(Duration::from_secs(60)).unwrap()
}

/// The check of a test that re-ran this test binary for one test of its own
/// (a process-wide setting it must not impose on the others): it passed.
pub fn assert_inner_test_passed(out: &std::process::Output) {
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("1 passed"), "{text}");
}

/// Re-runs this test binary for the one test `name` with `env` set (the
/// test then takes its inner branch: a process-wide setting it must not
/// impose on the other tests), and checks that it passed.
pub fn run_inner_test(name: &str, env: &str) {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--test-threads=1", "--nocapture"])
        .env(env, "1")
        .output()
        .unwrap();
    assert_inner_test_passed(&out);
}
