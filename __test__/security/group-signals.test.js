'use strict';

// A signal to the provider's process group (a Ctrl-C in its terminal, `kill
// -- -<pgid>`) is the provider's to act on. Nothing cordon starts for a run
// may die of it: not bwrap and the sandbox (black-box round on the start,
// F6), and not what a launch runs before bwrap (black-box round on the
// holder, F1): the first launch's bwrap probe, and a non-root provider's
// newuidmap/newgidmap, which a SIGINT storm used to kill, failing the launch
// as "user namespaces look disabled" or "identity unavailable". Run as root
// and again by the non-root pass (scripts/test.js, uid 65534 with
// subordinate ids: the map helpers run on every launch there).

const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { spawn } = require('node:child_process');

const pkg = path.join(__dirname, '..', '..');

// A provider in a process group of its own that ignores SIGINT and SIGHUP
// (as one that shuts down on its own terms would), launches its first runs
// while the group is flooded, and reports each run's outcome.
const PROVIDER = `
  const { spawnIsolated, readOnly } = require(${JSON.stringify(pkg)});
  process.on('SIGINT', () => {});
  process.on('SIGHUP', () => {});
  process.stdout.write('ready\\n');
  process.stdin.once('data', async () => {
    const results = [];
    for (let i = 0; i < 4; i += 1) {
      try {
        const run = spawnIsolated(['/bin/sh', '-c', 'sleep 0.05; echo done'], { policy: readOnly() });
        let out = '';
        run.stderr.on('data', (chunk) => { out += chunk; });
        run.protocol.resume();
        const { returncode } = await run.wait();
        results.push({ returncode, out });
      } catch (error) {
        results.push({ code: error.code, message: String(error.message).slice(0, 300) });
      }
    }
    process.stdout.write(JSON.stringify(results) + '\\n');
    process.exit(0);
  });`;

test('a SIGINT/SIGHUP storm at the provider\'s process group fails no launch, the first one included', async (t) => {
  const child = spawn(process.execPath, ['-e', PROVIDER], { stdio: ['pipe', 'pipe', 'inherit'], detached: true });
  t.after(() => { try { process.kill(-child.pid, 'SIGKILL'); } catch { /* all gone */ } });
  let out = '';
  const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  await new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk) => { out += chunk; if (out.includes('ready\n')) resolve(); });
    child.on('exit', () => reject(new Error(`the provider exited before it was ready: ${out}`)));
  });
  let sent = 0;
  const storm = setInterval(() => {
    try {
      process.kill(-child.pid, 'SIGINT');
      process.kill(-child.pid, 'SIGHUP');
      sent += 2;
    } catch { /* the group is gone */ }
  }, 1);
  child.stdin.write('go\n');
  const code = await exited;
  clearInterval(storm);
  assert.ok(sent > 10, `the storm sent ${sent} signals`);
  assert.equal(code, 0, out);
  const results = JSON.parse(out.trim().split('\n').pop());
  assert.deepEqual(results, Array(4).fill({ returncode: 0, out: 'done\n' }));
});
