//! The supervisor thread of one execution. It forks bwrap (so bwrap's
//! parent-death signal is tied to a thread that lives exactly as long as the
//! execution), then: reports bwrap's pid → joins bwrap to the run's cgroup
//! and sends it its options (it waits for them, so it forks nothing before
//! the join) → starts the three pumps → reads bwrap's info fd (the
//! sandbox init's host pid) → observes the program's confinement from
//! outside (observe/; a mismatch with the plan stops the run) → reaps bwrap
//! → kills the pid namespace through the init's pidfd and confirms it empty
//! → lets the readers drain to EOF → writes and reads back the receipt →
//! hands the control root to teardown → emits `Finished` (a failure when the
//! confinement mismatched or no receipt was read).

use std::io::Read;
use std::os::fd::OwnedFd;
use std::os::unix::process::ExitStatusExt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use crate::backend::Backend;
use crate::cgroup::ExecutionCgroup;
use crate::confinement::{self, CgroupOutcome, ConfinementPlan};
use crate::control_root::ControlRoot;
use crate::events::{Event, EventSink, Stream};
use crate::execution::{Control, ExecutionHandle, WRITE_QUEUE_DEPTH};
use crate::launch_request::LaunchRequest;
use crate::launch_request::StopTimings;
use crate::observe::moment::NotObserved;
use crate::observe::run::{observe_run, RunObservation};
use crate::pidfd;
use crate::plan::Plan;
use crate::pumps::{spawn_reader, spawn_writer, Gate, WriteCmd, WriterCounters};
use crate::receipt::{self, ByteCounts, Outcome, RunFacts};
use crate::run_result;
use crate::spawn::{spawn, OptionsFeed, Spawned};
use crate::stop_ladder::{StopReason, Supervision};

/// bwrap's info JSON is ~250 bytes; more than this is not bwrap talking.
const INFO_MAX_BYTES: u64 = 4096;
/// Leading stderr bytes kept to explain a failed sandbox set-up.
const DIAGNOSTIC_HEAD_BYTES: usize = 2048;
/// Shortest wait for the namespace init's exit when judging containment (ms).
const MIN_CONTAINMENT_WAIT_MS: u64 = 100;
/// How often a bounded pump join looks again (only for a namespace that
/// could not be confirmed empty).
const PUMP_POLL: Duration = Duration::from_millis(5);

/// Everything the pipeline prepared before the fork.
pub struct Prepared {
    pub request: LaunchRequest,
    pub plan: Plan,
    pub argv: crate::bwrap_argv::BwrapArgs,
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
    /// The run's own uid, held until its processes are confirmed gone.
    pub uid_lease: Option<crate::uid_lease::UidLease>,
    /// Caller-named host paths as opened (device, inode), for the receipt.
    pub host_binds: Vec<crate::receipt::HostBind>,
}

/// Starts the supervisor and waits for it to report bwrap's pid.
pub fn start(prepared: Prepared, sink: Arc<dyn EventSink>) -> std::io::Result<ExecutionHandle> {
    let (writer_tx, writer_rx) = mpsc::sync_channel(WRITE_QUEUE_DEPTH);
    let control = Arc::new(Control {
        writer: Mutex::new(Some(writer_tx)),
        protocol_gate: Arc::new(Gate::new()),
        stderr_gate: Arc::new(Gate::new()),
        supervision: Arc::new(Supervision::default()),
        stop_timings: prepared.request.stop,
    });
    let (pid_tx, pid_rx) = mpsc::channel();
    let shared = Arc::clone(&control);
    std::thread::Builder::new()
        .name("cordon-supervisor".into())
        .spawn(move || run(prepared, sink, shared, writer_rx, pid_tx))?;
    let pid = pid_rx.recv().ok().flatten();
    Ok(ExecutionHandle { control, pid })
}

/// Forwards events and keeps the head of stderr for diagnostics.
struct Tap {
    sink: Arc<dyn EventSink>,
    head: Mutex<Vec<u8>>,
}

