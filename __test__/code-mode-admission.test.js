'use strict';

// Admission control on its own; the sandbox-level check (processes alive)
// is in code-mode-concurrency.test.js.

const test = require('node:test');
const assert = require('node:assert/strict');
const { Admission, AdmissionAbortedError } = require('../lib/code-mode/admission');

test('runs past maxConcurrent wait in a bounded queue and past maxQueued are refused at once', async () => {
  const admission = new Admission({ maxConcurrent: 2, maxQueued: 1, queueTimeoutMs: 10000 });
  const a = await admission.acquire();
  const b = await admission.acquire();
  let queuedAdmitted = false;
  const queued = admission.acquire().then((release) => { queuedAdmitted = true; return release; });
  await assert.rejects(admission.acquire(), (error) => error.code === 'ERR_CORDON_ADMISSION' && error.details.reason === 'queue-full');
  assert.deepEqual({ active: admission.stats().active, queued: admission.stats().queued }, { active: 2, queued: 1 });
  a();
  a(); // releasing twice frees one slot only
  const c = await queued;
  assert.ok(queuedAdmitted);
  assert.equal(admission.stats().active, 2);
  b();
  c();
  assert.equal(admission.stats().active, 0);
});

test('a queued run that waits longer than queueTimeoutMs is refused with ERR_CORDON_ADMISSION', async () => {
  const admission = new Admission({ maxConcurrent: 1, maxQueued: 4, queueTimeoutMs: 30 });
  const release = await admission.acquire();
  await assert.rejects(admission.acquire(), (error) => error.code === 'ERR_CORDON_ADMISSION' && error.details.reason === 'queue-timeout');
  assert.equal(admission.stats().queued, 0);
  release();
});

test('aborting a queued run leaves the queue without taking a slot', async () => {
  const admission = new Admission({ maxConcurrent: 1, maxQueued: 4 });
  const release = await admission.acquire();
  const controller = new AbortController();
  const waiting = admission.acquire(controller.signal);
  controller.abort();
  await assert.rejects(waiting, AdmissionAbortedError);
  release();
  assert.deepEqual([admission.stats().active, admission.stats().queued], [0, 0]);
});

test('admission options are validated', () => {
  for (const bad of [{ maxConcurrent: 0 }, { maxQueued: -1 }, { queueTimeoutMs: 1.5 }, { max: 1 }, null]) {
    assert.throws(() => new Admission(bad), { code: 'ERR_CORDON_INVALID_OPTIONS' }, JSON.stringify(bad));
  }
});
