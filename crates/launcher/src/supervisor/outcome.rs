//! Pure: what a run's end means — bwrap's info fd → the sandbox init's pid,
//! bwrap's status → the receipt's outcome, and the run's facts.

use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::time::SystemTime;

use super::run_error::RunError;
use super::Prepared;
use crate::host::pidfd;
use crate::receipt::{ByteCounts, Outcome, RunFacts};

/// bwrap's info JSON is ~250 bytes; more than this is not bwrap talking.
pub const INFO_MAX_BYTES: u64 = 4096;

/// bwrap writes `{"child-pid": N, …}` once the namespaces exist and closes
/// the fd; nothing (EOF at once) means the set-up failed: `Ok(None)`.
pub fn init_pid(info: &str) -> Result<Option<i32>, RunError> {
    if info.is_empty() {
        return Ok(None);
    }
    let bad = |why: &str| RunError::InfoMalformed(format!("{why}: {info:?}"));
    let value: serde_json::Value = serde_json::from_str(info).map_err(|_| bad("not JSON"))?;
    let pid = value
        .get("child-pid")
        .and_then(serde_json::Value::as_i64)
        .and_then(|pid| i32::try_from(pid).ok())
        .filter(|pid| *pid > 0)
        .ok_or_else(|| bad("no positive child-pid"))?;
    Ok(Some(pid))
}

/// How far a run got, as seen from outside the sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reached {
    /// bwrap never reported a sandbox (and nobody stopped it first).
    Nothing,
    /// bwrap reported its sandbox init, but the program was never seen
    /// exec'ed: bwrap may still have failed its own set-up (the bind mounts
    /// come after the report).
    Sandbox,
    /// The program was observed running (observe/moment.rs).
    Program,
}

/// bwrap's exit status when its own set-up fails (`die()` in bubblewrap).
const BWRAP_SETUP_EXIT: i32 = 1;
/// How bwrap's own diagnostics start.
const BWRAP_DIAGNOSTIC: &str = "bwrap: ";

/// The program's outcome, or why the run failed: a bwrap that ended before
/// reporting a sandbox failed its set-up — for the launcher's own reason
/// (`setup_error`), else as the head of bwrap's stderr says. So did one
/// that reported its sandbox but exited with bwrap's set-up status and a
/// bwrap diagnostic before its program was ever seen: that is never the
/// program's exit. (A program could print such a line and exit 1 before it
/// is observed; it then reads as a failed set-up — a failure either way,
/// never a success.)
pub fn classify(
    status: std::io::Result<ExitStatus>,
    reached: Reached,
    setup_error: Option<RunError>,
    stderr_head: impl FnOnce() -> String,
) -> Result<Outcome, RunError> {
    let status = status.map_err(RunError::WaitBwrap)?;
    let setup_failed =
        |stderr_head: String| setup_error.unwrap_or(RunError::SandboxSetup { stderr_head });
    match reached {
        Reached::Nothing => return Err(setup_failed(stderr_head())),
        Reached::Sandbox if status.code() == Some(BWRAP_SETUP_EXIT) => {
            let head = stderr_head();
            if head.starts_with(BWRAP_DIAGNOSTIC) {
                return Err(setup_failed(head));
            }
        }
        Reached::Sandbox | Reached::Program => {}
    }
    Ok(match (status.code(), status.signal()) {
        (Some(code), _) => Outcome::Exited { code },
        (None, sig) => Outcome::Signaled {
            signal: pidfd::signal_name(sig.unwrap_or(0)),
        },
    })
}

/// The receipt's outcome for a failed run.
pub fn failed(error: &RunError) -> Outcome {
    Outcome::SpawnFailed {
        message: error.to_string(),
    }
}

/// The uid the sandbox runs as: its own (a provider running as root), else
/// the provider's.
pub fn sandbox_uid(p: &Prepared) -> u32 {
    p.plan
        .identity
        .map_or_else(|| nix::unistd::geteuid().as_raw(), |id| id.uid)
}

