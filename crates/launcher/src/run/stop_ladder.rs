//! The stop ladder: check state → SIGTERM to the sandboxed program → wait
//! `graceMs` → SIGKILL to the whole sandbox (its pid-namespace init, which
//! takes every process of the namespace with it, and bwrap) → wait
//! `forceMs`. Idempotent: the first request starts it, later ones are no-ops
//! (the first reason wins).

use std::os::fd::OwnedFd;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

use crate::host::pidfd;
use crate::plan::cgroup::ExecutionCgroup;
use crate::request::launch_request::StopTimings;
use crate::run::deadline_timer::DeadlineTimer;

/// How often the first rung looks for a program still being started (a
/// sandbox reports its init within milliseconds).
const STARTUP_POLL: Duration = Duration::from_millis(2);

/// Shortest wait of the forced rung's followers (ms): judging containment,
/// draining the readers of an unconfirmed namespace, the egress engine's
/// teardown.
const MIN_FORCED_RUNG_WAIT_MS: u64 = 100;

/// How long each step after SIGKILL may wait — the namespace's emptying,
/// the readers, the egress engine's tasks: the ladder's forced rung
/// (`forceMs`), at least [`MIN_FORCED_RUNG_WAIT_MS`]. The one source of
/// these bounds, so a stopped run settles within the ladder's.
pub fn forced_rung_wait(force_ms: u64) -> Duration {
    Duration::from_millis(force_ms.max(MIN_FORCED_RUNG_WAIT_MS))
}

/// How long the run's egress engine may take to end its tasks once the
/// sandbox is gone (each ends at its next wake-up; the bound is reached
/// only when the runtime's workers are all blocked elsewhere).
pub fn engine_teardown_bound(timings: StopTimings) -> Duration {
    forced_rung_wait(timings.force_ms)
}

/// Why a stop was requested (first cause wins).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    Requested,
    Deadline,
    Signal,
    /// The observed confinement differs from the plan (observe/).
    ConfinementMismatch,
    /// The remote client of `cordon host` went away, broke the protocol
    /// or stopped answering pings (docs/remote.md).
    Disconnect,
    /// The launcher could not supervise the run (its stream pumps could
    /// not start: the provider out of threads) and took it down; the run
    /// fails with that error.
    SupervisionFailed,
}

impl StopReason {
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::Requested => "stop",
            StopReason::Deadline => "deadline",
            StopReason::Signal => "signal",
            StopReason::ConfinementMismatch => "confinement-mismatch",
            StopReason::Disconnect => "disconnect",
            StopReason::SupervisionFailed => "supervision-failed",
        }
    }
}

/// What the ladder did, for the receipt.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StopRecord {
    pub reason: Option<StopReason>,
    pub graceful_attempted: bool,
    pub forced_attempted: bool,
    /// The forced rung killed through the run's cgroup (the receipt's
    /// `killedByCgroup`): recorded when it did, not inferred.
    pub cgroup_killed: bool,
}

/// Shared between the supervision (which reaps) and the ladder (which
/// signals). The ladder climbs as a task of the supervision runtime
/// (supervision_runtime.rs): its waits are timers, not a thread per stop.
#[derive(Debug)]
pub struct Supervision {
    state: Mutex<SupervisionState>,
    /// `true` once bwrap was reaped: wakes a waiting ladder.
    exited: watch::Sender<bool>,
}

impl Default for Supervision {
    fn default() -> Self {
        Supervision {
            state: Mutex::default(),
            exited: watch::Sender::new(false),
        }
    }
}

#[derive(Debug, Default)]
struct SupervisionState {
    exited: bool,
    bwrap: Option<Arc<OwnedFd>>,
    init_pid: Option<i32>,
    init: Option<Arc<OwnedFd>>,
    cgroup: Option<Arc<ExecutionCgroup>>,
    record: StopRecord,
    /// Armed deadlines' timers, aborted when bwrap is reaped (the
    /// timerfd's watcher among them).
    deadlines: Vec<tokio::task::AbortHandle>,
    /// The run's timerfd, watched from its start (`watch_deadlines`): a
    /// deadline armed on it wakes no thread (deadline_timer.rs).
    deadline_timer: Option<DeadlineSlot>,
    /// The run's egress engine's stop latch (mediated network only).
    egress_stop: Option<cordon_egress::StopLatch>,
    /// bwrap was killed while it still waited for its options (a stop or
    /// a failure before the release): no namespace, mount or process of
    /// the sandbox ever existed.
    killed_unreleased: bool,
}

