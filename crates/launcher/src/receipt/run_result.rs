//! Pure: how `wait()` settles, from the run's outcome, the observation's
//! mismatches and the receipt as read back (parsed here, once: the owner gets
//! it as a value, never as text to parse again). One place decides that a run is
//! a success only when the program ran with the planned confinement and is
//! accounted for by a receipt (first failing cause wins, in this order:
//! spawn failure, confinement mismatch, receipt unavailable).

use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

use serde_json::Value;

use crate::error_code::ErrorCode;
use crate::events::{Completion, LaunchFailure};
use crate::host::pidfd;
use crate::observe::compare::Mismatch;
use crate::receipt::Outcome;

/// The result `wait()` settles with. `failure`: the code of the step that
/// failed the run (the supervision's `RunError`), for a `SpawnFailed` outcome.
/// `receipt`: `receipt.json`'s text as read back, or why it could not be
/// written or read.
pub fn settle(
    outcome: Outcome,
    failure: Option<ErrorCode>,
    mismatches: &[Mismatch],
    status: Option<ExitStatus>,
    receipt: Result<String, String>,
) -> Result<Completion, LaunchFailure> {
    match (outcome, receipt.and_then(receipt_value)) {
        (Outcome::SpawnFailed { message }, receipt) => Err(LaunchFailure {
            code: failure.unwrap_or(ErrorCode::SpawnFailed),
            message,
            receipt: receipt.ok(),
        }),
        (_, receipt) if !mismatches.is_empty() => Err(LaunchFailure {
            code: ErrorCode::ConfinementMismatch,
            message: mismatch_message(mismatches),
            receipt: receipt.ok(),
        }),
        // Ran, but not accounted for: never a success.
        (_, Err(why)) => Err(LaunchFailure {
            code: ErrorCode::ReceiptUnavailable,
            message: format!(
                "the run's receipt could not be written and read back ({why}); the program's \
                 status was {}",
                status.map_or_else(|| "unknown".to_string(), |s| s.to_string())
            ),
            receipt: None,
        }),
        (_, Ok(receipt)) => Ok(Completion {
            returncode: status.and_then(|s| s.code()),
            signal: status.and_then(|s| s.signal()).map(pidfd::signal_name),
            receipt_digest: super::canonical::digest(&receipt),
            receipt,
        }),
    }
}

/// A receipt is a JSON object; anything else read back accounts for nothing.
fn receipt_value(text: String) -> Result<Value, String> {
    match serde_json::from_str(&text) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(_) => Err("receipt.json does not hold a JSON object".into()),
        Err(e) => Err(format!("receipt.json is not JSON: {e}")),
    }
}

fn mismatch_message(mismatches: &[Mismatch]) -> String {
    let checks: Vec<&str> = mismatches.iter().map(|m| m.check.as_str()).collect();
    format!(
        "the sandbox did not show the planned confinement ({}); it was stopped \
         (receipt: confinement.mismatches)",
        checks.join(", ")
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use serde_json::json;

    use super::*;

    fn exited(code: i32) -> Option<ExitStatus> {
        Some(ExitStatus::from_raw(code << 8))
    }

    fn mismatch() -> Mismatch {
        Mismatch {
            check: "seccomp.filters".into(),
            planned: json!(1),
            observed: json!(0),
        }
    }

    #[test]
    fn a_run_with_its_receipt_and_no_mismatch_completes_with_the_programs_status() {
        let text = r#"{"receiptVersion":2,"bytes":{"protocolIn":5}}"#;
        let done = settle(
            Outcome::Exited { code: 3 },
            None,
            &[],
            exited(3),
            Ok(text.into()),
        )
        .unwrap();
        assert_eq!(done.returncode, Some(3));
        assert_eq!(
            done.receipt,
            json!({"receiptVersion": 2, "bytes": {"protocolIn": 5}})
        );
    }

    #[test]
    fn a_receipt_that_reads_back_as_no_json_object_is_unavailable() {
        for text in ["", "{\"receiptVersion\":", "[]", "null", "\"x\""] {
            let failed = settle(
                Outcome::Exited { code: 0 },
                None,
                &[],
                exited(0),
                Ok(text.into()),
            );
            let failed = failed.unwrap_err();
            assert_eq!(failed.code, ErrorCode::ReceiptUnavailable, "{text:?}");
            assert!(
                failed.message.contains("receipt.json"),
                "{}",
                failed.message
            );
            assert_eq!(failed.receipt, None);
        }
    }

    #[test]
    fn a_run_without_a_receipt_is_never_a_success_even_with_status_0() {
        let failed = settle(
            Outcome::Exited { code: 0 },
            None,
            &[],
            exited(0),
            Err("EISDIR".into()),
        );
        let failed = failed.unwrap_err();
        assert_eq!(failed.code, ErrorCode::ReceiptUnavailable);
        assert!(failed.message.contains("EISDIR") && failed.message.contains("exit status: 0"));
        assert_eq!(failed.receipt, None);
    }

    #[test]
    fn a_mismatch_fails_the_run_and_keeps_its_receipt() {
        let failed = settle(
            Outcome::Signaled {
                signal: "SIGKILL".into(),
            },
            None,
            &[mismatch()],
            None,
            Ok("{}".into()),
        );
        let failed = failed.unwrap_err();
        assert_eq!(failed.code, ErrorCode::ConfinementMismatch);
        assert!(failed.message.contains("seccomp.filters"));
        assert_eq!(failed.receipt, Some(json!({})));
        let without = settle(
            Outcome::Exited { code: 0 },
            None,
            &[mismatch()],
            exited(0),
            Err("x".into()),
        );
        assert_eq!(
            without.unwrap_err().code,
            ErrorCode::ConfinementMismatch,
            "first cause wins"
        );
    }

    #[test]
    fn a_spawn_failure_stays_a_spawn_failure() {
        let outcome = Outcome::SpawnFailed {
            message: "no bwrap".into(),
        };
        let code = Some(ErrorCode::SpawnFailed);
        let failed = settle(outcome, code, &[mismatch()], None, Err("x".into())).unwrap_err();
        assert_eq!(
            (failed.code, failed.message.as_str()),
            (ErrorCode::SpawnFailed, "no bwrap")
        );
    }
}
