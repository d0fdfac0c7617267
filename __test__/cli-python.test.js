'use strict';

// examples/python: a Python Code Mode host driving cordon-runner through
// `cordon run` with subprocess — the real CLI, runner and sandbox.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const EXAMPLE = path.join(__dirname, '..', 'examples', 'python', 'code_mode.py');

function example(...args) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-python-'));
  const receipt = path.join(dir, 'receipt.json');
  try {
    const run = spawnSync('python3', [EXAMPLE, '--receipt', receipt, ...args], { encoding: 'utf8', timeout: 30_000 });
    return { status: run.status, stderr: run.stderr, out: run.stdout ? JSON.parse(run.stdout) : null, receiptExists: fs.existsSync(receipt) };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

test('the Python host runs a Code Mode round trip: execute, two tool calls, the result, a receipt', () => {
  const { status, stderr, out, receiptExists } = example();
  assert.equal(status, 0, stderr);
  assert.deepEqual(out.result, { city: 'Lyon', days: 3, warmest: { day: 2, high: 22 } });
  assert.equal(out.toolCalls, 2);
  assert.equal(out.exitStatus, 0);
  assert.deepEqual(out.receipt, { outcome: { status: 'exited', exitCode: 0, signal: null }, network: 'none' });
  assert.equal(receiptExists, true);
});

test('a Python tool that raises is a catchable tool failure inside the sandboxed code', () => {
  const { status, out } = example('--code', "try { await tools['weather.city']({ name: 'Atlantis' }); } catch (e) { return e.message; }");
  assert.equal(status, 0);
  assert.match(out.result, /^tool failed: 'Atlantis'/);
});

test('a failing program reaches Python as ok:false with its kind, and the example exits 1', () => {
  const { status, out } = example('--code', 'throw new Error("model bug")');
  assert.equal(status, 1);
  assert.equal(out.ok, false);
  assert.equal(out.error.kind, 'javascript');
  assert.match(out.error.message, /model bug/);
  assert.equal(out.exitStatus, 0, 'the runner reported the failure in a terminal frame and exited 0');
});
