'use strict';

// Limits: defaults, validation, and how they reach the runner.

const test = require('node:test');
const assert = require('node:assert/strict');
const { DEFAULT_LIMITS, resolveLimits, runnerArgs, executeLimits, checkEffectiveLimits } = require('../lib/code-mode/limits');

test('the defaults are the documented safe values', () => {
  assert.deepEqual({ ...resolveLimits(undefined) }, {
    sourceBytes: 65536, toolCalls: 50, toolResultBytes: 1048576, cumulativeResultBytes: 4194304,
    resultBytes: 524288, timeoutMs: 5000, memoryBytes: 67108864, maxOutstandingCalls: 8, logBytes: 65536, maxTimers: 1000,
  });
  assert.ok(Object.isFrozen(resolveLimits({ timeoutMs: 100 })));
});

test('a limit that is unknown, not an integer, or out of range is refused with ERR_CORDON_INVALID_LIMITS', () => {
  for (const bad of [{ timeoutMs: 0 }, { timeoutMs: 1.5 }, { timeoutMs: '5000' }, { toolCalls: -1 }, { memoryBytes: 1024 },
    { sourceBytes: Number.MAX_SAFE_INTEGER }, { timeout: 5 }, { maxOutstandingCalls: 0 }, { maxOutstandingCalls: 9 },
    { maxOutstandingCalls: 2.5 }, { logBytes: 0 }, { maxTimers: 0 }, { maxTimers: 100001 }, null, [], 'x']) {
    assert.throws(() => resolveLimits(bad), { code: 'ERR_CORDON_INVALID_LIMITS' }, JSON.stringify(bad));
  }
});

test('cumulativeResultBytes may not be smaller than toolResultBytes', () => {
  assert.throws(() => resolveLimits({ toolResultBytes: 2048, cumulativeResultBytes: 1024 }),
    (error) => error.code === 'ERR_CORDON_INVALID_LIMITS' && /at least limits.toolResultBytes/.test(error.message));
  assert.equal(resolveLimits({ toolResultBytes: 1024, cumulativeResultBytes: 1024 }).cumulativeResultBytes, 1024);
});

test('the runner gets its share of the limits as CLI ceilings and as execute limits', () => {
  const limits = resolveLimits({ toolCalls: 3, timeoutMs: 700, resultBytes: 4096, memoryBytes: 32 * 1024 * 1024 });
  const args = runnerArgs(limits, 99999);
  const flag = (name) => args[args.indexOf(name) + 1];
  assert.equal(flag('--timeout-ms'), '700');
  assert.equal(flag('--max-calls'), '3');
  assert.equal(flag('--max-result-bytes'), '4096');
  assert.equal(flag('--memory-bytes'), String(32 * 1024 * 1024));
  assert.equal(flag('--max-frame-bytes'), '99999');
  assert.deepEqual(executeLimits(limits), { maxToolCalls: 3, maxResultBytes: 4096, timeoutMs: 700 });
  // --max-requests only with a network allowlist (the runner then compiles fetch.js before
  // execute), and never for a reference runner, which exits 2 on a flag §2 does not list.
  assert.equal(args.includes('--max-requests'), false);
  const withNetwork = runnerArgs(limits, 99999, 'cordon', { maxRequests: 7 });
  assert.equal(withNetwork[withNetwork.indexOf('--max-requests') + 1], '7');
  assert.equal(runnerArgs(limits, 99999, 'code-bridge-v1', { maxRequests: 7 }).includes('--max-requests'), false);
});

test('a ready may lower limits but never raise them', () => {
  const asked = executeLimits(DEFAULT_LIMITS);
  assert.equal(checkEffectiveLimits({ ...asked, maxToolCalls: 10 }, asked), null);
  assert.match(checkEffectiveLimits({ ...asked, timeoutMs: asked.timeoutMs + 1 }, asked), /timeoutMs 5001 exceeds the requested 5000/);
  assert.match(checkEffectiveLimits({ ...asked, maxResultBytes: 'big' }, asked), /maxResultBytes is not an integer/);
  assert.match(checkEffectiveLimits({ maxToolCalls: 1 }, asked), /maxResultBytes/);
  assert.match(checkEffectiveLimits(null, asked), /not an object/);
});