/// The run's timerfd and the ladder timings its watcher stops with.
#[derive(Debug)]
struct DeadlineSlot {
    timer: Arc<DeadlineTimer>,
    timings: StopTimings,
}

impl SupervisionState {
    /// bwrap was reaped (or abandoned): no deadline may fire any more. The
    /// timerfd closes once its aborted watcher is dropped.
    fn disarm_deadlines(&mut self) {
        self.deadlines.drain(..).for_each(|d| d.abort());
        self.deadline_timer = None;
    }
}

impl Supervision {
    pub fn set_bwrap(&self, fd: OwnedFd) {
        self.with(|s| s.bwrap = Some(Arc::new(fd)));
    }

    /// bwrap's pidfd, for waiting on its exit.
    pub fn bwrap(&self) -> Option<Arc<OwnedFd>> {
        self.state.lock().ok().and_then(|s| s.bwrap.clone())
    }

    /// The sandbox's pid-namespace init (host pid), from bwrap's info fd.
    /// A forced rung that ran before the init was known (a stop during
    /// bwrap's set-up) reached bwrap and the cgroup only: the init gets its
    /// SIGKILL now, so once [`Self::forced`] is true every sandbox process
    /// known to the run has been sent one (the observation stops waiting
    /// for the program then: observe/moment.rs).
    pub fn set_init(&self, pid: i32, fd: OwnedFd) {
        self.with(|s| {
            // Whatever `exited` says (abandon() sets both): a kill of a
            // process already gone is a harmless ESRCH.
            if s.record.forced_attempted {
                let _ = pidfd::send_signal(&fd, libc::SIGKILL);
            }
            s.init_pid = Some(pid);
            s.init = Some(Arc::new(fd));
        });
    }

    /// Whether the forced rung (or a kill before the release) has run.
    pub fn forced(&self) -> bool {
        self.record().forced_attempted
    }

    /// Whether the sandbox is being taken down: the forced rung ran and its
    /// init and every process under it are exiting (`PF_EXITING`) or gone.
    /// A SIGKILL sent is not one acted on (a failed send, a task not yet
    /// scheduled): the observation stops waiting only on this.
    pub fn sandbox_dying(&self) -> bool {
        if !self.forced() {
            return false;
        }
        let init = self.state.lock().ok().and_then(|s| s.init_pid);
        init.is_some_and(namespace_exiting)
    }

    /// Latched when a stop starts, before any signal: the engine then
    /// records every stream the stop ends as `cancelled` (R5N-2).
    pub fn set_egress_stop(&self, latch: cordon_egress::StopLatch) {
        self.with(|s| s.egress_stop = Some(latch));
    }

    /// The run's cgroup, killed whole by the forced rung.
    pub fn set_cgroup(&self, cgroup: Arc<ExecutionCgroup>) {
        self.with(|s| s.cgroup = Some(cgroup));
    }

    pub fn init(&self) -> Option<Arc<OwnedFd>> {
        self.state.lock().ok().and_then(|s| s.init.clone())
    }

    /// bwrap was reaped: wakes a waiting ladder, which then stops climbing.
    /// Armed deadlines are disarmed: one firing now would record a stop
    /// reason for a run that ended on its own.
    pub fn mark_exited(&self) {
        self.with(|s| {
            s.exited = true;
            s.disarm_deadlines();
        });
        self.exited.send_replace(true);
    }

    /// The run is over: close the process descriptors and drop the
    /// cgroup handle now rather than when the owner's handle is collected.
    pub fn release(&self) {
        self.with(|s| {
            s.bwrap = None;
            s.init = None;
            s.cgroup = None;
        });
    }

