//! Pure: what a run's end means — bwrap's info fd → the sandbox init's pid,
//! bwrap's status → the receipt's outcome, and the run's facts.

use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::time::SystemTime;

use super::run_error::RunError;
use super::Prepared;
use crate::pidfd;
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

/// The program's outcome, or why the run failed: a bwrap that ended before
/// reporting a sandbox failed its set-up — for the launcher's own reason
/// (`setup_error`), else as the head of bwrap's stderr says.
pub fn classify(
    status: std::io::Result<ExitStatus>,
    sandbox_ran: bool,
    setup_error: Option<RunError>,
    stderr_head: impl FnOnce() -> String,
) -> Result<Outcome, RunError> {
    let status = status.map_err(RunError::WaitBwrap)?;
    if !sandbox_ran {
        return Err(setup_error.unwrap_or_else(|| RunError::SandboxSetup {
            stderr_head: stderr_head(),
        }));
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
        let out = classify(exited(3), true, None, String::new).unwrap();
        assert_eq!(out, Outcome::Exited { code: 3 });
        let killed = classify(Ok(ExitStatus::from_raw(9)), true, None, String::new).unwrap();
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
        let e = classify(exited(1), false, Some(own), || unreachable!()).unwrap_err();
        assert!(
            e.to_string().starts_with("cannot send bwrap its options"),
            "{e}"
        );
        let e = classify(exited(1), false, None, || "bwrap: no".into()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "bubblewrap could not set up the sandbox: bwrap: no"
        );
        let e = classify(
            Err(std::io::Error::other("ECHILD")),
            true,
            None,
            String::new,
        );
        assert!(matches!(e, Err(RunError::WaitBwrap(_))));
        assert_eq!(e.unwrap_err().code(), crate::ErrorCode::SpawnFailed);
    }
}
