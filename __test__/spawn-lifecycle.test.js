'use strict';

// wait()/stop() semantics, the stop ladder, deadlines, AbortSignal and the
// guarantee that no sandbox process outlives its execution or its provider.

const test = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const { randomUUID } = require('node:crypto');
const path = require('node:path');
const { spawnIsolated, readOnly } = require('./spawn-support').cordon;
const { fixture, runToEnd, collect, firstLine, pidsWithMarker, eventually } = require('./spawn-support');

/** A sandbox that ignores SIGTERM and has a grandchild; resolves once it said "ready". */
async function stubborn(options = {}) {
  const marker = `cordon-marker-${randomUUID()}`;
  const execution = spawnIsolated([fixture('ignore-sigterm-fork'), marker], { policy: readOnly(), ...options });
  execution.stderr.resume();
  assert.equal(await firstLine(execution.protocol), 'ready');
  execution.protocol.resume();
  return { execution, marker };
}

test('stop() takes down a program that ignores SIGTERM and its grandchild, with forcedStopAttempted', async () => {
  const { execution, marker } = await stubborn({ stop: { graceMs: 200, forceMs: 1000 } });
  assert.ok(pidsWithMarker(marker).length >= 1, 'the grandchild runs before stop()');
  const started = Date.now();
  await execution.stop();
  const result = await execution.wait();
  assert.ok(Date.now() - started >= 190, 'SIGKILL waited for graceMs');
  assert.deepEqual(pidsWithMarker(marker), []);
  const { stop, confinement } = result.receipt;
  assert.deepEqual(stop, {
    requested: true, reason: 'stop', gracefulStopAttempted: true, forcedStopAttempted: true, containmentConfirmed: true,
  });
  // The forced rung killed through the run's cgroup, where it has one (a root provider's).
  if (confinement.cgroupOutcome !== null) assert.equal(confinement.cgroupOutcome.killedByCgroup, true);
});

test('a program that honours SIGTERM stops on the graceful rung', async () => {
  const execution = spawnIsolated(['/bin/sh', '-c', 'echo ready >&3; exec sleep 30'], { policy: readOnly() });
  execution.stderr.resume();
  assert.equal(await firstLine(execution.protocol), 'ready');
  execution.protocol.resume();
  await execution.stop();
  const { returncode, receipt } = await execution.wait();
  assert.equal(returncode, 128 + 15);
  assert.equal(receipt.stop.gracefulStopAttempted, true);
  assert.equal(receipt.stop.forcedStopAttempted, false);
  assert.equal(receipt.stop.containmentConfirmed, true);
});

test('wait() returns the same promise every call and stop() is idempotent in every order', async () => {
  const orders = [
    async (e) => { await e.stop(); await e.stop(); await e.wait(); },
    async (e) => { const w = e.wait(); await Promise.all([e.stop(), e.stop(), w]); },
    async (e) => { e.stop(); await e.wait(); await e.stop(); },
  ];
  for (const order of orders) {
    const { execution } = await stubborn({ stop: { graceMs: 50, forceMs: 1000 } });
    assert.equal(execution.wait(), execution.wait());
    assert.equal(execution.stop(), execution.stop());
    await order(execution);
    assert.equal((await execution.wait()).receipt.stop.forcedStopAttempted, true);
  }
});

test('stop() before exit and after exit both resolve; after exit nothing is recorded as attempted', async () => {
  const execution = spawnIsolated(['/bin/true'], { policy: readOnly() });
  const result = await runToEnd(execution).then((r) => r.result);
  await execution.stop();
  await execution.stop();
  assert.equal(result.returncode, 0);
  assert.equal(result.receipt.stop.requested, false);
  const early = spawnIsolated(['/bin/sh', '-c', 'sleep 30'], { policy: readOnly() });
  early.stop();
  const stopped = await runToEnd(early).then((r) => r.result);
  assert.equal(stopped.receipt.stop.requested, true);
  assert.equal(stopped.receipt.stop.containmentConfirmed, true);
});