impl EventSink for Tap {
    fn emit(&self, event: Event) {
        if let Event::Data {
            stream: Stream::Stderr,
            bytes,
        } = &event
        {
            if let Ok(mut head) = self.head.lock() {
                let room = DIAGNOSTIC_HEAD_BYTES.saturating_sub(head.len());
                head.extend_from_slice(&bytes[..room.min(bytes.len())]);
            }
        }
        self.sink.emit(event);
    }
}

struct Pumps {
    threads: Vec<JoinHandle<()>>,
    writer: Option<JoinHandle<()>>,
    protocol_out: Arc<AtomicU64>,
    stderr: Arc<AtomicU64>,
    writes: Arc<WriterCounters>,
}

fn run(
    mut p: Prepared,
    sink: Arc<dyn EventSink>,
    control: Arc<Control>,
    writer_rx: Receiver<WriteCmd>,
    pid_tx: Sender<Option<u32>>,
) {
    let started_at = SystemTime::now();
    // Moved out: the bind descriptors close as soon as bwrap holds its copies.
    let sources = std::mem::take(&mut p.sources);
    let argv = std::mem::take(&mut p.argv);
    match spawn(&p.plan, argv, sources) {
        Ok(spawned) => {
            let channels = Channels {
                sink: &sink,
                control: &control,
                writer_rx,
                pid_tx,
            };
            let (facts, status) = supervise(&p, spawned, channels, started_at);
            control.supervision.release();
            finish(p, &sink, facts, status);
        }
        Err(e) => {
            let _ = pid_tx.send(None);
            // Nothing to stop: a later stop() records itself and returns.
            control.supervision.mark_exited();
            control.close_writer();
            let message = e.to_string();
            let facts = facts(&p, started_at, Outcome::SpawnFailed { message });
            finish(p, &sink, facts, None);
        }
    }
}

/// Where a supervised run reports to.
struct Channels<'a> {
    sink: &'a Arc<dyn EventSink>,
    control: &'a Arc<Control>,
    writer_rx: Receiver<WriteCmd>,
    pid_tx: Sender<Option<u32>>,
}

/// From a started bwrap to the run's facts: pumps → sandbox pid → reap →
/// empty the cgroup → containment → drain the streams to EOF → outcome.
fn supervise(
    p: &Prepared,
    spawned: Spawned,
    channels: Channels<'_>,
    started_at: SystemTime,
) -> (RunFacts, Option<std::process::ExitStatus>) {
    let Channels {
        sink,
        control,
        writer_rx,
        pid_tx,
    } = channels;
    let Spawned {
        mut child,
        protocol,
        stderr,
        mut info,
        options,
    } = spawned;
    if let Ok(fd) = pidfd::open(child.id() as i32) {
        control.supervision.set_bwrap(fd);
    }
    if let Some(cgroup) = &p.cgroup {
        control.supervision.set_cgroup(Arc::clone(cgroup));
    }
    let _ = pid_tx.send(Some(child.id()));
    let setup_error = release_bwrap(p.cgroup.as_deref(), &mut child, options).err();
    let tap = Arc::new(Tap {
        sink: Arc::clone(sink),
        head: Mutex::new(Vec::new()),
    });
    let pumps = start_pumps(control, protocol, stderr, writer_rx, tap.clone());
    let init_pid = read_init_pid(&mut info);
    // bwrap is unreaped (its pid is stable); the init's pid may be reused.
    let bwrap_pid = i32::try_from(child.id()).unwrap_or(-1);
    if let Some((pid, fd)) = init_pid.and_then(|pid| Some((pid, open_init(p, pid, bwrap_pid)?))) {
        control.supervision.set_init(pid, fd);
    }
    let observation = observe(p, control, init_pid);
    let status = child.wait();
    control.supervision.mark_exited();
    let containment = confirm_containment(control, &status);
    empty_cgroup(p);
    control.protocol_gate.drain();
    control.stderr_gate.drain();
    collect_in_flight_descriptors();
    // An unconfirmed namespace may still hold the stream ends: the readers
    // get the stop ladder's bound to reach EOF, then are left to finish alone.
    let pump_bound = (!containment).then(|| Instant::now() + containment_wait(control));
    let bytes = join_pumps(pumps, control, pump_bound);
    // A stop that lands before bwrap reported the sandbox kills bwrap during
    // set-up: that is a stopped run, not a failed launch.
    let sandbox_ran = init_pid.is_some() || control.supervision.record().reason.is_some();
    let outcome = classify(&status, sandbox_ran, setup_error, &tap);
    let mut facts = facts(p, started_at, outcome);
    facts.stop = control.supervision.record();
    facts.containment_confirmed = containment;
    facts.bytes = bytes;
    if let Some(seen) = observation {
        facts.observed = Some(seen.observed);
        facts.mismatches = seen.mismatches;
    }
    (facts, status.ok())
}

