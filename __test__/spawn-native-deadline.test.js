'use strict';

// The launcher enforces `deadlineMs` itself: a run started through the
// addon directly — no index.js, no JavaScript timer anywhere — is stopped
// with reason "deadline" in its receipt.

const test = require('node:test');
const assert = require('node:assert/strict');
const { readOnly } = require('..');

/** Spawns through the addon only and resolves with the run's receipt. */
function spawnNativeToEnd(options) {
  const native = require('../binding.js');
  return new Promise((resolve, reject) => {
    let handle;
    try {
      // The addon's one callback shape (src/lib.rs): (kind, chunk, message, settled).
      handle = native.spawnNative(JSON.stringify(options), (kind, chunk, message, settled) => {
        if (kind === native.EventKind.Finished) resolve({ receipt: settled.receipt, handle });
        else if (kind === native.EventKind.Failed) reject(Object.assign(new Error(settled.message), { code: settled.code }));
      });
    } catch (error) {
      reject(error);
    }
  });
}

// The timeout only turns a missing launcher deadline into a failure instead
// of a 30 s wait; it is not what ends the run.
test('spawnNative with deadlineMs and no JS timer: the launcher stops the run, reason "deadline"', { timeout: 20_000 }, async () => {
  const options = {
    command: ['/usr/bin/sleep', '30'],
    policy: readOnly(),
    // Long enough for bwrap to exec sleep on a loaded machine: SIGTERM must find sleep.
    deadlineMs: 2000,
    stop: { graceMs: 500, forceMs: 1000 },
  };
  // Nothing below stops the run: only the launcher's own timer can end the
  // 30 s program before node:test's own timeout.
  const { receipt } = await spawnNativeToEnd(options);
  assert.equal(receipt.stop.reason, 'deadline', JSON.stringify(receipt.stop));
  assert.equal(receipt.stop.gracefulStopAttempted, true);
  assert.equal(receipt.stop.containmentConfirmed, true);
  assert.equal(receipt.outcome.signal ?? null, null, JSON.stringify(receipt.outcome));
  assert.equal(receipt.outcome.exitCode, 128 + 15, 'the ladder\'s SIGTERM ended sleep');
});

test('spawnNative refuses a deadlineMs outside 1..2^31-1 with ERR_CORDON_INVALID_OPTIONS', () => {
  const native = require('../binding.js');
  for (const deadlineMs of [0, 2 ** 31, 1.5, '100']) {
    const json = JSON.stringify({ command: ['/usr/bin/true'], policy: readOnly(), deadlineMs });
    assert.throws(() => native.spawnNative(json, () => {}), (error) => {
      assert.equal(error.code, 'ERR_CORDON_INVALID_OPTIONS', `${deadlineMs}: ${error.message}`);
      assert.match(error.message, /options\.deadlineMs/);
      return true;
    });
  }
});

// A deadline armed on a running execution (what a pooled run's take() does):
// the native handle's stopAfter, again with no JavaScript timer anywhere.
test('stopAfter on a running native execution: the launcher stops it, reason "deadline"', { timeout: 20_000 }, async () => {
  const native = require('../binding.js');
  const options = { command: ['/usr/bin/sleep', '30'], policy: readOnly(), stop: { graceMs: 500, forceMs: 1000 } };
  let handle;
  const finished = new Promise((resolve, reject) => {
    handle = native.spawnNative(JSON.stringify(options), (kind, chunk, message, settled) => {
      if (kind === native.EventKind.Finished) resolve(settled.receipt);
      else if (kind === native.EventKind.Failed) reject(Object.assign(new Error(settled.message), { code: settled.code }));
    });
  });
  for (const ms of [0, 2 ** 31, -1]) {
    assert.throws(() => handle.stopAfter(ms), { code: 'ERR_CORDON_INVALID_OPTIONS' }, String(ms));
  }
  handle.stopAfter(2000); // time for bwrap to exec sleep, on a loaded machine too
  const receipt = await finished;
  assert.equal(receipt.stop.reason, 'deadline', JSON.stringify(receipt.stop));
  assert.equal(receipt.outcome.exitCode, 128 + 15, 'the ladder\'s SIGTERM ended sleep');
  handle.stopAfter(300); // after the end: a no-op, no throw
});
