'use strict';

// bin/cordon.js, the `cordon` npm bin: execs the native CLI with inherited
// stdio, passes SIGINT, SIGTERM and SIGHUP on (so `cordon run` runs its stop
// ladder) and exits with the native status.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { spawn, spawnSync } = require('node:child_process');
const path = require('node:path');

const SHIM = path.join(__dirname, '..', 'bin', 'cordon.js');
const READY_THEN_TERM_EXITS_7 = "trap 'exit 7' TERM; echo ready >&3; while :; do /usr/bin/sleep 0.05; done";

test('the shim relays stdin/stdout to fd 3 and exits with the program status', () => {
  const run = spawnSync(process.execPath, [SHIM, 'run', '--', '/bin/sh', '-c', '/bin/cat <&3 >&3; exit 9'], { input: 'round trip\n', encoding: 'utf8' });
  assert.equal(run.stdout, 'round trip\n');
  assert.equal(run.status, 9, run.stderr);
});

for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) {
  test(`${signal} to the shim reaches \`cordon run\`, whose stop ladder lets the program exit gracefully`, async (t) => {
    // Not forwarded, the signal would kill the shim (status null) and leave
    // `cordon run` and the program running; forwarded, the program's TERM
    // trap runs and its status 7 comes back through both.
    // Its own process group, so a failure can still stop whatever the shim left running.
    const child = spawn(process.execPath, [SHIM, 'run', '--grace-ms', '5000', '--', '/bin/sh', '-c', READY_THEN_TERM_EXITS_7], { stdio: ['pipe', 'pipe', 'inherit'], detached: true });
    t.after(() => { try { process.kill(-child.pid, 'SIGTERM'); } catch { /* all gone */ } });
    let out = '';
    await new Promise((resolve, reject) => {
      child.stdout.on('data', (chunk) => {
        out += chunk;
        if (out === 'ready\n') resolve();
      });
      child.on('exit', () => reject(new Error(`exited before ready: ${out}`)));
    });
    child.kill(signal);
    const [code, killedBy] = await new Promise((resolve) => child.on('exit', (...args) => resolve(args)));
    assert.deepEqual([code, killedBy], [7, null]);
  });
}

test('an unknown subcommand is a usage error (status 2) naming both commands', () => {
  const run = spawnSync(process.execPath, [SHIM, 'frobnicate'], { encoding: 'utf8' });
  assert.equal(run.status, 2);
  assert.match(run.stderr, /cordon doctor/);
  assert.match(run.stderr, /cordon run/);
});