pub fn facts(p: &Prepared, started_at: SystemTime, outcome: Outcome) -> RunFacts {
    RunFacts {
        invocation_id: p.invocation_id.clone(),
        backend_version: p.backend.version.clone(),
        executable_sha256: p.executable_sha256.clone(),
        sandbox_uid: sandbox_uid(p),
        started_at,
        ended_at: SystemTime::now(),
        outcome,
        stop: Default::default(),
        containment_confirmed: false,
        bytes: ByteCounts::default(),
        confinement: None,
        observed: None,
        mismatches: Vec::new(),
        host_binds: p.host_binds.clone(),
        channel_namespace: None,
        fd4_namespace: p
            .fd4_namespace
            .map(cordon_passed_fds::ChannelNamespace::as_str),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn exited(code: i32) -> std::io::Result<ExitStatus> {
        Ok(ExitStatus::from_raw(code << 8))
    }

    #[test]
    fn the_init_pid_is_read_from_bwraps_info_and_nothing_else_is_accepted() {
        let info = r#"{ "child-pid": 4242, "cgroup-namespace": 1 }"#;
        assert_eq!(init_pid(info).unwrap(), Some(4242));
        assert_eq!(init_pid("").unwrap(), None, "EOF: set-up failed");
        for bad in ["{", r#"{"child-pid": -1}"#, r#"{"child-pid": "7"}"#, "[]"] {
            let e = init_pid(bad).unwrap_err();
            assert!(matches!(e, RunError::InfoMalformed(_)), "{bad}: {e}");
        }
    }

    #[test]
    fn a_sandbox_that_ran_has_the_programs_status() {
        let out = classify(exited(3), Reached::Program, None, String::new).unwrap();
        assert_eq!(out, Outcome::Exited { code: 3 });
        let killed = classify(
            Ok(ExitStatus::from_raw(9)),
            Reached::Program,
            None,
            String::new,
        )
        .unwrap();
        assert_eq!(
            killed,
            Outcome::Signaled {
                signal: "SIGKILL".into()
            }
        );
    }

    #[test]
    fn a_sandbox_that_never_ran_failed_for_the_launchers_reason_else_bwraps() {
        let own = RunError::SendOptions(std::io::Error::other("EPIPE"));
        let e = classify(exited(1), Reached::Nothing, Some(own), String::new).unwrap_err();
        assert!(
            e.to_string().starts_with("cannot send bwrap its options"),
            "{e}"
        );
        let e = classify(exited(1), Reached::Nothing, None, || "bwrap: no".into()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "bubblewrap could not set up the sandbox: bwrap: no"
        );
        let e = classify(
            Err(std::io::Error::other("ECHILD")),
            Reached::Program,
            None,
            String::new,
        );
        assert!(matches!(e, Err(RunError::WaitBwrap(_))));
        assert_eq!(e.unwrap_err().code(), crate::ErrorCode::SpawnFailed);
    }

    #[test]
    fn a_bwrap_diagnostic_and_exit_1_before_the_program_was_seen_is_a_failed_set_up() {
        let head =
            || "bwrap: Can't find source path /proc/self/fd/7: Permission denied".to_string();
        let e = classify(exited(1), Reached::Sandbox, None, head).unwrap_err();
        assert!(matches!(e, RunError::SandboxSetup { .. }), "{e}");
        assert_eq!(
            e.to_string(),
            "bubblewrap could not set up the sandbox: bwrap: Can't find source path /proc/self/fd/7: Permission denied"
        );
    }

    #[test]
    fn a_program_seen_running_keeps_its_exit_whatever_it_printed() {
        let head = || "bwrap: a line the program wrote".to_string();
        let out = classify(exited(1), Reached::Program, None, head).unwrap();
        assert_eq!(out, Outcome::Exited { code: 1 });
        let other = classify(exited(2), Reached::Sandbox, None, head).unwrap();
        assert_eq!(other, Outcome::Exited { code: 2 }, "bwrap's set-up exits 1");
        let quiet = classify(exited(1), Reached::Sandbox, None, || "error: x".into()).unwrap();
        assert_eq!(quiet, Outcome::Exited { code: 1 }, "no bwrap diagnostic");
    }
}
