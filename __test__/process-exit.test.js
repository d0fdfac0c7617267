'use strict';

// A provider process exits when its own work is done: nothing cordon keeps in
// the background (validator threads, the TypeScript worker, idle pooled
// sandboxes) may hold Node's event loop. Each test runs a real provider script
// in a child Node and measures from the line it prints after its last await to
// the child's exit. The bound (1 s) is the issue's: the failures it guards
// against are 10 s (validator threads' idle timer) and for ever (a pool).

const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { ownControlRootsOf } = require('./spawn-support');

const FIXTURES = path.join(__dirname, 'fixtures', 'exit-timing');
/** How long after its last await the provider may take to exit. */
const EXIT_WITHIN_MS = 1000;
/** A child still alive this long after its last await is killed (the test then fails). */
const GIVE_UP_MS = 30_000;

/** Runs `script`; resolves {line, exitedAfterMs, code, stderr, pid} (exit measured from the printed line). */
function runProvider(script) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(FIXTURES, script)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let printedAt = null;
    let killer = null;
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      if (printedAt === null && stdout.includes('\n')) {
        printedAt = performance.now();
        killer = setTimeout(() => child.kill('SIGKILL'), GIVE_UP_MS);
      }
    });
    child.stderr.on('data', (chunk) => { stderr += chunk; });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(killer);
      const exitedAfterMs = printedAt === null ? null : performance.now() - printedAt;
      resolve({ line: stdout.split('\n')[0], exitedAfterMs, code, signal, stderr, pid: child.pid });
    });
  });
}

test('a script that used every off-thread validation path exits within 1 s of its last await', async () => {
  const out = await runProvider('every-validator-path.js');
  assert.equal(out.code, 0, out.stderr);
  assert.equal(JSON.parse(out.line).length, 200 * 1024);
  assert.ok(out.exitedAfterMs < EXIT_WITHIN_MS, `exited ${Math.round(out.exitedAfterMs)} ms after its last await`);
});

test('a script whose Code Mode pool was never closed exits within 1 s, its idle sandboxes ended', async () => {
  const out = await runProvider('pool-never-closed.js');
  assert.equal(out.code, 0, out.stderr);
  const printed = JSON.parse(out.line);
  assert.equal(printed.result, 1);
  assert.ok(printed.stats.spawned >= 1, 'the pool had spawned sandboxes');
  assert.ok(out.exitedAfterMs < EXIT_WITHIN_MS, `exited ${Math.round(out.exitedAfterMs)} ms after its last await`);
  assert.deepEqual(ownControlRootsOf(out.pid), [], 'the pool closed itself before exit: no control root left');
});