/// Observes the program once bwrap reported its init; a mismatch stops the
/// run at once (no grace: a sandbox that is not what was planned gets no
/// time to act). `None` when no sandbox was reported.
fn observe(p: &Prepared, control: &Control, init_pid: Option<i32>) -> Option<RunObservation> {
    let init_pid = init_pid?;
    let Some(init) = control.supervision.init() else {
        // Reported, but gone before its pidfd could be opened.
        return Some(RunObservation::not_observed(NotObserved::Ended));
    };
    let seen = observe_run(&p.plan, &p.confinement, &p.invocation_id, init_pid, &init);
    if !seen.mismatches.is_empty() {
        let timings = StopTimings {
            grace_ms: 0,
            ..control.stop_timings
        };
        control
            .supervision
            .request_stop(StopReason::ConfinementMismatch, timings);
    }
    Some(seen)
}

/// bwrap is blocked reading its options (`--args` is a socket): join it to
/// the run's cgroup first, so it is inside before it forks anything, then
/// send them. The join can wait a whole RCU grace period (~10 ms on a quiet
/// host, docs/performance.md); here that wait overlaps bwrap's exec and the
/// caller's thread, which already has the pid, instead of blocking both.
/// On failure bwrap is killed (it is still waiting: nothing of the sandbox
/// exists yet) and the error becomes the spawn failure's message. A stop
/// during the join kills bwrap: the send then fails with EPIPE and the stop
/// explains the outcome.
fn release_bwrap(
    cgroup: Option<&ExecutionCgroup>,
    child: &mut std::process::Child,
    options: OptionsFeed,
) -> Result<(), String> {
    let released = cgroup
        .map_or(Ok(()), |cgroup| cgroup.add_pid(child.id()))
        .map_err(|e| format!("cannot move bwrap into the run's cgroup: {e}"))
        .and_then(|()| {
            options
                .send()
                .map_err(|e| format!("cannot send bwrap its options: {e}"))
        });
    if released.is_err() {
        let _ = child.kill();
    }
    released
}

/// bwrap is gone, so is the sandbox: whatever is still in the run's cgroup
/// (an init orphaned when bwrap was stopped mid-setup holds the stream
/// descriptors and would keep the pumps from ever seeing EOF) is killed
/// before the streams are drained.
fn empty_cgroup(p: &Prepared) {
    if let Some(cgroup) = &p.cgroup {
        let wait = Duration::from_millis(p.request.stop.force_ms.max(MIN_CONTAINMENT_WAIT_MS));
        let _ = cgroup.kill_all(wait);
    }
}

/// A bwrap that ended before reporting a sandbox failed its set-up: the
/// launcher's own reason (`setup_error`), else the head of bwrap's stderr.
fn classify(
    status: &std::io::Result<std::process::ExitStatus>,
    sandbox_ran: bool,
    setup_error: Option<String>,
    tap: &Tap,
) -> Outcome {
    match (status, sandbox_ran) {
        (Ok(s), true) => match (s.code(), s.signal()) {
            (Some(code), _) => Outcome::Exited { code },
            (None, sig) => Outcome::Signaled {
                signal: pidfd::signal_name(sig.unwrap_or(0)),
            },
        },
        (Ok(_), false) => Outcome::SpawnFailed {
            message: setup_error.unwrap_or_else(|| setup_failure(tap)),
        },
        (Err(e), _) => Outcome::SpawnFailed {
            message: format!("wait for bwrap: {e}"),
        },
    }
}

