//! The supervision of one execution, as a task of the process-wide
//! supervision runtime (supervision_runtime.rs). On a runtime worker it forks
//! bwrap (bwrap's parent-death signal is tied to the forking thread; workers
//! live as long as the process), reports bwrap's pid and arms the run's
//! deadline; then, on the blocking pool, joins bwrap to the run's cgroup and
//! sends it its options (it waits for them, so it forks nothing before the
//! join) → starts the three pumps → reads bwrap's info fd (the sandbox
//! init's host pid) → observes the program's confinement from outside
//! (observe/; a mismatch with the plan stops the run). It then waits for
//! bwrap's exit on its pidfd without holding a thread, and tears down on the
//! blocking pool: kill the pid namespace through the init's pidfd and
//! confirm it empty → empty the cgroup → let the readers drain to EOF →
//! write and read back the receipt → hand the control root to teardown →
//! emit `Finished` (a failure when the confinement mismatched or no receipt
//! was read).
//!
//! Parts: the stderr tap (stderr_tap.rs), the pumps (run_pumps.rs), what
//! the end means (outcome.rs, pure), teardown (teardown.rs) and the steps'
//! errors (run_error.rs).

mod outcome;
mod run_error;
mod run_pumps;
mod stderr_tap;
mod teardown;

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod live_tests;

use std::io::Read;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::process::ExitStatus;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

pub use run_error::RunError;

use crate::error_code::ErrorCode;
use crate::events::{Event, EventSink, LaunchFailure};
use crate::host::clone_exec::Process;
use crate::host::control_root::ControlRoot;
use crate::host::pidfd;
use crate::host::step_trace;
use crate::observe::moment::NotObserved;
use crate::observe::reader::{ProviderFacts, ReadError};
use crate::observe::run::{observe_run, RunObservation};
use crate::plan::cgroup::ExecutionCgroup;
use crate::plan::confinement::{self, ConfinementPlan};
use crate::plan::Plan;
use crate::receipt::run_result;
use crate::receipt::{self, RunFacts};
use crate::request::launch_request::LaunchRequest;
use crate::run::backend::Backend;
use crate::run::execution::{Control, ExecutionHandle, WRITE_QUEUE_DEPTH};
use crate::run::owner_reader::OwnerReader;
use crate::run::pumps::{Gate, WriteCmd};
use crate::run::spawn::{spawn, SpawnError, Spawned};
use crate::run::stop_ladder::{StopReason, Supervision};
use run_pumps::Pumps;
use stderr_tap::Tap;

/// Everything the pipeline prepared before the fork.
pub struct Prepared {
    pub request: LaunchRequest,
    pub plan: Plan,
    pub argv: crate::plan::bwrap_argv::BwrapArgs,
    pub sources: Vec<(std::os::fd::RawFd, OwnedFd)>,
    pub root: ControlRoot,
    pub backend: Backend,
    pub executable_sha256: String,
    pub invocation_id: String,
    pub confinement: ConfinementPlan,
    pub cgroup: Option<Arc<ExecutionCgroup>>,
    /// The run's egress engine (mediated network only); finished before the
    /// receipt is written, so every stream is closed and recorded.
    pub egress: Option<cordon_egress::RunEngine>,
    /// Where the fd-4 channel's pair was made (mediated network with fd 4).
    pub fd4_namespace: Option<cordon_passed_fds::ChannelNamespace>,
    /// The run's own uid, held until its processes are confirmed gone.
    pub uid_lease: Option<crate::host::uid_lease::UidLease>,
    /// The run's user namespace of subordinate ids (a non-root provider),
    /// entered by the forked child; closed once bwrap is spawned.
    pub userns: Option<OwnedFd>,
    /// The sessions' claim on the run's uid, looked at again before bwrap
    /// gets its options (session_owner_claims.rs).
    pub claim_recheck: Option<crate::host::session_owner_claims::ClaimRecheck>,
    /// A namespace holder's mount namespace, joined right after `userns`
    /// (a non-root session: host/namespace_holder.rs).
    pub mntns: Option<OwnedFd>,
    /// Caller-named host paths as opened (device, inode), for the receipt.
    pub host_binds: Vec<crate::receipt::HostBind>,
    /// The launcher's copy of the starter's end of the liveness pair, held while
    /// the run lives (plan/starter.rs): bwrap's status writes always have
    /// a reader.
    pub starter_reader: Option<OwnedFd>,
}

