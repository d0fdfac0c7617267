'use strict';

// createCodeMode({pool}) over the real sandbox: every run gets a sandbox of
// its own that nobody used before, the pool refills after use and after an
// idle sandbox is killed, and close() leaves no process and no control root.

const test = require('node:test');
const assert = require('node:assert/strict');
const { codeMode, sandboxCensus, runnerPids } = require('./code-mode-support');
const { ownControlRoots, eventually } = require('./spawn-support');

/** A bound on background work (refills, stops), never a timing assertion. */
const WAIT_MS = 10000;

test('one use only: a second run never sees the first run\'s globals or process', async (t) => {
  const mode = codeMode({ pool: { size: 2 } });
  t.after(() => mode.close());
  assert.ok(await eventually(() => mode.poolStats().idle === 2, WAIT_MS), 'the pool fills');
  // A sandbox counts as idle once bwrap is spawned; its runner may still be starting.
  assert.ok(await eventually(() => runnerPids().length === 2, WAIT_MS), 'both idle runners are up');
  const before = runnerPids();
  const first = await mode.run('globalThis.leak = "secret"; return typeof globalThis.leak;');
  assert.equal(first.ok, true, JSON.stringify(first.error));
  assert.equal(first.result, 'string');
  const afterFirst = runnerPids();
  const second = await mode.run('return typeof globalThis.leak;');
  assert.equal(second.ok, true, JSON.stringify(second.error));
  assert.equal(second.result, 'undefined', 'fresh globals');
  // The first run's runner has exited: the one serving the second run is another process.
  const firstPid = before.find((pid) => !afterFirst.includes(pid));
  assert.ok(firstPid !== undefined, `the first run's runner (one of ${before}) is gone after it ended (${afterFirst})`);
  assert.ok(!runnerPids().includes(firstPid));
  assert.notEqual(first.receipt.invocationId, second.receipt.invocationId, 'two sandboxes, two receipts');
  assert.match(first.receipt.invocationId, /^pool-/);
  const stats = mode.poolStats();
  assert.equal(stats.taken, 2);
  assert.equal(stats.coldTakes, 0);
});

test('refills after use and after an idle sandbox is killed; a run then still succeeds', async (t) => {
  const mode = codeMode({ pool: { size: 2 } });
  t.after(() => mode.close());
  assert.ok(await eventually(() => mode.poolStats().idle === 2, WAIT_MS));
  assert.equal((await mode.run('return 1;')).ok, true);
  assert.ok(await eventually(() => mode.poolStats().idle === 2 && mode.poolStats().spawned === 3, WAIT_MS), JSON.stringify(mode.poolStats()));
  assert.ok(await eventually(() => runnerPids().length === 2, WAIT_MS), 'both idle runners are up');
  const [victim] = runnerPids();
  process.kill(victim, 'SIGKILL');
  assert.ok(await eventually(() => mode.poolStats().idleDeaths === 1, WAIT_MS), JSON.stringify(mode.poolStats()));
  assert.ok(await eventually(() => mode.poolStats().idle === 2 && mode.poolStats().spawned === 4, WAIT_MS), JSON.stringify(mode.poolStats()));
  const result = await mode.run('return 2;');
  assert.equal(result.ok, true, JSON.stringify(result.error));
  assert.equal(result.result, 2);
});

test('bounded under a burst: never more than size idle, never more sandboxes than size + maxConcurrent', async (t) => {
  const size = 2;
  const maxConcurrent = 3;
  const mode = codeMode({ pool: { size }, admission: { maxConcurrent, maxQueued: 20, queueTimeoutMs: 60000 } });
  t.after(() => mode.close());
  let peak = { idle: 0, sandboxes: 0 };
  const sampler = setInterval(() => {
    peak = { idle: Math.max(peak.idle, mode.poolStats().idle), sandboxes: Math.max(peak.sandboxes, sandboxCensus().bwrap) };
  }, 2);
  const results = await Promise.all(Array.from({ length: 12 }, (_, i) => mode.run(`return ${i};`)));
  clearInterval(sampler);
  results.forEach((result, i) => assert.deepEqual([result.ok, result.result], [true, i], JSON.stringify(result.error)));
  assert.ok(peak.idle <= size, `peak idle ${peak.idle}`);
  assert.ok(peak.sandboxes <= size + maxConcurrent, `peak sandboxes ${peak.sandboxes}`);
  assert.ok(await eventually(() => mode.poolStats().idle === size && sandboxCensus().bwrap === size, WAIT_MS), 'settles back to size idle sandboxes');
});

test('close() stops every waiting sandbox, leaves no process or control root, and refuses new runs', async () => {
  const mode = codeMode({ pool: { size: 3 } });
  assert.ok(await eventually(() => mode.poolStats().idle === 3 && runnerPids().length === 3, WAIT_MS));
  assert.equal((await mode.run('return 1;')).ok, true);
  await mode.close();
  assert.deepEqual(sandboxCensus(), { bwrap: 0, runners: 0 });
  assert.deepEqual(ownControlRoots(), []);
  assert.equal(mode.poolStats().closed, true);
  await assert.rejects(mode.run('return 1;'), { code: 'ERR_CORDON_CLOSED' });
  await mode.close(); // idempotent
});

test('an execute frame larger than the pool runners\' frame ceiling takes the cold path', async (t) => {
  const mode = codeMode({ pool: { size: 1 }, limits: { sourceBytes: 4 << 20, resultBytes: 1024, toolResultBytes: 1024, cumulativeResultBytes: 1024 } });
  t.after(() => mode.close());
  const code = `// ${'x'.repeat(200 * 1024)}\nreturn 3;`;
  const result = await mode.run(code);
  assert.equal(result.ok, true, JSON.stringify(result.error));
  assert.equal(result.result, 3);
  assert.equal(mode.poolStats().taken, 0, 'the pooled runner could not read this frame');
  assert.equal((await mode.run('return 4;')).result, 4);
  assert.equal(mode.poolStats().taken, 1);
});
