'use strict';

// createPool(spawnOptions, {size}) over the real sandbox: options checked at
// creation, a take is the caller's alone, per-run time limits count from the
// take, an empty pool spawns on the spot, and close() ends everything it holds.

const test = require('node:test');
const assert = require('node:assert/strict');
const { createPool, readOnly, runnerPath } = require('..');
const { sandboxCensus } = require('./code-mode-support');
const { ownControlRoots, eventually } = require('./spawn-support');

const spawnOptions = () => ({ command: [runnerPath], policy: readOnly() });

/** A bound on background work (refills, stops), never a timing assertion. */
const WAIT_MS = 10000;

test('invalid pool and spawn options throw ERR_CORDON_INVALID_OPTIONS before anything is spawned', () => {
  for (const size of [0, -1, 1.5, 65, '2', undefined]) {
    assert.throws(() => createPool(spawnOptions(), { size }), { code: 'ERR_CORDON_INVALID_OPTIONS' }, String(size));
  }
  assert.throws(() => createPool(spawnOptions(), { size: 1, max: 2 }), { code: 'ERR_CORDON_INVALID_OPTIONS' });
  assert.throws(() => createPool({ ...spawnOptions(), deadlineMs: 10 }, { size: 1 }), /per run: pass it to take/);
  assert.throws(() => createPool({ ...spawnOptions(), invocationId: 'x' }, { size: 1 }), { code: 'ERR_CORDON_INVALID_OPTIONS' });
  // The launcher owns the option keys: an unknown one is refused by it, at creation, before any spawn.
  assert.throws(() => createPool({ ...spawnOptions(), frobnicate: 1 }, { size: 1 }), { code: 'ERR_CORDON_INVALID_OPTIONS', message: /options\.frobnicate: unknown key/ });
  assert.throws(() => createPool({ policy: readOnly() }, { size: 1 }), { code: 'ERR_CORDON_INVALID_COMMAND' });
  // The first sandbox is spawned at creation: a bad command or policy is the caller's error, now.
  assert.throws(() => createPool({ command: ['/nonexistent/runner'], policy: readOnly() }, { size: 1 }), { code: 'ERR_CORDON_INVALID_COMMAND' });
  assert.throws(() => createPool({ command: [runnerPath], policy: { formatVersion: 2 } }, { size: 1 }), { code: 'ERR_CORDON_POLICY_INVALID' });
  assert.deepEqual(sandboxCensus(), { bwrap: 0, runners: 0 });
});

test('take() hands out distinct sandboxes; an empty pool spawns one on the spot', async () => {
  const pool = createPool(spawnOptions(), { size: 1 });
  const first = pool.take();
  const second = pool.take(); // the refill has not run yet: cold
  assert.notEqual(first.pid, second.pid);
  assert.equal(pool.stats().coldTakes, 1);
  assert.equal(pool.stats().taken, 2);
  await Promise.all([first.stop(), second.stop()]);
  assert.ok(await eventually(() => pool.stats().idle === 1, WAIT_MS));
  await pool.close();
  assert.deepEqual(sandboxCensus(), { bwrap: 0, runners: 0 });
  assert.deepEqual(ownControlRoots(), []);
  assert.throws(() => pool.take(), { code: 'ERR_CORDON_CLOSED' });
});

test('deadlineMs and signal count from the take, not from the spawn', async () => {
  const DEADLINE_MS = 200;
  const pool = createPool(spawnOptions(), { size: 2 });
  try {
    assert.ok(await eventually(() => pool.stats().idle === 2, WAIT_MS));
    // Both idle sandboxes are now older than the deadline: counted from the
    // spawn, it would stop the sandbox the moment it is taken.
    await new Promise((resolve) => setTimeout(resolve, 2 * DEADLINE_MS));
    const takenAt = Date.now();
    const byDeadline = pool.take({ deadlineMs: DEADLINE_MS });
    byDeadline.stderr.resume();
    const exit = await byDeadline.wait();
    const stoppedAfter = Date.now() - takenAt;
    assert.equal(exit.receipt.stop.requested, true, 'the deadline ran the stop ladder');
    assert.equal(exit.receipt.stop.reason, 'deadline');
    assert.ok(takenAt - Date.parse(exit.receipt.startedAt) >= 2 * DEADLINE_MS, 'the sandbox idled past the deadline before the take');
    assert.ok(stoppedAfter >= DEADLINE_MS, `stopped ${stoppedAfter} ms after the take, before its ${DEADLINE_MS} ms deadline`);

    // A signal given at the take stops the sandbox when it aborts, not before.
    const controller = new AbortController();
    const bySignal = pool.take({ signal: controller.signal });
    bySignal.stderr.resume();
    let settled = false;
    bySignal.wait().then(() => { settled = true; }, () => { settled = true; });
    await new Promise((resolve) => setTimeout(resolve, DEADLINE_MS));
    assert.equal(settled, false, 'the sandbox runs until the signal aborts');
    controller.abort();
    const aborted = await bySignal.wait();
    assert.equal(aborted.receipt.stop.requested, true);
    assert.equal(aborted.receipt.stop.reason, 'signal');
    // The take's deadline is the launcher's timer, not the event loop's: with
    // this thread busy for 1.5 s right after the take, the sandbox still ends
    // at its 200 ms deadline (the receipt's endedAt is the launcher's clock).
    const busyTakenAt = Date.now();
    const busy = pool.take({ deadlineMs: DEADLINE_MS });
    busy.stderr.resume();
    while (Date.now() - busyTakenAt < 1500);
    const busyExit = await busy.wait();
    assert.equal(busyExit.receipt.stop.reason, 'deadline');
    const endedAfter = Date.parse(busyExit.receipt.endedAt) - busyTakenAt;
    assert.ok(endedAfter < 1500, `ended ${endedAfter} ms after the take: the deadline waited for the event loop`);
    assert.throws(() => pool.take({ deadlineMs: 0 }), { code: 'ERR_CORDON_INVALID_OPTIONS' });
    assert.throws(() => pool.take({ timeout: 5 }), { code: 'ERR_CORDON_INVALID_OPTIONS' });
  } finally {
    await pool.close();
  }
  assert.deepEqual(sandboxCensus(), { bwrap: 0, runners: 0 });
});