/// Starts the run's supervision and waits for it to report bwrap's pid.
/// fd 3 is read on `owner`'s loop when there is one (owner_reader.rs),
/// else by a thread of the launcher.
pub fn start(
    prepared: Prepared,
    sink: Arc<dyn EventSink>,
    owner: Option<Arc<dyn OwnerReader>>,
) -> std::io::Result<ExecutionHandle> {
    let runtime = crate::run::supervision_runtime::get()?;
    let (writer_tx, writer_rx) = mpsc::sync_channel(WRITE_QUEUE_DEPTH);
    let control = Arc::new(Control {
        writer: Mutex::new(Some(writer_tx)),
        direct: Mutex::new(None),
        queued: Arc::new(std::sync::atomic::AtomicUsize::new(0)),
        kept: std::sync::atomic::AtomicUsize::new(0),
        late: crate::run::late_writes::LateWrites::default(),
        protocol_gate: Arc::new(Gate::new()),
        stderr_gate: Arc::new(Gate::new()),
        supervision: Arc::new(Supervision::default()),
        stop_timings: prepared.request.stop,
    });
    if let Some(engine) = &prepared.egress {
        control.supervision.set_egress_stop(engine.stop_latch());
    }
    let (pid_tx, pid_rx) = mpsc::channel();
    let run = Run {
        p: prepared,
        sink,
        owner,
        control: Arc::clone(&control),
        started_at: SystemTime::now(),
        settled: Arc::new(AtomicBool::new(false)),
    };
    let guard = SettleGuard {
        control: Arc::clone(&run.control),
        sink: Arc::clone(&run.sink),
        settled: Arc::clone(&run.settled),
        root: run.p.root.path().to_path_buf(),
    };
    runtime.spawn(async move {
        let _guard = guard;
        run.live(writer_rx, pid_tx).await;
    });
    let pid = pid_rx.recv().ok().flatten();
    Ok(ExecutionHandle { control, pid })
}

/// One run, moved between the runtime's workers and its blocking pool.
struct Run {
    p: Prepared,
    sink: Arc<dyn EventSink>,
    /// Reads fd 3 on the owner's loop (handed over at the pumps' start).
    owner: Option<Arc<dyn OwnerReader>>,
    control: Arc<Control>,
    started_at: SystemTime,
    /// Set once `Finished` was emitted.
    settled: Arc<AtomicBool>,
}

/// Held by the run's task from before the fork until it ends. If the task
/// ends without `Finished` (a panic in set-up or teardown; tokio's blocking
/// pool panics when it cannot start a thread), the sandbox is killed and
/// `wait()` settles with `ERR_CORDON_SPAWN_FAILED` instead of never.
struct SettleGuard {
    control: Arc<Control>,
    sink: Arc<dyn EventSink>,
    settled: Arc<AtomicBool>,
    /// The run's control root, removed here if the unwinding left it.
    root: std::path::PathBuf,
}

/// How long a lost run's SIGKILLed bwrap is waited for, to be reaped.
const ABANDONED_BWRAP_REAP: Duration = Duration::from_secs(2);

impl Drop for SettleGuard {
    fn drop(&mut self) {
        if self.settled.load(Ordering::Acquire) {
            return;
        }
        self.control.supervision.abandon();
        // bwrap's `Child` was dropped unwaited: reap it through its pidfd
        // (no pid reuse can be hit), or it stays a zombie for the
        // provider's life. Then the control root, which a panic may have
        // left for a sweep that only takes roots of dead providers.
        if let Some(bwrap) = self.control.supervision.bwrap() {
            if pidfd::wait_exit(&bwrap, ABANDONED_BWRAP_REAP) {
                use nix::sys::wait::{waitid, Id, WaitPidFlag};
                use std::os::fd::AsFd;
                let _ = waitid(
                    Id::PIDFd(bwrap.as_fd()),
                    WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG,
                );
            }
        }
        let _ = crate::host::tree_removal::remove_tree(&self.root);
        self.control.close_writer();
        self.sink.emit(Event::Finished(Err(LaunchFailure {
            code: ErrorCode::SpawnFailed,
            message: "the run's supervision ended before the run settled (a panic, or no \
                      thread for its teardown): the sandbox was killed, no receipt was written"
                .into(),
            receipt: None,
        })));
    }
}

/// A sandbox released and being watched: what the end of the run needs.
struct Started {
    pumps: Pumps,
    tap: Arc<Tap>,
    init_pid: Option<i32>,
    /// Why the sandbox could not be set up, if the launcher knows.
    setup_error: Option<RunError>,
    /// Why the launcher could not supervise the sandbox it set up: the
    /// run's error, whatever its exit.
    supervision_error: Option<RunError>,
    observation: Option<RunObservation>,
    channel_namespace: cordon_passed_fds::ChannelNamespace,
}