    /// Right before the sandbox is released (bwrap given its options):
    /// `false` if a stop was already requested. The caller then kills bwrap
    /// instead, so a `stop()` that returned before the release means the
    /// program never ran (recorded as the forced rung: bwrap's SIGKILL). A
    /// stop requested after this call climbs the ladder as usual.
    pub fn begin_release(&self) -> bool {
        let Ok(mut s) = self.state.lock() else {
            return false;
        };
        if s.record.reason.is_none() {
            return true;
        }
        s.record.forced_attempted = true;
        s.killed_unreleased = true;
        false
    }

    /// bwrap is being killed before its release (its options never sent
    /// whole): nothing of the sandbox exists, so once bwrap is reaped the
    /// run is contained ([`Self::killed_unreleased`]).
    pub fn mark_killed_unreleased(&self) {
        self.with(|s| s.killed_unreleased = true);
    }

    pub fn killed_unreleased(&self) -> bool {
        self.state.lock().is_ok_and(|s| s.killed_unreleased)
    }

    pub fn record(&self) -> StopRecord {
        self.state.lock().map(|s| s.record).unwrap_or_default()
    }

    fn with(&self, f: impl FnOnce(&mut SupervisionState)) {
        if let Ok(mut s) = self.state.lock() {
            f(&mut s);
        }
    }

    /// Starts the ladder (a task of the supervision runtime) unless a stop
    /// was already requested or bwrap already exited.
    pub fn request_stop(self: &Arc<Self>, reason: StopReason, timings: StopTimings) {
        self.stop_with(reason, timings, true);
    }

    /// `record_after_exit`: an owner's stop() after the end is recorded (as
    /// requested, nothing attempted); a deadline timer that lost the race
    /// with bwrap's exit records nothing, or the receipt would say a run that
    /// ended on its own was stopped by its deadline.
    fn stop_with(
        self: &Arc<Self>,
        reason: StopReason,
        timings: StopTimings,
        record_after_exit: bool,
    ) {
        let Ok(mut s) = self.state.lock() else { return };
        if s.record.reason.is_some() || (s.exited && !record_after_exit) {
            return;
        }
        s.record.reason = Some(reason);
        if s.exited {
            return;
        }
        if let Some(latch) = &s.egress_stop {
            latch.latch(); // before the ladder signals anything
        }
        drop(s);
        match crate::run::supervision_runtime::get() {
            Ok(runtime) => {
                runtime.spawn(Arc::clone(self).climb(timings));
            }
            // No runtime (its threads could not start): straight to the
            // forced rung, inline.
            Err(_) => self.force(),
        }
    }

    /// Arms a deadline: `after` from now, the ladder starts with reason
    /// `deadline` — on the launcher's own timer, whatever the owner's event
    /// loop does. The timer holds the run only weakly and is aborted when
    /// bwrap is reaped (arming after that is a no-op). Used for the launch
    /// request's `deadlineMs` and for a deadline armed later (a pooled run's,
    /// which counts from `take()`).
    pub fn arm_deadline(self: &Arc<Self>, after: Duration, timings: StopTimings) {
        let Ok(runtime) = crate::run::supervision_runtime::get() else {
            // Without the runtime no run is supervised at all: nothing to time.
            return;
        };
        let Ok(mut s) = self.state.lock() else { return };
        if s.exited {
            return;
        }
        // The timerfd's watcher stops with the timings it was given: a
        // deadline with others goes on a timer of its own.
        if let Some(slot) = &s.deadline_timer {
            if slot.timings == timings && slot.timer.arm(after).is_ok() {
                return;
            }
        }
        self.arm_tokio_timer(&mut s, runtime, after, timings);
    }

    /// A deadline as a tokio timer task (the fallback: handing it to the
    /// runtime wakes a worker).
    fn arm_tokio_timer(
        self: &Arc<Self>,
        s: &mut SupervisionState,
        runtime: &tokio::runtime::Runtime,
        after: Duration,
        timings: StopTimings,
    ) {
        let run = Arc::downgrade(self);
        let timer = runtime.spawn(async move {
            tokio::time::sleep(after).await;
            if let Some(run) = run.upgrade() {
                run.stop_with(StopReason::Deadline, timings, false);
            }
        });
        s.deadlines.push(timer.abort_handle());
    }