test('a taken run whose owner delivered its result early counts as ended for the refill, before it exits', async () => {
  // What Code Mode's resultBeforeTeardown does once its caller has the result
  // (lib/code-mode/execution.js): the pool refills while the run still runs,
  // so the refill overlaps a teardown nobody waits for (docs/performance.md).
  const pool = createPool({ command: ['/usr/bin/sleep', '30'], policy: readOnly() }, { size: 3 });
  const taken = [];
  try {
    assert.ok(await eventually(() => pool.stats().idle === 3, WAIT_MS));
    taken.push(pool.take(), pool.take()); // one still idle: no refill until a run ends
    // Not a timing assertion: time for a refill to show itself, if there were one.
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(pool.stats().spawned, 3, 'both runs are still running');
    let settled = false;
    taken[1].wait().then(() => { settled = true; }, () => { settled = true; });
    taken[1]._resultDelivered();
    assert.ok(await eventually(() => pool.stats().spawned === 4 && pool.stats().idle === 2, WAIT_MS), JSON.stringify(pool.stats()));
    assert.equal(settled, false, 'the refill came while the run still ran');
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(pool.stats().spawned, 4, 'one refill per run: the other is still running');
  } finally {
    await Promise.all(taken.map((execution) => execution.stop()));
    await pool.close();
  }
  assert.deepEqual(sandboxCensus(), { bwrap: 0, runners: 0 });
});

test('while taken sandboxes run and one is idle, the pool spawns one sandbox per ended run and tops up once none runs', async () => {
  const pool = createPool(spawnOptions(), { size: 2 });
  try {
    assert.ok(await eventually(() => pool.stats().idle === 2, WAIT_MS));
    const first = pool.take();
    const second = pool.take(); // none left idle: one refill starts at once
    assert.ok(await eventually(() => pool.stats().idle === 1, WAIT_MS));
    // Not a timing assertion: time for a refill chain to show itself, if there were one.
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(pool.stats().spawned, 3, 'no second refill competes with the two running sandboxes');
    await first.stop();
    assert.ok(await eventually(() => pool.stats().idle === 2, WAIT_MS), 'the ended run was replaced');
    assert.equal(pool.stats().spawned, 4);
    await second.stop();
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(pool.stats().spawned, 4, 'a full pool spawns nothing more');
  } finally {
    await pool.close();
  }
  assert.deepEqual(sandboxCensus(), { bwrap: 0, runners: 0 });
});

test('runs that ended one at a time leave no credit that lets refills chain beside later running ones', async () => {
  const pool = createPool(spawnOptions(), { size: 2 });
  try {
    assert.ok(await eventually(() => pool.stats().idle === 2, WAIT_MS));
    // Five runs, each alone: each end is answered by its own refill.
    for (let i = 0; i < 5; i += 1) {
      await pool.take().stop();
      assert.ok(await eventually(() => pool.stats().idle === 2, WAIT_MS), JSON.stringify(pool.stats()));
    }
    const spawned = pool.stats().spawned;
    const both = [pool.take(), pool.take()]; // none left idle: one refill at once, then none while both run
    try {
      assert.ok(await eventually(() => pool.stats().idle === 1, WAIT_MS));
      // Not a timing assertion: time for a refill chain to show itself, if there were one.
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.equal(pool.stats().spawned, spawned + 1, `no refill beside the two running sandboxes: ${JSON.stringify(pool.stats())}`);
    } finally {
      await Promise.all(both.map((execution) => execution.stop()));
    }
  } finally {
    await pool.close();
  }
  assert.deepEqual(sandboxCensus(), { bwrap: 0, runners: 0 });
});