fn start_pumps(
    control: &Control,
    protocol: OwnedFd,
    stderr: OwnedFd,
    writer_rx: Receiver<WriteCmd>,
    tap: Arc<Tap>,
) -> Pumps {
    let protocol = Arc::new(protocol);
    let protocol_out = Arc::new(AtomicU64::new(0));
    let stderr_count = Arc::new(AtomicU64::new(0));
    let writes = Arc::new(WriterCounters::default());
    let sink: Arc<dyn EventSink> = tap;
    let threads = [
        spawn_reader(
            Stream::Protocol,
            Arc::clone(&protocol),
            Arc::clone(&control.protocol_gate),
            Arc::clone(&sink),
            Arc::clone(&protocol_out),
        ),
        spawn_reader(
            Stream::Stderr,
            Arc::new(stderr),
            Arc::clone(&control.stderr_gate),
            Arc::clone(&sink),
            Arc::clone(&stderr_count),
        ),
    ];
    let writer = spawn_writer(protocol, writer_rx, sink, Arc::clone(&writes)).ok();
    if threads.iter().any(|t| t.is_err()) || writer.is_none() {
        // Without a pump the streams could never end: take the sandbox down.
        control.supervision.request_stop(
            crate::stop_ladder::StopReason::Requested,
            control.stop_timings,
        );
    }
    Pumps {
        threads: threads.into_iter().flatten().collect(),
        writer,
        protocol_out,
        stderr: stderr_count,
        writes,
    }
}

/// Stream ends a sandbox hid in an unreachable `SCM_RIGHTS` cycle (a unix
/// socket queued inside itself) are closed only by the kernel's unix garbage
/// collector, which runs when some unix socket is released while descriptors
/// are in flight. Once the pid namespace is gone nothing inside can release
/// one, and on a quiet host nothing else may for minutes: the readers below
/// would wait for an EOF that never comes. Releasing a socket pair of our own
/// schedules the collector (one socketpair, a few µs per run).
fn collect_in_flight_descriptors() {
    drop(std::os::unix::net::UnixStream::pair());
}

/// Joins the pumps; with a `bound`, a pump still blocked past it is left
/// running (it ends at its EOF or EPIPE) so the run settles anyway.
fn join_pumps(pumps: Pumps, control: &Control, bound: Option<Instant>) -> ByteCounts {
    for thread in pumps.threads {
        join_within(thread, bound);
    }
    control.close_writer();
    if let Some(writer) = pumps.writer {
        join_within(writer, bound);
    }
    ByteCounts {
        protocol_in: pumps.writes.written.load(Ordering::Relaxed),
        protocol_in_discarded: pumps.writes.discarded.load(Ordering::Relaxed),
        protocol_out: pumps.protocol_out.load(Ordering::Relaxed),
        stderr: pumps.stderr.load(Ordering::Relaxed),
    }
}

fn join_within(thread: JoinHandle<()>, bound: Option<Instant>) {
    if let Some(bound) = bound {
        while !thread.is_finished() && Instant::now() < bound {
            std::thread::sleep(PUMP_POLL);
        }
        if !thread.is_finished() {
            return;
        }
    }
    let _ = thread.join();
}

/// bwrap writes `{"child-pid": N, …}` once the namespaces exist and closes
/// the fd; EOF without it means the set-up failed.
fn read_init_pid(info: &mut std::fs::File) -> Option<i32> {
    let mut text = String::new();
    info.take(INFO_MAX_BYTES).read_to_string(&mut text).ok()?;
    let value: serde_json::Value = serde_json::from_str(&text).ok()?;
    i32::try_from(value.get("child-pid")?.as_i64()?).ok()
}

/// The namespace init as bwrap's child; else, when bwrap is already gone (a
/// rewritten init can fake the program's exit before the launcher gets
/// here), as the reparented init of a namespace started by that bwrap.
fn open_init(p: &Prepared, init: i32, bwrap: i32) -> Option<OwnedFd> {
    pidfd::open_child(init, bwrap).or_else(|| {
        let started = crate::process_identity::process_start_time(u32::try_from(bwrap).ok()?)?;
        // SAFETY: geteuid has no preconditions and cannot fail.
        let uid = p
            .plan
            .identity
            .map_or_else(|| unsafe { libc::geteuid() }, |id| id.uid);
        pidfd::open_namespace_init(init, uid, started)
    })
}