impl Run {
    /// The run's whole life: fork → set-up → wait for bwrap → teardown.
    async fn live(mut self, writer_rx: Receiver<WriteCmd>, pid_tx: Sender<Option<u32>>) {
        // Moved out: the bind descriptors close as soon as bwrap holds its copies.
        let sources = std::mem::take(&mut self.p.sources);
        let argv = std::mem::take(&mut self.p.argv);
        let plan = self.p.plan.clone();
        // On the fork thread (supervision_runtime.rs), and right after the
        // fork, on that same thread: the facts bwrap inherited (per-thread
        // seccomp filters and namespaces), which the observation compares
        // the sandbox against.
        let userns = self.p.userns.take();
        let mntns = self.p.mntns.take();
        let id = self.p.invocation_id.clone();
        // v1: the leaves' `tasks` files, which bwrap's child writes itself
        // into before its exec (no RCU wait: plan/cgroup/plan.rs).
        let joins = self
            .p
            .cgroup
            .as_ref()
            .map_or(Ok(Vec::new()), |cgroup| cgroup.open_spawn_joins());
        let forked = crate::run::supervision_runtime::on_fork_thread(move || {
            record_forking_thread();
            step_trace::stamp(&id, "fork.start");
            let spawned = match joins {
                Ok(joins) => spawn(
                    &plan,
                    argv,
                    sources,
                    userns.as_ref(),
                    mntns.as_ref(),
                    &joins,
                ),
                Err(error) => Err(SpawnError::OpenCgroupJoin(error)),
            };
            step_trace::stamp(&id, "fork.exec_done");
            // bwrap is in the namespace now (it holds it alive): ours can go.
            drop(userns);
            drop(mntns);
            (spawned, crate::observe::reader::provider_facts())
        })
        .await;
        let (spawned, provider) = match forked {
            Ok(forked) => forked,
            Err(source) => {
                let path = self.p.plan.bwrap.display().to_string();
                // Not read: nothing was forked, and the run ends here.
                let unread = ReadError {
                    what: "provider facts".into(),
                    detail: "nothing was forked".into(),
                };
                (Err(SpawnError::Exec { path, source }), Err(unread))
            }
        };
        let spawned = match spawned {
            Ok(spawned) => spawned,
            Err(e) => {
                let _ = pid_tx.send(None);
                // Nothing to stop: a later stop() records itself and returns.
                self.control.supervision.mark_exited();
                self.control.close_writer();
                let error = RunError::from(e);
                let facts = outcome::facts(&self.p, self.started_at, outcome::failed(&error));
                blocking(move || self.finish(facts, None, Some(error))).await;
                return;
            }
        };
        let supervision = &self.control.supervision;
        let pid = spawned.child.id();
        if let Ok(fd) = pidfd::open(pid as i32) {
            supervision.set_bwrap(fd);
        }
        if let Some(cgroup) = &self.p.cgroup {
            supervision.set_cgroup(Arc::clone(cgroup));
        }
        // Before the pid reaches the owner, who may arm a deadline at once.
        supervision.watch_deadlines(self.control.stop_timings);
        let _ = pid_tx.send(Some(pid));
        self.step("pid.reported");
        if let Some(ms) = self.p.request.deadline_ms {
            supervision.arm_deadline(Duration::from_millis(ms), self.control.stop_timings);
        }
        let Some((run, child, started)) = blocking(move || {
            let (child, started) = self.set_up(spawned, writer_rx, provider);
            (self, child, started)
        })
        .await
        else {
            return;
        };
        let status = bwrap_exit(&run.control.supervision, child).await;
        run.step("bwrap.reaped");
        run.control.supervision.mark_exited();
        blocking(move || {
            let exit = status.as_ref().ok().copied();
            let (facts, error) = run.tear_down(started, status);
            run.control.supervision.release();
            run.finish(facts, exit, error);
        })
        .await;
    }