    /// Called on the supervision runtime at the run's start: a timerfd the
    /// reactor watches from now on, so a deadline armed later from the
    /// owner's thread (`arm_deadline`) is one syscall that wakes no worker.
    /// The timer is registered with the reactor here, before anyone can arm
    /// it: one that cannot be watched is never used, and deadlines are then
    /// tokio timers.
    pub fn watch_deadlines(self: &Arc<Self>, timings: StopTimings) {
        if tokio::runtime::Handle::try_current().is_err() {
            return; // registering needs the runtime's reactor
        }
        let Ok(runtime) = crate::run::supervision_runtime::get() else {
            return;
        };
        let Ok(mut s) = self.state.lock() else { return };
        if s.exited || s.deadline_timer.is_some() {
            return;
        }
        let Ok((timer, watched)) = DeadlineTimer::watched() else {
            return;
        };
        let run = Arc::downgrade(self);
        let watcher = runtime.spawn(async move {
            let expired = watched.expired().await;
            if let Some(run) = run.upgrade() {
                match expired {
                    Ok(()) => run.stop_with(StopReason::Deadline, timings, false),
                    Err(_) => run.deadline_watch_failed(),
                }
            }
        });
        s.deadlines.push(watcher.abort_handle());
        s.deadline_timer = Some(DeadlineSlot { timer, timings });
    }

    /// The timerfd could not be read: what was armed on it moves to a tokio
    /// timer, and later deadlines go there too (a deadline is never left on
    /// a timer nobody watches).
    fn deadline_watch_failed(self: &Arc<Self>) {
        let Ok(runtime) = crate::run::supervision_runtime::get() else {
            return;
        };
        let Ok(mut s) = self.state.lock() else { return };
        let Some(slot) = s.deadline_timer.take() else {
            return;
        };
        if s.exited {
            return;
        }
        if let Some(left) = slot.timer.remaining() {
            self.arm_tokio_timer(&mut s, runtime, left, slot.timings);
        }
    }

    async fn climb(self: Arc<Self>, timings: StopTimings) {
        let grace_end = Instant::now() + Duration::from_millis(timings.grace_ms);
        self.terminate(grace_end).await;
        if self.exited_by(grace_end).await {
            return;
        }
        self.force();
        let force = Duration::from_millis(timings.force_ms);
        let me = Arc::clone(&self);
        // The cgroup kill waits for the cgroup to empty (bounded): blocking.
        let _ = crate::run::supervision_runtime::blocking(move || me.kill_cgroup(force)).await;
        self.exited_by(Instant::now() + force).await;
    }

    /// Rung 2, second half: every process in the run's cgroup, wherever it
    /// is in the tree (outside the lock: the kill waits for the cgroup to
    /// empty, bounded by `timeout`).
    fn kill_cgroup(&self, timeout: Duration) {
        let cgroup = self.state.lock().ok().and_then(|mut s| {
            s.record.cgroup_killed |= s.cgroup.is_some();
            s.cgroup.clone()
        });
        if let Some(cgroup) = cgroup {
            let _ = cgroup.kill_all(timeout);
        }
    }

    /// Rung 1: SIGTERM to the program (the namespace init's child). A
    /// sandbox still starting has no program yet: look again every
    /// [`STARTUP_POLL`] until it appears, bwrap exits or the grace window
    /// ends.
    async fn terminate(&self, until: Instant) {
        loop {
            {
                let Ok(mut s) = self.state.lock() else { return };
                if s.exited {
                    return;
                }
                let init = s.init_pid.zip(s.init.clone());
                if let Some(program) = init.and_then(|(pid, fd)| program_pidfd(pid, &fd)) {
                    let sent = pidfd::signal_live(&program, libc::SIGTERM).is_ok();
                    s.record.graceful_attempted |= sent;
                    return;
                }
            }
            let now = Instant::now();
            if now >= until {
                return;
            }
            self.exited_by(until.min(now + STARTUP_POLL)).await;
        }
    }

