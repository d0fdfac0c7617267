//! Taking a run down and making sure it is gone: release bwrap into its
//! cgroup, kill its pid namespace and confirm it empty, kill and remove the
//! cgroup (once), and let the in-flight descriptor collector run. Blocking:
//! called from the supervision runtime's blocking pool.

use std::process::ExitStatus;

use crate::host::clone_exec::Process;
use crate::host::orphan_init;
use crate::host::pidfd;
use std::sync::Arc;
use std::time::Duration;

use super::run_error::RunError;
use super::Prepared;
use crate::host::session_owner_claims::ClaimRecheck;
use crate::host::step_trace;
use crate::plan::cgroup::ExecutionCgroup;
use crate::plan::confinement::CgroupOutcome;
use crate::run::execution::Control;
use crate::run::spawn::OptionsFeed;
use crate::run::stop_ladder::Supervision;

/// bwrap is blocked reading its options (`--args` is a socket): on v2, join
/// it to the run's cgroup first, so it is inside before it forks anything,
/// then send them (on v1 its child joined before its exec: spawn.rs). The
/// v2 join can wait a whole RCU grace period (~10 ms on a quiet host,
/// docs/performance.md); here that wait overlaps bwrap's exec and the
/// caller's thread, which already has the pid, instead of blocking both.
/// On failure bwrap is killed (it is still waiting: nothing of the sandbox
/// exists yet) and the error explains the failed run. A run on a caller's
/// workspace whose owner uid a session claimed meanwhile is refused here,
/// bwrap killed before anything of the sandbox ran (session_owner_claims.rs:
/// bwrap already exists as the uid, so a later claim's own check sees it).
/// A stop requested before the release (a `stop()` in the tick that spawned
/// the run, a deadline or a remote client's disconnect that came first, a
/// stop during the v2 join) kills bwrap instead: the program never starts,
/// and the stop explains the outcome.
pub fn release_bwrap(
    cgroup: Option<&ExecutionCgroup>,
    claim_recheck: Option<&ClaimRecheck>,
    supervision: &Supervision,
    child: &mut Process,
    options: OptionsFeed,
    invocation_id: &str,
) -> Result<(), RunError> {
    step_trace::stamp(invocation_id, "join.start");
    // v1: the child joined before its exec (spawn.rs); v2: by pid now.
    let ready = cgroup
        .filter(|cgroup| !cgroup.joins_at_spawn())
        .map_or(Ok(()), |cgroup| cgroup.add_pid(child.id()))
        .map_err(RunError::JoinCgroup)
        .and_then(|()| {
            step_trace::stamp(invocation_id, "join.done");
            match claim_recheck.filter(|recheck| recheck.held()) {
                Some(recheck) => Err(RunError::HeldBySession { uid: recheck.uid() }),
                None => Ok(()),
            }
        });
    // `None`: a stop came first (begin_release), so bwrap is killed and the
    // run is a stopped one, not a failed launch.
    let released = match ready {
        Ok(()) if !supervision.begin_release() => None,
        Ok(()) => Some(options.send().map_err(RunError::SendOptions)),
        Err(e) => Some(Err(e)),
    };
    step_trace::stamp(invocation_id, "options.sent");
    match released {
        Some(Ok(())) => {
            drop(options); // EOF: bwrap has its whole option list
            Ok(())
        }
        None => {
            kill_unreleased(child, options);
            Ok(())
        }
        Some(Err(e)) => {
            supervision.mark_killed_unreleased();
            kill_unreleased(child, options);
            Err(e)
        }
    }
}

/// bwrap, still waiting for its options, is killed before the options'
/// socket closes: at EOF bwrap would read an empty option list and go on
/// without any of them (no namespaces but its own, no binds, no seccomp)
/// until the kill landed.
fn kill_unreleased(child: &mut Process, options: OptionsFeed) {
    let _ = child.kill();
    drop(options);
}

/// How long the end of a run waits for the namespace to empty: the stop
/// ladder's forced rung ([`crate::run::stop_ladder::forced_rung_wait`]).
pub fn containment_wait(force_ms: u64) -> Duration {
    crate::run::stop_ladder::forced_rung_wait(force_ms)
}

/// bwrap is reaped: kill its pid namespace from outside whatever bwrap
/// reported (a program that rewrote the init through `/proc/1/mem` can fake
/// its exit to bwrap and clear the init's parent-death signal), and confirm
/// it empty by the init's pidfd. Without an init (set-up failed before bwrap
/// reported one) only a normal bwrap exit counts as contained, or a bwrap
/// killed before its release: it was still reading its options, before any
/// namespace or process of the sandbox existed, and it is reaped.
pub fn confirm_containment(control: &Control, status: &std::io::Result<ExitStatus>) -> bool {
    let wait = containment_wait(control.stop_timings.force_ms);
    match control.supervision.kill_namespace(wait) {
        Some(emptied) => {
            // Orphaned by bwrap's exit: ours to reap when this process is
            // its reaper (pid 1 of a container), else a no-op (pidfd.rs).
            if let Some(init) = control.supervision.init().filter(|_| emptied) {
                pidfd::reap_if_child(&init);
            }
            emptied
        }
        None => {
            if control.supervision.forced() {
                // Stopped during bwrap's set-up, its init never reported:
                // one that died with bwrap is reaped by the scan if ours.
                orphan_init::reap_exited_inits();
            }
            control.supervision.killed_unreleased()
                || status.as_ref().is_ok_and(|s| s.code().is_some())
        }
    }
}

/// bwrap is gone, so is the sandbox: whatever is still in the run's cgroup
/// (an init orphaned when bwrap was stopped mid-setup holds the stream
/// descriptors and would keep the pumps from ever seeing EOF) is killed
/// before the streams are drained — the one cgroup kill of the teardown.
/// Returns whether the cgroup ended empty (`true` without a cgroup).
pub fn empty_cgroup(p: &Prepared) -> bool {
    p.cgroup.as_ref().is_none_or(|cgroup| {
        cgroup
            .kill_all(containment_wait(p.request.stop.force_ms))
            .is_ok()
    })
}

/// The emptied cgroup's end state for the receipt: its OOM count.
pub fn cgroup_outcome(cgroup: Option<&ExecutionCgroup>, forced: bool) -> CgroupOutcome {
    let Some(cgroup) = cgroup else {
        return CgroupOutcome::default();
    };
    CgroupOutcome {
        oom_kills: cgroup.oom_kills(),
        killed_by_cgroup: forced,
    }
}

/// Removes the emptied cgroup's directories, once its end state was read
/// ([`cgroup_outcome`]); a removal that fails leaves an empty leaf for the
/// next stale-leaf sweep.
pub fn remove_cgroup(cgroup: Option<Arc<ExecutionCgroup>>) {
    if let Some(cgroup) = cgroup {
        let _ = cgroup.remove();
    }
}

/// Stream ends a sandbox hid in an unreachable `SCM_RIGHTS` cycle (a unix
/// socket queued inside itself) are closed only by the kernel's unix garbage
/// collector, which runs when some unix socket is released while descriptors
/// are in flight. Once the pid namespace is gone nothing inside can release
/// one, and on a quiet host nothing else may for minutes: the readers
/// would wait for an EOF that never comes. Releasing a socket pair of our own
/// schedules the collector (one socketpair, a few µs per run).
pub fn collect_in_flight_descriptors() {
    drop(std::os::unix::net::UnixStream::pair());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn containment_waits_the_forced_rung_but_never_less_than_the_floor() {
        assert_eq!(containment_wait(0), Duration::from_millis(100));
        assert_eq!(containment_wait(2500), Duration::from_millis(2500));
    }
}
