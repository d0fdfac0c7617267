'use strict';

// Where a run's time goes (docs/performance.md "Where a run's time goes"):
// a per-step timeline of cold and pooled `run("return 1")`, one command:
//
//   node bench/timeline.js [--runs 15] [--no-strace] [--early] [--json out.json]
//
// --early: both modes with createCodeMode({resultBeforeTeardown: true}); run()
// then resolves at `js.run_resolved_early`, and `final` (awaited untimed)
// marks the rows after it, which are then off the caller's path.
//
// Three clocks, all CLOCK_MONOTONIC, lined up per run:
//   - this process: run() called, the addon entered and returned, `execute`
//     written, the first protocol chunk (`ready`), `execution.result`, the
//     protocol's end, the launcher's Finished event, wait() and run() settled;
//   - the launcher's step stamps (CORDON_STEP_TRACE, crates/launcher/src/
//     host/step_trace.rs): preparation, fork/exec, cgroup join, options sent,
//     info read, observation, bwrap reaped, containment, receipt, Finished,
//     cgroup and control-root removal;
//   - bwrap's own set-up (namespaces, mounts, seccomp, exec of the runner)
//     from one `strace -f -ttt` pass in a child process: ptrace inflates every
//     syscall, so those rows are shares of the untraced "options sent →
//     ready" interval, not absolute times.
// Each row is the median over --runs runs of the step's time since run() was
// called, and of the interval since the previous row; `path` says whether the
// caller's result waits for the step (crit) or it happens after (after).
// CPU: this process's user+system time per run (process.cpuUsage) is printed
// beside wall time, so a loaded host shows as wall ≫ CPU.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const args = process.argv.slice(2);
const flag = (name) => args.includes(name);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : fallback;
};

const traceFile = path.join(os.tmpdir(), `cordon-timeline-${process.pid}.trace`);
// Read by the launcher once, on its first stamp: set before the addon loads.
process.env.CORDON_STEP_TRACE = traceFile;
fs.writeFileSync(traceFile, '');

const binding = require('../binding.js');
const { createCodeMode } = require('..');

const nowNs = () => process.hrtime.bigint();
let jsSteps = null; // Map step -> ns for the run being traced
const mark = (step) => { if (jsSteps && !jsSteps.has(step)) jsSteps.set(step, nowNs()); };

// The addon seam, wrapped: stamps on entry/return, first write, and events.
const spawnNative = binding.spawnNative;
binding.spawnNative = (json, onEvent) => {
  mark('js.addon_enter');
  const handle = spawnNative.call(binding, json, (kind, chunk, message, settled) => {
    if (kind === binding.EventKind.ProtocolData) {
      mark('js.first_chunk');
      if (chunk.includes('execution.result')) mark('js.result_chunk');
    } else if (kind === binding.EventKind.ProtocolEnd) mark('js.protocol_end');
    else if (kind === binding.EventKind.Finished || kind === binding.EventKind.Failed) mark('js.finished_event');
    return onEvent(kind, chunk, message, settled);
  });
  mark('js.addon_return');
  for (const name of ['write', 'writeSome']) {
    const write = handle[name].bind(handle);
    handle[name] = (buffer) => { mark('js.execute_written'); return write(buffer); };
  }
  // fd 3's chunks are pulled (src/loop_reader.rs), not ProtocolData events.
  const readProtocol = handle.readProtocol.bind(handle);
  handle.readProtocol = (atOnce) => {
    const chunk = readProtocol(atOnce);
    if (chunk) {
      mark('js.first_chunk');
      if (chunk.includes('execution.result')) mark('js.result_chunk');
    }
    return chunk;
  };
  return handle;
};