    /// Rung 2: SIGKILL the namespace init (the kernel then kills every
    /// process of the namespace) and bwrap itself.
    /// The run's supervision was lost (a panic, no thread for its
    /// teardown): SIGKILL the namespace init (the kernel then kills every
    /// process of the namespace) and bwrap through their pidfds, whatever
    /// state the run was in, so nothing runs on unsupervised.
    pub fn abandon(&self) {
        let Ok(mut s) = self.state.lock() else { return };
        s.record.forced_attempted = true;
        for fd in [&s.init, &s.bwrap].into_iter().flatten() {
            let _ = pidfd::send_signal(fd, libc::SIGKILL);
        }
        s.exited = true;
        s.disarm_deadlines();
        drop(s);
        self.exited.send_replace(true);
    }

    fn force(&self) {
        let Ok(mut s) = self.state.lock() else { return };
        if s.exited {
            return;
        }
        s.record.forced_attempted = true;
        // bwrap first: killed after the init, bwrap could see the init die
        // and exit 137 on its own before its own SIGKILL landed, and the
        // receipt then said the program exited 137 rather than that the
        // sandbox was killed (seen once in a loaded `cargo test`).
        for fd in [&s.bwrap, &s.init].into_iter().flatten() {
            let _ = pidfd::send_signal(fd, libc::SIGKILL);
        }
    }

    /// After bwrap is reaped, whatever bwrap and its init reported: SIGKILL
    /// the namespace init through its pidfd (from the parent namespace the
    /// kernel delivers it even to an init that a program rewrote through
    /// `/proc/1/mem`) and wait up to `timeout` for it to be gone. The
    /// kernel kills every other process of the namespace when its init dies
    /// and reports the init's exit on the pidfd only after they are all
    /// gone, so a readable pidfd confirms the namespace empty — with or
    /// without a cgroup. `None`: bwrap never reported an init. Blocking.
    ///
    /// A namespace still there at `timeout` whose processes are all
    /// already exiting is waited for up to [`EXITING_INIT_WAIT`] more: the
    /// kernel is taking it down (a tmpfs of a million inodes is freed by
    /// the exit of the last process that holds its mount namespace, seconds
    /// of work), and none of them can run again. Reported unconfirmed
    /// instead (round 12, R12-2), a session kept its holder and its
    /// workspace for good. One process not exiting (a frozen one, which
    /// SIGKILL does not end) ends the wait at once: unconfirmed, within the
    /// ladder's bound.
    pub fn kill_namespace(&self, timeout: Duration) -> Option<bool> {
        let init = self.init()?;
        let init_pid = self.state.lock().ok().and_then(|s| s.init_pid);
        let _ = pidfd::send_signal(&init, libc::SIGKILL);
        if pidfd::wait_exit(&init, timeout) {
            return Some(true);
        }
        let deadline = std::time::Instant::now() + EXITING_INIT_WAIT;
        // The pid is the init's while its pidfd is unreadable (not reaped).
        while init_pid.is_some_and(namespace_exiting) {
            if pidfd::wait_exit(&init, EXITING_RECHECK) {
                return Some(true);
            }
            if std::time::Instant::now() >= deadline {
                break;
            }
        }
        Some(false)
    }

    /// Whether bwrap was reaped by `deadline` (returns as soon as it is).
    /// A deadline already passed answers now, without a timer (whose
    /// first tick could let a no-grace stop see the SIGTERM's effect and
    /// skip the forced rung it promised).
    async fn exited_by(&self, deadline: Instant) -> bool {
        let mut exited = self.exited.subscribe();
        if Instant::now() >= deadline {
            return *exited.borrow();
        }
        tokio::time::timeout_at(deadline, exited.wait_for(|e| *e))
            .await
            .is_ok_and(|r| r.is_ok())
    }
}

/// The longest a namespace whose processes are all exiting is waited for
/// past the forced rung ([`Supervision::kill_namespace`]).
pub const EXITING_INIT_WAIT: Duration = Duration::from_secs(30);

/// How often that wait looks again for a process that is not exiting.
const EXITING_RECHECK: Duration = Duration::from_millis(100);

/// Past this many processes the walk stops and the namespace counts as
/// exiting: the wait it buys ends only on the init's pidfd (never a false
/// "confirmed"), and a policy of more processes must not lose it.
const EXITING_WALK_MAX: usize = 4096;

