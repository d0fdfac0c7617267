//! The exit status of `cordon`: the program's own, or one of cordon's
//! documented codes (docs/cli.md). `cordon run` uses the 125–127 range for
//! its own failures, like `env`, `nice` and `timeout`, so that a program's
//! ordinary small codes pass through unambiguously.

use cordon_launcher::events::{Completion, LaunchFailure};
use cordon_launcher::host::pidfd::signal_name;
use cordon_launcher::ErrorCode;

/// `cordon doctor`: a required host check failed.
pub const DOCTOR_FAILED: i32 = 1;
/// `cordon host --probe`: the host is not ready (one line says why).
pub const PROBE_NOT_READY: i32 = 1;
/// Unknown subcommand, or a malformed `cordon doctor` command line.
pub const USAGE: i32 = 2;
/// `cordon run` itself failed: a usage error, an invalid policy or option,
/// the launcher could not write or read back the run's receipt, or the
/// receipt asked for with `--receipt` could not be written.
pub const RUN_ERROR: i32 = 125;
/// `cordon host`: the configuration is invalid, the listener could not be
/// set up, or sessions were still running when a stopping host gave up.
pub const HOST_ERROR: i32 = 125;
/// The sandbox could not be launched (bwrap missing, namespaces refused, a
/// confinement the policy requires is unavailable, spawn failed), or it ran
/// without the planned confinement and was stopped (confinement mismatch).
pub const LAUNCH_FAILED: i32 = 126;
/// The program is not an absolute path to an executable regular file.
pub const INVALID_COMMAND: i32 = 127;
/// Added to a signal number when the program was killed by it (shell rule).
const SIGNAL_BASE: i32 = 128;
/// Highest signal number searched when mapping a name back to its number.
const MAX_SIGNAL: i32 = 64;

/// The status for a launcher error code.
pub fn for_error_code(code: ErrorCode) -> i32 {
    match code {
        ErrorCode::InvalidCommand => INVALID_COMMAND,
        ErrorCode::InvalidOptions
        | ErrorCode::PolicyInvalid
        | ErrorCode::Unsupported
        | ErrorCode::ReceiptUnavailable
        | ErrorCode::WorkspaceUnusable => RUN_ERROR,
        ErrorCode::BackendUnavailable
        | ErrorCode::SpawnFailed
        | ErrorCode::ConfinementUnavailable
        | ErrorCode::IdentityUnavailable
        | ErrorCode::ConfinementMismatch
        | ErrorCode::NetworkUnavailable => LAUNCH_FAILED,
    }
}

/// The program's code; 128 + N when signal N ended the sandbox.
pub fn for_completion(done: &Completion) -> i32 {
    if let Some(code) = done.returncode {
        return code;
    }
    let number = done
        .signal
        .as_deref()
        .and_then(|name| (1..=MAX_SIGNAL).find(|n| signal_name(*n) == name));
    match number {
        Some(n) => SIGNAL_BASE + n,
        // Reaped with neither a code nor a known signal: not a success.
        None => LAUNCH_FAILED,
    }
}

/// The status for a run that ended: the program's, or the launch failure's.
pub fn for_outcome(outcome: &Result<Completion, LaunchFailure>) -> i32 {
    match outcome {
        Ok(done) => for_completion(done),
        Err(failure) => for_error_code(failure.code),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn completion(returncode: Option<i32>, signal: Option<&str>) -> Completion {
        Completion {
            returncode,
            signal: signal.map(str::to_string),
            receipt: serde_json::json!({}),
            receipt_digest: String::new(),
        }
    }

    #[test]
    fn a_code_passes_through_and_a_signal_is_128_plus_its_number() {
        assert_eq!(for_completion(&completion(Some(3), None)), 3);
        assert_eq!(for_completion(&completion(None, Some("SIGKILL"))), 137);
        assert_eq!(for_completion(&completion(None, Some("SIGTERM"))), 143);
        assert_eq!(for_completion(&completion(None, Some("SIG40"))), 168);
        assert_eq!(for_completion(&completion(None, None)), LAUNCH_FAILED);
    }

    #[test]
    fn launcher_error_codes_map_onto_the_documented_statuses() {
        assert_eq!(for_error_code(ErrorCode::InvalidCommand), 127);
        assert_eq!(for_error_code(ErrorCode::PolicyInvalid), 125);
        assert_eq!(for_error_code(ErrorCode::BackendUnavailable), 126);
    }
}