/// bwrap is reaped: kill its pid namespace from outside whatever bwrap
/// reported (a program that rewrote the init through `/proc/1/mem` can fake
/// its exit to bwrap and clear the init's parent-death signal), and confirm
/// it empty by the init's pidfd. Without an init (set-up failed before bwrap
/// reported one) only a normal bwrap exit counts as contained.
fn confirm_containment(
    control: &Control,
    status: &std::io::Result<std::process::ExitStatus>,
) -> bool {
    match control
        .supervision
        .kill_namespace(containment_wait(control))
    {
        Some(emptied) => emptied,
        None => status.as_ref().is_ok_and(|s| s.code().is_some()),
    }
}

/// How long the end of a run waits for the namespace to empty: the stop
/// ladder's forced rung, at least [`MIN_CONTAINMENT_WAIT_MS`].
fn containment_wait(control: &Control) -> Duration {
    Duration::from_millis(control.stop_timings.force_ms.max(MIN_CONTAINMENT_WAIT_MS))
}

/// The run's cgroup at the end: kill whatever is still in it (nothing, when
/// the pid namespace did its job), read its OOM count, remove it. Returns
/// the outcome and whether the cgroup ended empty.
fn settle_cgroup(
    cgroup: Option<&ExecutionCgroup>,
    forced: bool,
    force_ms: u64,
) -> (CgroupOutcome, bool) {
    let Some(cgroup) = cgroup else {
        return (CgroupOutcome::default(), true);
    };
    let wait = Duration::from_millis(force_ms.max(MIN_CONTAINMENT_WAIT_MS));
    let emptied = cgroup.kill_all(wait).is_ok();
    let outcome = CgroupOutcome {
        oom_kills: cgroup.oom_kills(),
        killed_by_cgroup: forced,
    };
    let _ = cgroup.remove();
    (outcome, emptied)
}

fn setup_failure(tap: &Tap) -> String {
    let head = tap
        .head
        .lock()
        .map(|h| String::from_utf8_lossy(&h).trim().to_string())
        .unwrap_or_default();
    format!("bubblewrap could not set up the sandbox: {head}")
}

fn facts(p: &Prepared, started_at: SystemTime, outcome: Outcome) -> RunFacts {
    RunFacts {
        invocation_id: p.invocation_id.clone(),
        backend_version: p.backend.version.clone(),
        executable_sha256: p.executable_sha256.clone(),
        // SAFETY: geteuid has no preconditions and cannot fail.
        sandbox_uid: p
            .plan
            .identity
            .map_or_else(|| unsafe { libc::geteuid() }, |id| id.uid),
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

/// Receipt → read back → detach the control root → `Finished` → remove it.
fn finish(
    mut p: Prepared,
    sink: &Arc<dyn EventSink>,
    mut facts: RunFacts,
    status: Option<std::process::ExitStatus>,
) {
    let forced = facts.stop.forced_attempted;
    let (cgroup, emptied) = settle_cgroup(p.cgroup.as_deref(), forced, p.request.stop.force_ms);
    facts.containment_confirmed &= emptied;
    // The uid is free for another run once the tree is settled (killed and
    // confirmed empty wherever the host can confirm it).
    drop(p.uid_lease.take());
    facts.confinement = Some(confinement::receipt_parts(&p.confinement, cgroup));
    let mut document = receipt::build(&p.plan, &p.request.policy, &facts);
    crate::network_receipts::attach(&mut document, p.egress.as_mut());
    let receipt = receipt::write_and_read(&p.root, &document);
    // What the sandbox left may take long to remove (any depth or width):
    // the root leaves its name in one rename so the run settles now, and is
    // removed below, after `Finished`. If the rename fails, before it.
    if !p.root.detach() {
        p.root.remove();
    }
    // Every descriptor of the run is closed before `wait()` can settle.
    p.cgroup = None;
    let receipt = receipt.map_err(|e| e.to_string());
    let result = run_result::settle(facts.outcome, &facts.mismatches, status, receipt);
    sink.emit(Event::Finished(result));
    p.root.remove();
}