    /// Blocking: release bwrap into its cgroup, start the pumps, read the
    /// sandbox init's pid, observe the confinement.
    fn set_up(
        &self,
        spawned: Spawned,
        writer_rx: Receiver<WriteCmd>,
        provider: Result<ProviderFacts, ReadError>,
    ) -> (Process, Started) {
        let control = &self.control;
        let Spawned {
            mut child,
            protocol,
            protocol_refuses_descriptors,
            channel_namespace,
            stderr,
            mut info,
            options,
        } = spawned;
        stop_for_tests(control, &self.p.invocation_id);
        let release = teardown::release_bwrap(
            self.p.cgroup.as_deref(),
            self.p.claim_recheck.as_ref(),
            &control.supervision,
            &mut child,
            options,
            &self.p.invocation_id,
        );
        let mut setup_error = release.err();
        let tap = Arc::new(Tap::new(Arc::clone(&self.sink)));
        let (pumps, pump_error) = run_pumps::start(
            control,
            protocol,
            stderr,
            writer_rx,
            tap.clone(),
            self.owner.clone().filter(|_| protocol_refuses_descriptors),
        );
        let pump_error = pump_error
            .or_else(|| pump_failure_for_tests(&self.p.invocation_id))
            // A sandbox killed before its release never ran: its stop or its
            // release's error explains the run, not the pumps.
            .filter(|_| !control.supervision.killed_unreleased());
        let mut text = String::new();
        let init_pid = match (&mut info)
            .take(outcome::INFO_MAX_BYTES)
            .read_to_string(&mut text)
            .map_err(RunError::ReadInfo)
            .and_then(|_| outcome::init_pid(&text))
        {
            Ok(pid) => pid,
            Err(e) => {
                setup_error = setup_error.or(Some(e));
                None
            }
        };
        // bwrap is unreaped (its pid is stable); the init's pid may be reused.
        let bwrap_pid = i32::try_from(child.id()).unwrap_or(-1);
        if let Some((pid, fd)) =
            init_pid.and_then(|pid| Some((pid, self.open_init(pid, bwrap_pid)?)))
        {
            control.supervision.set_init(pid, fd);
        }
        self.step("info.read");
        let observation = self.observe(init_pid, provider);
        self.step("observed");
        if pump_error.is_some() {
            // Without a pump the streams could never end and nothing the
            // sandbox writes is read: take it down at once (after its init
            // is known and observed, so the kill reaches it by its pidfd and
            // its containment can be confirmed). The run fails with this
            // error, whatever stopped it first or how it ended.
            control.stop_now(StopReason::SupervisionFailed);
        } else if let Some(seen) = &observation {
            self.emit_receipt_head(seen, channel_namespace);
        }
        panic_for_tests(&self.p.invocation_id);
        let started = Started {
            pumps,
            tap,
            init_pid,
            setup_error,
            supervision_error: pump_error,
            observation,
            channel_namespace,
        };
        (child, started)
    }

    /// The namespace init as bwrap's child; else, when bwrap is already gone
    /// (a rewritten init can fake the program's exit before the launcher
    /// gets here), as the reparented init of a namespace started by that
    /// bwrap.
    fn open_init(&self, init: i32, bwrap: i32) -> Option<OwnedFd> {
        pidfd::open_child(init, bwrap).or_else(|| {
            let started =
                crate::host::process_identity::process_start_time(u32::try_from(bwrap).ok()?)?;
            pidfd::open_namespace_init(init, outcome::sandbox_uid(&self.p), started)
        })
    }

    /// Observes the program once bwrap reported its init; a mismatch stops
    /// the run at once (no grace: a sandbox that is not what was planned
    /// gets no time to act). `None` when no sandbox was reported.
    fn observe(
        &self,
        init_pid: Option<i32>,
        provider: Result<ProviderFacts, ReadError>,
    ) -> Option<RunObservation> {
        let init_pid = init_pid?;
        let Some(init) = self.control.supervision.init() else {
            // Reported, but gone before its pidfd could be opened.
            return Some(RunObservation::not_observed(NotObserved::Ended));
        };
        let p = &self.p;
        let id = &p.invocation_id;
        let supervision = &self.control.supervision;
        let killed = || supervision.sandbox_dying();
        let seen = observe_run(
            &p.plan,
            &p.confinement,
            id,
            init_pid,
            &init,
            provider,
            &killed,
        );
        if !seen.mismatches.is_empty() {
            self.control.stop_now(StopReason::ConfinementMismatch);
        }
        Some(seen)
    }