/// Whether the namespace init `pid` and every process under it (every live
/// process of its pid namespace: orphans are reparented to the init), each
/// of their threads, have entered their exit. Thin: `/proc` reads; false
/// when one has not, or cannot be read (a frozen process must end the wait
/// at once).
fn namespace_exiting(init: i32) -> bool {
    let mut pending = vec![init];
    let mut seen = 0;
    while let Some(pid) = pending.pop() {
        seen += 1;
        if seen > EXITING_WALK_MAX {
            return true;
        }
        // A process reaped meanwhile is no longer there to wait for.
        let gone = || !std::path::Path::new(&format!("/proc/{pid}")).exists();
        let tasks = match std::fs::read_dir(format!("/proc/{pid}/task")) {
            Ok(tasks) => tasks,
            Err(_) if gone() => continue,
            Err(_) => return false,
        };
        for task in tasks.flatten() {
            let path = task.path();
            // Every thread, not the process's stat alone: that is its main
            // thread's, which may have exited while another thread runs on
            // (frozen, it would hold the wait to its end: round 13w, R13w-2).
            match std::fs::read_to_string(path.join("stat")) {
                Ok(stat) if stat_says_exiting(&stat) => {}
                Ok(_) => return false,
                Err(_) if !path.exists() => continue,
                Err(_) => return false,
            }
            // A task gone meanwhile has no children left; no `children`
            // file at all (a kernel without it) hides them: doubt.
            let text = match std::fs::read_to_string(path.join("children")) {
                Ok(text) => text,
                Err(_) if !path.exists() => continue,
                Err(_) => return false,
            };
            pending.extend(
                text.split_whitespace()
                    .filter_map(|c| c.parse::<i32>().ok()),
            );
        }
    }
    true
}

/// Pure: whether a `/proc/<pid>/stat` line's flags (field 9) have
/// `PF_EXITING`, which the kernel sets as a task enters its exit.
fn stat_says_exiting(stat: &str) -> bool {
    const PF_EXITING: u64 = 0x4;
    stat.rsplit_once(") ")
        .and_then(|(_, rest)| rest.split_whitespace().nth(6))
        .and_then(|flags| flags.parse::<u64>().ok())
        .is_some_and(|flags| flags & PF_EXITING != 0)
}

