'use strict';

// createCodeMode and run() refuse bad options with a stable code, before any
// sandbox starts.

const test = require('node:test');
const assert = require('node:assert/strict');
const { createCodeMode } = require('..');

const ping = { name: 'ping', description: 'Ping', effect: 'read', inputSchema: { type: 'object' }, handler: () => 'pong' };

test('createCodeMode refuses unknown options, bad callbacks, runner and admission settings', () => {
  const cases = [
    [undefined, 'ERR_CORDON_INVALID_OPTIONS'],
    [{ tools: [ping], tool: [] }, 'ERR_CORDON_INVALID_OPTIONS'],
    [{ tools: [ping], onEvent: 'log' }, 'ERR_CORDON_INVALID_OPTIONS'],
    [{ tools: [ping], runner: { path: 'relative/cordon-runner' } }, 'ERR_CORDON_INVALID_OPTIONS'],
    [{ tools: [ping], runner: { stop: { graceMs: -1, forceMs: 0 } } }, 'ERR_CORDON_INVALID_OPTIONS'],
    [{ tools: [ping], runner: { args: [] } }, 'ERR_CORDON_INVALID_OPTIONS'],
    [{ tools: [ping], admission: { maxConcurrent: 0 } }, 'ERR_CORDON_INVALID_OPTIONS'],
    [{ tools: [ping], limits: { toolCalls: 1.5 } }, 'ERR_CORDON_INVALID_LIMITS'],
    [{ tools: [{ ...ping, name: '' }] }, 'ERR_CORDON_INVALID_TOOL'],
  ];
  for (const [options, code] of cases) assert.throws(() => createCodeMode(options), { code }, JSON.stringify(options));
});

test('run() refuses non-string code, unknown options, bad ids, modes and signals with ERR_CORDON_INVALID_OPTIONS', async () => {
  const codeMode = createCodeMode({ tools: [ping] });
  const bad = [
    [42, {}],
    ['return 1', { timeout: 5 }],
    ['return 1', { executionId: 'has space' }],
    ['return 1', { executionId: 'x'.repeat(129) }],
    ['return 1', { parentId: 'a/b' }],
    ['return 1', { mode: 'admin' }],
    ['return 1', { signal: { aborted: false } }],
    ['return 1', null],
  ];
  for (const [code, options] of bad) {
    await assert.rejects(codeMode.run(code, options), { code: 'ERR_CORDON_INVALID_OPTIONS' }, JSON.stringify([code, options]));
  }
  assert.equal(codeMode.stats().active, 0, 'a refused run never takes a slot');
});

test('declarations() and description() refuse non-object options, unknown keys and bad modes with ERR_CORDON_INVALID_OPTIONS', () => {
  const codeMode = createCodeMode({ tools: [ping] });
  for (const method of ['declarations', 'description']) {
    for (const options of [null, 'inspect', [], { mood: 'inspect' }, { mode: 'admin' }]) {
      assert.throws(() => codeMode[method](options), { code: 'ERR_CORDON_INVALID_OPTIONS' }, `${method}(${JSON.stringify(options)})`);
    }
    assert.equal(codeMode[method](), codeMode[method]({}));
    assert.equal(codeMode[method]({ mode: 'execute' }), codeMode[method]());
  }
});

test('the host exposes its frozen limits and an idle admission state', () => {
  const codeMode = createCodeMode({ tools: [ping], limits: { timeoutMs: 1234 } });
  assert.equal(codeMode.limits.timeoutMs, 1234);
  assert.ok(Object.isFrozen(codeMode.limits) && Object.isFrozen(codeMode));
  assert.deepEqual(codeMode.stats(), { active: 0, queued: 0, maxConcurrent: 4, maxQueued: 16, queueTimeoutMs: 30000 });
});
