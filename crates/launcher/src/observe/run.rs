//! One run's observation, as the supervisor needs it: the expectation from
//! the run's plans, the observation, and the receipt's view of both.

use std::os::fd::OwnedFd;
use std::time::Duration;

use serde_json::{json, Value};

use super::compare::Mismatch;
use super::expect::{self, Expectation, ProviderIds};
use super::moment::NotObserved;
use super::{reader, Report, Target, OBSERVE_WINDOW_MS};
use crate::plan::confinement::ConfinementPlan;
use crate::plan::Plan;

/// The observed program's receipt entry and the mismatches that fail the run.
pub struct RunObservation {
    pub observed: Value,
    pub mismatches: Vec<Mismatch>,
}

impl RunObservation {
    /// A sandbox whose program could not be looked at (see [`NotObserved`]).
    pub fn not_observed(why: NotObserved) -> RunObservation {
        let report = Report::NotObserved(why);
        RunObservation {
            observed: json!({"status": "not-observed", "reason": why.as_str()}),
            mismatches: report.mismatches(),
        }
    }

    /// Whether the program itself was seen running (exec'ed, not bwrap).
    pub fn program_seen(&self) -> bool {
        !matches!(
            self.observed.get("status").and_then(Value::as_str),
            Some("not-observed" | "unreadable")
        )
    }
}

/// Observes the program of a sandbox whose init (host pid, pidfd) bwrap
/// reported. Nothing here can make the run look better than it was: a fact
/// of the provider's that cannot be read fails the run like a mismatch.
pub fn observe_run(
    plan: &Plan,
    confinement: &ConfinementPlan,
    invocation_id: &str,
    init_pid: i32,
    init: &OwnedFd,
    provider: Result<reader::ProviderFacts, reader::ReadError>,
    killed: &dyn Fn() -> bool,
) -> RunObservation {
    let unreadable = |detail: String| RunObservation {
        observed: json!({"status": "unreadable", "reason": detail}),
        mismatches: Report::Unreadable(detail).mismatches(),
    };
    // Read on the thread that forked bwrap (`provider_facts`): filters and
    // namespaces are per thread, and bwrap inherited that thread's.
    let provider = match provider {
        Ok(facts) => facts,
        Err(e) => return unreadable(format!("the provider's own {e}")),
    };
    let Some(bwrap_exe) = reader::file_identity(&plan.bwrap) else {
        return unreadable(format!("the identity of {}", plan.bwrap.display()));
    };
    let ids = ProviderIds {
        uid: nix::unistd::geteuid().as_raw(),
        gid: nix::unistd::getegid().as_raw(),
    };
    let mut expect = expect::expectation(plan, confinement, &provider, ids);
    perturb_for_tests(invocation_id, &mut expect);
    let report = super::observe(&Target {
        init_pid,
        init,
        bwrap_exe,
        expect: &expect,
        window: Duration::from_millis(OBSERVE_WINDOW_MS),
        killed,
    });
    RunObservation {
        observed: super::report_json(&report, &expect),
        mismatches: report.mismatches(),
    }
}

/// Invocation ids with this prefix expect one seccomp filter more than the
/// plan installs (unit tests only: compiled out of every build but `cargo
/// test`), so a real sandbox meets an expectation it cannot satisfy.
#[cfg(test)]
pub const TEST_EXTRA_FILTER_PREFIX: &str = "test-expect-extra-filter";

#[cfg(test)]
fn perturb_for_tests(invocation_id: &str, expect: &mut Expectation) {
    if invocation_id.starts_with(TEST_EXTRA_FILTER_PREFIX) {
        expect.seccomp_filters += 1;
    }
}

#[cfg(not(test))]
fn perturb_for_tests(_: &str, _: &mut Expectation) {}