test('a stop() in the tick that spawned the run kills bwrap before its release: the program never starts', async () => {
  // The release (bwrap given its options) runs on a launcher thread while this thread returns
  // from spawnIsolated, so a same-tick stop() usually comes first, not always (the first spawn's
  // cold JavaScript is slower): one run must not have started, and say so truthfully. Before
  // the change every run started.
  await runToEnd(spawnIsolated(['/bin/true'], { policy: readOnly() }));
  let neverStarted = 0;
  // Up to 30 tries, until one stop came first (6–9 in 10 do here): a loaded machine that
  // releases first more often still finds one; before the change none ever did.
  for (let i = 0; i < 30 && neverStarted === 0; i++) {
    // SIGTERM ignored: a program that started says so and runs its whole 0.05 s.
    const execution = spawnIsolated(['/bin/sh', '-c', "trap '' TERM; echo started >&2; sleep 0.05"], { policy: readOnly() });
    execution.stop();
    const { result, stderr } = await runToEnd(execution);
    const { stop, outcome, confinement } = result.receipt;
    assert.equal(stop.reason, 'stop');
    assert.equal(stop.containmentConfirmed, true);
    if (confinement.observed !== null) continue; // the release came first: the ladder ran
    neverStarted += 1;
    assert.equal(stderr, '', 'a program that was never released wrote nothing');
    assert.deepEqual(outcome, { status: 'signaled', exitCode: null, signal: 'SIGKILL' });
    assert.equal(result.signal, 'SIGKILL');
    assert.equal(stop.gracefulStopAttempted, false);
    assert.equal(stop.forcedStopAttempted, true);
    assert.equal(confinement.cgroupOutcome?.killedByCgroup ?? false, false);
  }
  assert.ok(neverStarted >= 1, 'every same-tick stop() let the program start');
});

test('deadlineMs runs the ladder and the receipt says why', async () => {
  // The deadline runs from bwrap's start: it must leave the fixture time to trap SIGTERM
  // and say ready on a loaded machine, or the ladder never needs its forced step.
  const { execution } = await stubborn({ deadlineMs: 3000, stop: { graceMs: 50, forceMs: 1000 } });
  const result = await execution.wait();
  assert.equal(result.receipt.stop.reason, 'deadline');
  assert.equal(result.receipt.stop.forcedStopAttempted, true);
});

test('an AbortSignal runs the ladder, including one already aborted', async () => {
  const controller = new AbortController();
  const { execution } = await stubborn({ signal: controller.signal, stop: { graceMs: 50, forceMs: 1000 } });
  controller.abort();
  const result = await execution.wait();
  assert.equal(result.receipt.stop.reason, 'signal');
  const aborted = spawnIsolated(['/bin/sh', '-c', 'sleep 30'], { policy: readOnly(), signal: AbortSignal.abort() });
  const { result: early } = await runToEnd(aborted);
  assert.equal(early.receipt.stop.reason, 'signal');
});

test('no sandbox process survives wait(), even background children the program left running', async () => {
  const marker = `cordon-marker-${randomUUID()}`;
  // Subshells are forks of sh: their command line carries the marker too.
  const script = '(while :; do sleep 1; done) & (trap "" TERM; while :; do sleep 1; done) & echo started >&3; exit 0';
  const execution = spawnIsolated(['/bin/sh', '-c', script, marker], { policy: readOnly() });
  const [result, protocol] = await Promise.all([execution.wait(), collect(execution.protocol), collect(execution.stderr)]);
  assert.equal(result.returncode, 0);
  assert.equal(protocol.toString(), 'started\n');
  assert.deepEqual(pidsWithMarker(marker), []);
  assert.equal(result.receipt.stop.containmentConfirmed, true);
});

test('a Node process that spawned a sandbox and is SIGKILLed leaves no sandbox behind', async () => {
  const marker = `cordon-marker-${randomUUID()}`;
  const script = `
    const { spawnIsolated, readOnly } = require(${JSON.stringify(path.join(__dirname, '..'))});
    const e = spawnIsolated([${JSON.stringify(fixture('ignore-sigterm-fork'))}, ${JSON.stringify(marker)}], { policy: readOnly() });
    e.protocol.on('data', (d) => process.stdout.write(d));
    e.stderr.resume();`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  assert.equal(await firstLine(child.stdout), 'ready');
  assert.ok(pidsWithMarker(marker).length >= 2, 'program and grandchild run');
  child.kill('SIGKILL');
  await new Promise((resolve) => child.on('exit', resolve));
  assert.ok(await eventually(() => pidsWithMarker(marker).length === 0, 10_000), `left behind: ${pidsWithMarker(marker)}`);
});