    /// `Observed`: the receipt's head (receipt::head), so a caller can hold
    /// a true receipt before the teardown. The outcome given to `facts` is
    /// never seen: `head` drops it with every other end field.
    fn emit_receipt_head(
        &self,
        seen: &RunObservation,
        channels: cordon_passed_fds::ChannelNamespace,
    ) {
        let p = &self.p;
        let mut facts = outcome::facts(p, self.started_at, receipt::Outcome::Exited { code: 0 });
        let parts = confinement::receipt_parts(&p.confinement, Default::default());
        facts.confinement = Some(parts);
        facts.observed = Some(seen.observed.clone());
        facts.mismatches = seen.mismatches.clone();
        facts.channel_namespace = Some(channels.as_str());
        let mut head = receipt::head(&p.plan, &p.request.policy, &facts);
        receipt::network_receipts::socket_families(&mut head, p.egress.is_some());
        self.sink.emit(Event::Observed { receipt_head: head });
    }

    /// Blocking, bwrap reaped: kill the namespace and confirm it empty →
    /// empty the cgroup → drain the streams to EOF → the run's facts.
    fn tear_down(
        &self,
        started: Started,
        status: std::io::Result<ExitStatus>,
    ) -> (RunFacts, Option<RunError>) {
        let control = &self.control;
        let containment = teardown::confirm_containment(control, &status);
        self.step("namespace.confirmed");
        let cgroup_emptied = teardown::empty_cgroup(&self.p);
        self.step("cgroup.emptied");
        teardown::collect_in_flight_descriptors();
        // An unconfirmed namespace may still hold the stream ends: the readers
        // get the stop ladder's bound to reach EOF, then are left to finish alone.
        let wait = teardown::containment_wait(control.stop_timings.force_ms);
        let pump_bound = (!containment).then(|| Instant::now() + wait);
        let bytes = run_pumps::join(started.pumps, control, pump_bound);
        self.step("pumps.joined");
        // A stop that lands before bwrap reported the sandbox kills bwrap during
        // set-up: that is a stopped run, not a failed launch.
        let stop = control.supervision.record();
        let reached = if started.init_pid.is_none() && stop.reason.is_none() {
            outcome::Reached::Nothing
        } else if started
            .observation
            .as_ref()
            .is_some_and(|o| o.program_seen())
        {
            outcome::Reached::Program
        } else {
            outcome::Reached::Sandbox
        };
        let tap = &started.tap;
        let classified = match started.supervision_error {
            Some(e) => Err(e),
            None => outcome::classify(status, reached, started.setup_error, || tap.head()),
        };
        let (outcome, error) = match classified {
            Ok(outcome) => (outcome, None),
            Err(e) => (outcome::failed(&e), Some(e)),
        };
        let mut facts = outcome::facts(&self.p, self.started_at, outcome);
        facts.stop = stop;
        facts.containment_confirmed = containment && cgroup_emptied;
        facts.bytes = bytes;
        facts.channel_namespace = Some(started.channel_namespace.as_str());
        if let Some(seen) = started.observation {
            facts.observed = Some(seen.observed);
            facts.mismatches = seen.mismatches;
        }
        (facts, error)
    }

    /// Receipt → read back → detach the control root → `Finished` → remove it.
    fn finish(mut self, mut facts: RunFacts, status: Option<ExitStatus>, error: Option<RunError>) {
        let p = &mut self.p;
        let cgroup = teardown::cgroup_outcome(p.cgroup.as_deref(), facts.stop.cgroup_killed);
        // The uid is free for another run once the tree is settled (killed and
        // confirmed empty wherever the host can confirm it).
        drop(p.uid_lease.take());
        facts.confinement = Some(confinement::receipt_parts(&p.confinement, cgroup));
        // Writes the owner made after the writer closed, not knowing yet that
        // the run is over, are counted up to here (round 16b, R16b-1).
        facts.bytes.protocol_in_discarded += self.control.late.take_for_receipt();
        let mut document = receipt::build(&p.plan, &p.request.policy, &facts);
        step_trace::stamp(&p.invocation_id, "receipt.built");
        crate::receipt::network_receipts::attach(&mut document, p.egress.as_mut());
        step_trace::stamp(&p.invocation_id, "engine.finished");
        let receipt = receipt::write_and_read(&p.root, &document);
        step_trace::stamp(&p.invocation_id, "receipt.written");
        // What the sandbox left may take long to remove (any depth or width):
        // the root leaves its name in one rename so the run settles now, and is
        // removed below, after `Finished`. If the rename fails, before it.
        if !p.root.detach() {
            p.root.remove();
        }
        // Every descriptor of the run is closed, and its cgroup removed
        // (~0.1 ms, docs/performance.md), before `wait()` can settle.
        teardown::remove_cgroup(p.cgroup.take());
        step_trace::stamp(&p.invocation_id, "cgroup.removed");
        let receipt = receipt.map_err(|e| e.to_string());
        let failure = error.as_ref().map(RunError::code);
        let result = run_result::settle(facts.outcome, failure, &facts.mismatches, status, receipt);
        self.sink.emit(Event::Finished(result));
        self.settled.store(true, Ordering::Release);
        step_trace::stamp(&p.invocation_id, "finished.emitted");
        p.root.remove();
        step_trace::stamp(&p.invocation_id, "root.removed");
    }