/// A pidfd for the program: the first child of the namespace init (bwrap's
/// init forks exactly the program), confirmed as such once open — and the
/// init still alive after that check, so the parent pid checked was the
/// init's own and not a reuse of it.
fn program_pidfd(init_pid: i32, init: &OwnedFd) -> Option<OwnedFd> {
    let children = format!("/proc/{init_pid}/task/{init_pid}/children");
    let text = std::fs::read_to_string(children).ok()?;
    let pid = text.split_whitespace().next()?.parse().ok()?;
    let program = pidfd::open_child(pid, init_pid)?;
    (!pidfd::wait_exit(init, Duration::ZERO)).then_some(program)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn an_exiting_task_is_told_by_its_stat_flags() {
        // Field 9 of /proc/<pid>/stat; a comm may hold ") " itself.
        let exiting = "42 (a) b) D 1 42 42 0 -1 4194628 0 0";
        let running = "42 (a) b) S 1 42 42 0 -1 4194560 0 0";
        assert!(stat_says_exiting(exiting));
        assert!(!stat_says_exiting(running));
        assert!(!stat_says_exiting("garbage"));
        let me = std::fs::read_to_string("/proc/self/stat").unwrap();
        assert!(!stat_says_exiting(&me));
    }

    const TIMINGS: StopTimings = StopTimings {
        grace_ms: 10,
        force_ms: 10,
    };

    #[test]
    fn a_deadline_that_fires_after_the_exit_records_nothing_an_owners_stop_does() {
        let run = Arc::new(Supervision::default());
        run.mark_exited();
        // The deadline timer lost the race with bwrap's exit.
        run.stop_with(StopReason::Deadline, TIMINGS, false);
        assert_eq!(run.record().reason, None);
        // stop() after the end: recorded as requested, nothing attempted.
        run.request_stop(StopReason::Requested, TIMINGS);
        let record = run.record();
        assert_eq!(record.reason, Some(StopReason::Requested));
        assert!(!record.graceful_attempted && !record.forced_attempted);
    }

    #[test]
    fn a_deadline_armed_after_the_exit_is_a_no_op() {
        let run = Arc::new(Supervision::default());
        run.mark_exited();
        run.arm_deadline(Duration::from_millis(1), TIMINGS);
        assert!(run.state.lock().unwrap().deadlines.is_empty());
    }

    #[test]
    fn a_deadline_armed_from_the_owners_thread_goes_on_the_watched_timerfd() {
        let run = watched_run();
        // Armed from this (non-runtime) thread, twice: no tokio timer task is
        // added beside the timerfd's watcher, and the earliest deadline stops
        // the run. Nothing was started, so the ladder has nothing to signal.
        run.arm_deadline(Duration::from_secs(60), TIMINGS);
        run.arm_deadline(Duration::from_millis(5), TIMINGS);
        assert_eq!(run.state.lock().unwrap().deadlines.len(), 1);
        assert!(stopped_by_deadline_within(&run, Duration::from_secs(5)));
        // The exit closes the timer: a deadline armed after it is a no-op.
        run.mark_exited();
        assert!(run.state.lock().unwrap().deadline_timer.is_none());
    }

    /// A supervision watching its deadlines, as the run's start makes it
    /// (on the runtime).
    fn watched_run() -> Arc<Supervision> {
        let runtime = crate::run::supervision_runtime::get().unwrap();
        let run = Arc::new(Supervision::default());
        let watching = Arc::clone(&run);
        runtime
            .block_on(runtime.spawn(async move { watching.watch_deadlines(TIMINGS) }))
            .unwrap();
        assert!(run.state.lock().unwrap().deadline_timer.is_some());
        run
    }

    fn stopped_by_deadline_within(run: &Supervision, bound: Duration) -> bool {
        let until = std::time::Instant::now() + bound;
        while run.record().reason.is_none() && std::time::Instant::now() < until {
            std::thread::sleep(Duration::from_millis(1));
        }
        run.record().reason == Some(StopReason::Deadline)
    }

    #[test]
    fn a_deadline_on_a_timerfd_whose_watcher_failed_moves_to_a_tokio_timer() {
        let run = watched_run();
        run.arm_deadline(Duration::from_millis(50), TIMINGS);
        // The watcher dies (as when its read fails) and reports it.
        run.state.lock().unwrap().deadlines[0].abort();
        run.deadline_watch_failed();
        {
            let s = run.state.lock().unwrap();
            assert!(s.deadline_timer.is_none(), "the unwatched timer was kept");
            assert_eq!(
                s.deadlines.len(),
                2,
                "no tokio timer took the deadline over"
            );
        }
        assert!(stopped_by_deadline_within(&run, Duration::from_secs(5)));
        run.mark_exited();
    }

    #[test]
    fn an_init_made_known_after_the_forced_rung_is_killed_at_once() {
        let run = Arc::new(Supervision::default());
        // A stop during set-up: no init known yet, so the forced rung has
        // only bwrap and the cgroup to reach (neither here).
        run.request_stop(StopReason::Deadline, TIMINGS);
        let until = std::time::Instant::now() + Duration::from_secs(5);
        while !run.forced() && std::time::Instant::now() < until {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(run.forced());
        let mut init = std::process::Command::new("/bin/sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = i32::try_from(init.id()).unwrap();
        run.set_init(pid, pidfd::open(pid).unwrap());
        let killed = pidfd::wait_exit(&run.init().unwrap(), Duration::from_secs(5));
        let _ = init.kill();
        let status = init.wait().unwrap();
        assert!(killed, "the init lived on after the forced rung");
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(libc::SIGKILL));
        run.mark_exited();
    }

    #[test]
    fn a_deadline_with_other_ladder_timings_gets_a_timer_of_its_own() {
        let run = watched_run();
        let other = StopTimings {
            grace_ms: 20,
            force_ms: 20,
        };
        run.arm_deadline(Duration::from_secs(60), other);
        assert_eq!(run.state.lock().unwrap().deadlines.len(), 2);
        run.mark_exited();
        assert!(run.state.lock().unwrap().deadlines.is_empty());
    }
}