test('a worker thread that spawned a sandbox and is terminated leaves no sandbox behind', async () => {
  const { Worker } = require('node:worker_threads');
  const marker = `cordon-marker-${randomUUID()}`;
  const source = `
    const { parentPort } = require('node:worker_threads');
    const { spawnIsolated, readOnly } = require(${JSON.stringify(path.join(__dirname, '..'))});
    const e = spawnIsolated([${JSON.stringify(fixture('ignore-sigterm-fork'))}, ${JSON.stringify(marker)}], { policy: readOnly() });
    e.protocol.on('data', () => parentPort.postMessage('ready'));
    e.stderr.resume();`;
  const worker = new Worker(source, { eval: true });
  await new Promise((resolve, reject) => { worker.once('message', resolve); worker.once('error', reject); });
  assert.ok(pidsWithMarker(marker).length >= 2, 'program and grandchild run');
  await worker.terminate();
  // The Node process lives on, so no parent-death signal: the worker's
  // environment teardown must stop the run itself.
  assert.ok(await eventually(() => pidsWithMarker(marker).length === 0, 10_000), `left behind: ${pidsWithMarker(marker)}`);
});

// Black-box round on the start, F6: bwrap ran in the provider's process
// group, so a Ctrl-C in the provider's terminal (or `kill -- -<pgid>`) killed
// every in-flight sandbox before the provider could decide anything. Now
// bwrap leaves for a session of its own; the provider here handles SIGINT
// and SIGHUP and keeps running, and so does its run.
test('a signal to the provider\'s process group reaches the provider alone, not its in-flight sandboxes', async (t) => {
  const root = path.join(__dirname, '..');
  const script = `
    const { spawnIsolated, readOnly } = require(${JSON.stringify(root)});
    process.on('SIGINT', () => {});
    process.on('SIGHUP', () => {});
    const run = spawnIsolated(['/bin/sh', '-c', 'read line <&3; echo "$line"; echo done'], { policy: readOnly() });
    let out = '';
    run.stderr.on('data', (chunk) => { out += chunk; });
    process.stdout.write('started\\n');
    process.stdin.once('data', () => run.protocol.write('after the signals\\n'));
    run.wait().then((r) => { process.stdout.write(JSON.stringify({ code: r.returncode, out }) + '\\n'); process.exit(0); });`;
  // Its own process group (detached), which the signals below are sent to.
  const child = spawn(process.execPath, ['-e', script], { stdio: ['pipe', 'pipe', 'inherit'], detached: true });
  t.after(() => { try { process.kill(-child.pid, 'SIGKILL'); } catch { /* all gone */ } });
  let out = '';
  await new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk) => { out += chunk; if (out.includes('started\n')) resolve(); });
    child.on('exit', () => reject(new Error(`the provider exited before its run started: ${out}`)));
  });
  // The sandbox is running and waiting on fd 3 (the run is not over before the signals).
  await new Promise((resolve) => { setTimeout(resolve, 300); });
  process.kill(-child.pid, 'SIGINT');
  process.kill(-child.pid, 'SIGHUP');
  await new Promise((resolve) => { setTimeout(resolve, 200); });
  child.stdin.write('go\n');
  const [code] = await new Promise((resolve) => child.on('exit', (...args) => resolve(args)));
  const result = JSON.parse(out.trim().split('\n').pop());
  assert.equal(code, 0);
  assert.deepEqual(result, { code: 0, out: 'after the signals\ndone\n' });
});

// Black-box round on the holder, F3: a provider whose own hard RLIMIT_NPROC
// is below the sandbox's planned one could run nothing, and the error said
// "exec /usr/bin/bwrap: Operation not permitted". It names the limit now.
test('a provider whose hard limit is below the sandbox\'s is told which limit, and its own value', () => {
  const root = path.join(__dirname, '..');
  const script = `
    const { spawnIsolated, readOnly } = require(${JSON.stringify(root)});
    spawnIsolated(['/bin/true'], { policy: readOnly() }).wait()
      .then((r) => console.log(JSON.stringify({ returncode: r.returncode })), (e) => console.log(JSON.stringify({ code: e.code, message: e.message })));`;
  const run = require('node:child_process').spawnSync('/usr/bin/prlimit', ['--nproc=300:300', '--', process.execPath, '-e', script], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  const result = JSON.parse(run.stdout.trim().split('\n').pop());
  assert.equal(result.code, 'ERR_CORDON_SPAWN_FAILED', run.stdout);
  assert.match(result.message, /RLIMIT_NPROC/);
  assert.match(result.message, /hard limit is 300/);
});