    /// A step stamp for `bench/timeline.js` (host/step_trace.rs).
    fn step(&self, name: &str) {
        step_trace::stamp(&self.p.invocation_id, name);
    }
}

/// Runs whose invocation id starts with this panic at the end of their
/// set-up (unit tests only: compiled out of every build but `cargo test`),
/// so the lost-supervision path (`SettleGuard`) runs for real.
#[cfg(test)]
pub const TEST_PANIC_IN_SET_UP: &str = "test-panic-in-set-up";

#[cfg(test)]
fn panic_for_tests(invocation_id: &str) {
    if invocation_id.starts_with(TEST_PANIC_IN_SET_UP) {
        panic!("test: a panic in the run's set-up");
    }
}

#[cfg(not(test))]
fn panic_for_tests(_: &str) {}

/// Runs whose invocation id starts with this are stopped (as by `stop()`)
/// right before their release (unit tests only), so the stop-before-start
/// path runs without a race against the caller's thread.
#[cfg(test)]
pub const TEST_STOP_BEFORE_RELEASE: &str = "test-stop-before-release";

#[cfg(test)]
fn stop_for_tests(control: &Control, invocation_id: &str) {
    if invocation_id.starts_with(TEST_STOP_BEFORE_RELEASE) {
        control.stop(StopReason::Requested);
    }
}

#[cfg(not(test))]
fn stop_for_tests(_: &Control, _: &str) {}

/// Runs whose invocation id starts with this see their pumps' start fail
/// (unit tests only), as when the provider has no thread left for them.
#[cfg(test)]
pub const TEST_PUMPS_FAIL: &str = "test-pumps-fail";

#[cfg(test)]
fn pump_failure_for_tests(invocation_id: &str) -> Option<RunError> {
    invocation_id
        .starts_with(TEST_PUMPS_FAIL)
        .then(|| RunError::StartPumps(std::io::Error::from_raw_os_error(libc::EAGAIN)))
}

#[cfg(not(test))]
fn pump_failure_for_tests(_: &str) -> Option<RunError> {
    None
}

/// The names of the threads bwrap was forked on (unit tests only).
#[cfg(test)]
pub static FORKING_THREADS: Mutex<Vec<String>> = Mutex::new(Vec::new());

#[cfg(test)]
fn record_forking_thread() {
    let name = std::thread::current().name().unwrap_or("").to_owned();
    FORKING_THREADS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(name);
}

#[cfg(not(test))]
fn record_forking_thread() {}

/// Runs `f` on the runtime's blocking pool, or on this worker where no
/// thread can be started (supervision_runtime.rs). `None` only if `f`
/// panicked (nothing in it unwraps; the run's `Finished` would then be
/// missing).
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    crate::run::supervision_runtime::blocking(f).await
}

/// bwrap's pidfd, borrowed for the runtime's reactor.
struct PidFd(Arc<OwnedFd>);

impl AsRawFd for PidFd {
    fn as_raw_fd(&self) -> RawFd {
        self.0.as_raw_fd()
    }
}

/// Waits for bwrap's exit without holding a thread (its pidfd turns
/// readable), then reaps it. Without a pidfd (it could not be opened, or
/// not registered), the blocking `wait` runs on the blocking pool.
async fn bwrap_exit(supervision: &Supervision, mut child: Process) -> std::io::Result<ExitStatus> {
    let watched = supervision.bwrap().and_then(|fd| {
        // SAFETY: `PidFd` owns a reference to the `OwnedFd`, so the
        // descriptor stays open and is the same one for as long as the
        // `AsyncFd` (which owns the `PidFd`) lives; `as_raw_fd` always
        // returns it.
        unsafe { AsyncFd::register_with_interest(PidFd(fd), Interest::READABLE) }.ok()
    });
    if let Some(watched) = watched {
        if watched.readable().await.is_ok() {
            drop(watched);
            // Exited: the reap returns at once.
            return child.wait();
        }
    }
    blocking(move || child.wait())
        .await
        .unwrap_or_else(|| Err(std::io::Error::other("the wait for bwrap panicked")))
}