/** Launcher stamps by invocation id, read from the trace file. */
function launcherSteps() {
  const byId = new Map();
  for (const line of fs.readFileSync(traceFile, 'utf8').split('\n')) {
    const [id, step, ns] = line.split(' ');
    if (!ns) continue;
    if (!byId.has(id)) byId.set(id, new Map());
    byId.get(id).set(step, BigInt(ns));
  }
  return byId;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** One traced run; returns {steps: Map step->ns, cpuUs, wallMs}. */
async function tracedRun(mode) {
  jsSteps = new Map();
  const cpu = process.cpuUsage();
  const t0 = nowNs();
  jsSteps.set('js.run_called', t0);
  const result = await mode.run('return 1');
  if (result.final) {
    mark('js.run_resolved_early');
    if (!(await result.final).ok) throw new Error('run not accounted for');
  } else {
    mark('js.run_resolved');
  }
  const cpuUsed = process.cpuUsage(cpu);
  if (!result.ok) throw new Error(`run failed: ${JSON.stringify(result.error)}`);
  const steps = jsSteps;
  jsSteps = null;
  // The after-path steps (cgroup and control root removal) land after run() resolves.
  await sleep(30);
  const launcher = launcherSteps().get(result.receipt.invocationId) ?? new Map();
  // A pooled sandbox's preparation happened before the take: not this run's time.
  for (const [step, ns] of launcher) if (ns >= t0) steps.set(step, ns);
  return { steps, t0, cpuUs: cpuUsed.user + cpuUsed.system };
}

// The rows, in causal order; `after` = not on the caller's critical path.
const ROWS = [
  ['js.addon_enter', 'Node: options, policy snapshot → addon entered', 'crit'],
  ['launch.start', 'addon: JSON options parsed, request validated, backend', 'crit'],
  ['launch.confinement', 'launcher: confinement plan (seccomp program, rlimits, cgroup plan)', 'crit'],
  ['launch.identity', 'launcher: base dir, run identity (uid lease)', 'crit'],
  ['launch.executable', 'launcher: executable hashed/staged', 'crit'],
  ['launch.control_root', 'launcher: control root created', 'crit'],
  ['launch.plan', 'launcher: workspace, plan.json, argv, bind fds', 'crit'],
  ['launch.cgroup_created', 'launcher: cgroup mkdir + limits', 'crit'],
  ['fork.start', 'hand-off to the supervision runtime', 'crit'],
  ['fork.exec_done', 'clone + exec bwrap (returns at the exec of the child; v1: the child joins the cgroup first)', 'crit'],
  ['pid.reported', 'pidfd opened, pid reported', 'crit'],
  ['js.addon_return', 'addon returns to JS (spawnIsolated done)', 'crit'],
  ['js.execute_written', 'Node: `execute` frame written', 'crit'],
  ['join.start', 'blocking pool picks up set-up', 'crit'],
  ['join.done', 'cgroup attach of bwrap (v2: cgroup.procs write; v1: nothing left, done before the exec)', 'crit'],
  ['options.sent', 'bwrap options sent', 'crit'],
  ['info.read', 'bwrap set-up (namespaces, mounts, seccomp) → info fd read', 'crit'],
  ['observed', 'observation (containment read from /proc)', 'crit'],
  ['js.first_chunk', 'runner start → `ready` received in JS', 'crit'],
  ['js.result_chunk', '`execution.result` received in JS', 'crit'],
  ['js.run_resolved_early', 'run() resolved before teardown (--early; the rows below are then after)', 'crit'],
  ['js.protocol_end', 'protocol EOF (runner exited)', 'crit'],
  ['bwrap.reaped', 'namespace init + bwrap exit, reaped', 'crit'],
  ['namespace.confirmed', 'pid namespace killed + confirmed empty', 'crit'],
  ['cgroup.emptied', 'cgroup confirmed empty', 'crit'],
  ['pumps.joined', 'pumps drained + joined', 'crit'],
  ['receipt.built', 'receipt document built', 'crit'],
  ['engine.finished', 'egress engine finished (mediated runs: tasks ended, fd-4 channel drained)', 'crit'],
  ['receipt.written', 'receipt written, read back', 'crit'],
  ['cgroup.removed', 'control root detached (rename), cgroup rmdir', 'crit'],
  ['finished.emitted', '`Finished` emitted', 'crit'],
  ['js.finished_event', 'Finished event reaches the JS thread', 'crit'],
  ['js.run_resolved', 'wait() + run() settle in JS (result built)', 'crit'],
  ['root.removed', 'control root removed (after Finished)', 'after'],
];

const median = (values) => {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  return sorted.length ? sorted[Math.floor(sorted.length / 2)] : NaN;
};

/** Per row: median ms since run() and median ms since the previous present row. */
function summarize(samples) {
  return ROWS.map(([step, what, path], index) => {
    const since = [];
    const delta = [];
    for (const { steps, t0 } of samples) {
      const at = steps.get(step);
      if (at === undefined) continue;
      since.push(Number(at - t0) / 1e6);
      let prev = t0;
      for (let j = index - 1; j >= 0; j -= 1) {
        const p = steps.get(ROWS[j][0]);
        if (p !== undefined) { prev = p; break; }
      }
      delta.push(Number(at - prev) / 1e6);
    }
    return { step, what, path, n: since.length, atMs: median(since), deltaMs: median(delta) };
  });
}

function printTable(title, rows, samples) {
  console.log(`\n${title} (median of ${samples.length}; CPU of this process per run: ${(median(samples.map((s) => s.cpuUs)) / 1000).toFixed(2)} ms)`);
  console.log('| step | at (ms) | Δ (ms) | path |');
  console.log('| --- | ---: | ---: | --- |');
  for (const r of rows) {
    if (r.n === 0) continue;
    console.log(`| ${r.what} \`${r.step}\` | ${r.atMs.toFixed(3)} | ${r.deltaMs.toFixed(3)} | ${r.path} |`);
  }
}

/** bwrap's set-up from one strace pass over a child cold run: shares of options-sent → runner exec. */
function straceBwrap() {
  const out = path.join(os.tmpdir(), `cordon-timeline-${process.pid}.strace`);
  // --seccomp-bpf: only the traced syscalls stop the tracee (bwrap re-reads
  // /proc/self/mountinfo after each mount; stopping on every read would
  // multiply the mount phase).
  const child = spawnSync('strace', ['-f', '-ttt', '--seccomp-bpf', '-o', out, '-e', 'trace=execve,clone,clone3,unshare,mount,pivot_root,seccomp,prctl,setns',
    process.execPath, __filename, '--child-cold'], { encoding: 'utf8', timeout: 60000 });
  if (child.error || child.status !== 0) return { error: String(child.error ?? child.stderr).slice(0, 300) };
  const lines = fs.readFileSync(out, 'utf8').split('\n');
  fs.rmSync(out, { force: true });
  const at = (re, from = 0) => {
    for (let i = from; i < lines.length; i += 1) if (re.test(lines[i])) return { i, t: Number(lines[i].split(/\s+/)[1]) };
    return null;
  };
  const bwrap = at(/execve\("[^"]*bwrap"/);
  if (!bwrap) return { error: 'no bwrap execve in the trace' };
  const seccomp = at(/seccomp\(|PR_SET_SECCOMP/, bwrap.i);
  const lastBefore = (re, end) => {
    for (let i = end - 1; i > bwrap.i; i -= 1) if (re.test(lines[i])) return { i, t: Number(lines[i].split(/\s+/)[1]) };
    return null;
  };
  const marks = [
    ['bwrap exec → namespaces cloned (user, pid, net, ipc, uts, cgroup)', at(/clone3?\(.*CLONE_NEW/, bwrap.i)],
    ['→ first mount', at(/ mount\(/, bwrap.i)],
    ['→ last mount (binds, tmpfs, proc, dev, remounts read-only)', seccomp && lastBefore(/ mount\(|pivot_root\(/, seccomp.i)],
    ['→ seccomp installed', seccomp],
    ['→ exec /usr/bin/env', at(/execve\("\/usr\/bin\/env"/, bwrap.i)],
    ['→ exec cordon-runner', at(/execve\("[^"]*cordon-runner"/, bwrap.i)],
  ];
  const total = marks[marks.length - 1][1] ? marks[marks.length - 1][1].t - bwrap.t : NaN;
  let prev = bwrap.t;
  const rows = marks.map(([what, m]) => {
    if (!m) return { what, ms: NaN, share: NaN };
    const ms = (m.t - prev) * 1000;
    prev = m.t;
    return { what, ms, share: ms / (total * 1000) };
  });
  return { totalMs: total * 1000, rows };
}

async function childCold() {
  const mode = createCodeMode({ tools: [] });
  await mode.run('return 1');
}

async function main() {
  if (flag('--child-cold')) return childCold();
  const runs = Number(option('--runs', '15'));
  const early = flag('--early') ? { resultBeforeTeardown: true } : {};
  const cold = createCodeMode({ tools: [], ...early });
  const pooled = createCodeMode({ tools: [], pool: { size: 2 }, ...early });
  await cold.run('return 1'); // warm the JS paths and the launcher's caches
  await pooled.run('return 1');
  const samples = { cold: [], pooled: [] };
  for (let i = 0; i < runs; i += 1) {
    samples.cold.push(await tracedRun(cold));
    await sleep(150); // the pool refills and its sandboxes reach `execute` wait
    samples.pooled.push(await tracedRun(pooled));
    await sleep(150);
  }
  await pooled.close?.();
  const coldRows = summarize(samples.cold);
  const pooledRows = summarize(samples.pooled);
  printTable('Cold run("return 1")', coldRows, samples.cold);
  printTable('Pooled run("return 1") (size 2, refilled between runs)', pooledRows, samples.pooled);
  let bwrap = null;
  if (!flag('--no-strace')) {
    bwrap = straceBwrap();
    if (bwrap.error) console.log(`\nstrace pass failed: ${bwrap.error}`);
    else {
      console.log(`\nbwrap set-up under strace -f (one cold run; ptrace-inflated total ${bwrap.totalMs.toFixed(2)} ms): share of bwrap exec → runner exec`);
      console.log('| step | traced Δ (ms) | share |');
      console.log('| --- | ---: | ---: |');
      for (const r of bwrap.rows) console.log(`| ${r.what} | ${r.ms.toFixed(3)} | ${(r.share * 100).toFixed(0)}% |`);
    }
  }
  const out = option('--json');
  if (out) fs.writeFileSync(out, JSON.stringify({ cold: coldRows, pooled: pooledRows, bwrap }, null, 2));
  fs.rmSync(traceFile, { force: true });
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
