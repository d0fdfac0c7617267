'use strict';

// Admission through the real sandbox: with maxConcurrent 4, 50 concurrent
// runs never have more than 4 sandboxes alive (counted as processes), and the
// overflow past the queue is refused at once with ERR_CORDON_ADMISSION.

const test = require('node:test');
const assert = require('node:assert/strict');
const { codeMode, sandboxCensus } = require('./code-mode-support');

const BUSY_100_MS = 'const end = Date.now() + 100; while (Date.now() < end) {} return 1;';

test('50 concurrent runs with maxConcurrent 4 never have more than 4 sandboxes alive; overflow gets ERR_CORDON_ADMISSION', async () => {
  const mode = codeMode({ admission: { maxConcurrent: 4, maxQueued: 20, queueTimeoutMs: 60000 } });
  let peak = { bwrap: 0, runners: 0 };
  let samples = 0;
  const sampler = setInterval(() => {
    const census = sandboxCensus();
    samples += 1;
    peak = { bwrap: Math.max(peak.bwrap, census.bwrap), runners: Math.max(peak.runners, census.runners) };
  }, 3);
  const settled = await Promise.allSettled(Array.from({ length: 50 }, () => mode.run(BUSY_100_MS)));
  clearInterval(sampler);
  const rejected = settled.filter((s) => s.status === 'rejected');
  const fulfilled = settled.filter((s) => s.status === 'fulfilled').map((s) => s.value);
  assert.equal(rejected.length, 26, 'past 4 running + 20 queued');
  for (const { reason } of rejected) assert.equal(reason.code, 'ERR_CORDON_ADMISSION');
  assert.equal(fulfilled.length, 24);
  for (const result of fulfilled) assert.equal(result.ok, true, JSON.stringify(result.error));
  assert.ok(samples > 10, `only ${samples} samples`);
  assert.ok(peak.bwrap <= 4 && peak.runners <= 4, `peak ${JSON.stringify(peak)}`);
  assert.ok(peak.runners >= 2, `the test should see runs overlap, peak ${JSON.stringify(peak)}`);
  assert.deepEqual(sandboxCensus(), { bwrap: 0, runners: 0 });
  assert.deepEqual([mode.stats().active, mode.stats().queued], [0, 0]);
});

test('a refused run is refused at once, not after waiting', async () => {
  const mode = codeMode({ admission: { maxConcurrent: 1, maxQueued: 0 }, limits: { timeoutMs: 1000 } });
  let ranToEnd = false;
  const running = mode.run(BUSY_100_MS).then((result) => { ranToEnd = true; return result; });
  await assert.rejects(mode.run('return 1;'), (error) => error.code === 'ERR_CORDON_ADMISSION' && error.details.reason === 'queue-full');
  // Not after waiting for the slot: the refusal came while the first run still held it
  // (an ordering, not a time bound a loaded machine could miss).
  assert.equal(ranToEnd, false, 'refused before the running one ended');
  assert.equal((await running).ok, true);
});
