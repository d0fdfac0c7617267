'use strict';

// `npm run bench` cannot rot: its --smoke mode (tiny counts) runs every
// section end to end and must print the table and write the results file.
// Timings are never asserted; only that each section produced its rows.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFile } = require('node:child_process');
const { promisify } = require('node:util');
const { nonRootSkipReason } = require('./security/provider-process');

const SECTIONS = ['1 cold run', '2 pooled run', '3 tool call (', '3 tool call rate', '3 8 calls', '4 relay', '5 concurrency', '6 idle RSS', '6 Node memory', '7 TypeScript strip', '7 TypeScript run', '8 network throughput', '8 network connect', '8 network cold start', '8 engine provider threads', '8 engine provider fds', '8 engine RSS per idle stream', '8 engine provider CPU', '8 engine stop -> settled', '11 timers: ', '11 timers per iteration', '12 fetch 1 KiB loopback',
  // Issue 22: remote (a `cordon host` child on a Unix socket and on TLS 127.0.0.1) beside local.
  '13 remote cold Code Mode run', '13 remote pooled Code Mode run', '13 remote run with', '13 remote tool call, timed inside', '13 remote host memory per idle session', '13 remote sessions/s (/bin/true), sequential', '13 remote sessions/s (/bin/true), 4 at a time',
  // Sessions (issue 21) need a root provider; the bench skips them, loudly, otherwise.
  ...(process.geteuid() === 0 ? ['9 session command', '9 session create', '9 writeFile 4 KiB', '9 readFile 4 MiB'] : []),
  // Non-root sessions also start a uid-65534 provider, which needs its subordinate range (.ci/run adds one).
  ...(nonRootSkipReason() === null ? ['14 non-root session exec', '14 non-root session writeFile 4 KiB', '14 non-root session readFile 4 KiB', '14 non-root session readFile 4 KiB, batch mean'] : [])];

test('bench/run.js --smoke prints the table and writes the results file', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-bench-smoke-'));
  const out = path.join(dir, 'results.json');
  try {
    const { stdout } = await promisify(execFile)(process.execPath, ['--expose-gc', path.join(__dirname, '..', 'bench', 'run.js'), '--smoke', '--out', out], { timeout: 120000 });
    assert.match(stdout, /section\s+contestant\s+unit\s+n\s+median\s+p90\s+p99\s+x baseline/);
    for (const section of SECTIONS) assert.ok(stdout.includes(section), `the table has a "${section}" row`);
    assert.match(stdout, /goals \(issues 6, 12 and 13\):/);
    const report = JSON.parse(fs.readFileSync(out, 'utf8'));
    assert.equal(report.smoke, true);
    assert.deepEqual(report.node, { version: process.version, v8: process.versions.v8, execPath: process.execPath }, 'the Node that ran it');
    assert.ok(stdout.includes(`node ${process.version}`), 'the table names the Node version');
    assert.ok(report.rows.some((r) => r.section.startsWith('3 Promise.all 8 x')), 'the Promise.all row of issue 12 is there');
    for (const section of SECTIONS) {
      const rows = report.rows.filter((r) => r.section.startsWith(section));
      assert.ok(rows.length >= 2, `results.json has contestants for "${section}"`);
      for (const row of rows) {
        assert.ok(row.n >= 1 && Number.isFinite(row.median) && (row.ratio === null || Number.isFinite(row.ratio)), JSON.stringify(row));
      }
    }
    for (const section of ['10 Intl: spawn', '10 Intl: first Intl use', '10 Intl: sort', '10 Intl: idle runner RSS', '10 Intl: runner binary']) {
      assert.ok(report.rows.some((r) => r.section.startsWith(section)), `results.json has the "${section}" row`);
    }
    assert.equal(report.goals.length, 23);
    const evaluated = process.geteuid() === 0 ? report.goals : report.goals.filter((g) => !g.goal.includes('issue 21'));
    assert.ok(evaluated.every((g) => typeof g.met === 'boolean'), 'every goal was evaluated');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('bench/compare.js --smoke prints every row for two builds, and bench/timeline.js lines up the launcher\'s step stamps', async () => {
  const run = promisify(execFile);
  const bench = path.join(__dirname, '..', 'bench');
  const root = path.join(__dirname, '..');
  const { stdout } = await run(process.execPath, [path.join(bench, 'compare.js'), '--a', root, '--b', root, '--smoke'], { timeout: 180000 });
  for (const row of ['cold spawnIsolated(/bin/true) → wait()', 'cold run("return 1"), no pool', 'pooled run("return 1")', 'pooled run("return 1"), resultBeforeTeardown', 'tool call round trip', 'raw Node socketpair echo', 'raw bwrap /bin/true']) {
    const line = stdout.split('\n').find((l) => l.startsWith(`| ${row}`));
    assert.ok(line, `compare.js printed the "${row}" row`);
    assert.match(line, /\| \d+(\.\d+)? \|/, `the "${row}" row has a median: ${line}`);
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-timeline-smoke-'));
  try {
    const out = path.join(dir, 'timeline.json');
    await run(process.execPath, [path.join(bench, 'timeline.js'), '--runs', '1', '--no-strace', '--json', out], { timeout: 120000 });
    const { cold, pooled } = JSON.parse(fs.readFileSync(out, 'utf8'));
    const seen = (rows, step) => rows.find((r) => r.step === step)?.n === 1;
    // Launcher stamps (CORDON_STEP_TRACE) and this process's own, in one timeline.
    for (const step of ['launch.start', 'fork.exec_done', 'join.done', 'options.sent', 'bwrap.reaped', 'receipt.written', 'finished.emitted', 'js.run_resolved']) {
      assert.ok(seen(cold, step), `the cold timeline has "${step}"`);
    }
    for (const step of ['js.execute_written', 'js.first_chunk', 'bwrap.reaped', 'receipt.written', 'js.run_resolved']) {
      assert.ok(seen(pooled, step), `the pooled timeline has "${step}"`);
    }
    assert.ok(!seen(pooled, 'launch.start'), 'a pooled sandbox\'s preparation (before the take) is not counted in its run');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('bench/runner-ready.py times every frame for each runner given', async () => {
  const runner = require('../lib/platform-package').nativeExecutable('cordon-runner');
  const { stdout } = await promisify(execFile)('python3', [path.join(__dirname, '..', 'bench', 'runner-ready.py'), '--runs', '1', '--idle-ms', '10', runner, runner], { timeout: 60000 });
  for (const frame of ['v1', 'ext', 'ext+fetch']) {
    const rows = stdout.split('\n').filter((line) => line.includes(`| ${frame} |`));
    assert.equal(rows.length, 2, `two "${frame}" rows:\n${stdout}`);
  }
});

test('bench/early-p50.js prints p50 and p10 for each checkout and round', async () => {
  const root = path.join(__dirname, '..');
  const { stdout } = await promisify(execFile)(process.execPath, [path.join(root, 'bench', 'early-p50.js'), '--runs', '3', '--gap-ms', '1', '--rounds', '2', root, root], { timeout: 60000 });
  const rows = stdout.split('\n').filter((line) => /^\| \d \| /.test(line));
  assert.equal(rows.length, 4, stdout);
  for (const row of rows) assert.match(row, /\| \d+\.\d{3} \| \d+\.\d{3} \|$/, row);
});

test('bench/spawn-cost.js prints the blocked time, the fork step, faults and RSS for each checkout and round', async () => {
  const root = path.join(__dirname, '..');
  const { stdout } = await promisify(execFile)(process.execPath, [path.join(root, 'bench', 'spawn-cost.js'), '--runs', '2', '--gap-ms', '1', '--rounds', '2', root, root], { timeout: 60000 });
  const rows = stdout.split('\n').filter((line) => /^\| \d \| /.test(line));
  assert.equal(rows.length, 4, stdout);
  for (const row of rows) assert.match(row, /\| \d+\.\d{3} \| \d+\.\d{3} \| \d+ \| \d+ \|$/, row);
});

test('bench/spawn-cost.js --nobody runs the provider as uid 65534 with subordinate ids (the user namespace per run)', { skip: process.geteuid() !== 0 && 'needs root to start a uid-65534 provider' }, async () => {
  const root = path.join(__dirname, '..');
  const { stdout } = await promisify(execFile)(process.execPath, [path.join(root, 'bench', 'spawn-cost.js'), '--runs', '2', '--gap-ms', '1', '--rounds', '1', '--nobody', root], { timeout: 60000 });
  assert.match(stdout, /provider uid 65534 with subordinate ids/, stdout);
  const rows = stdout.split('\n').filter((line) => /^\| \d \| /.test(line));
  assert.equal(rows.length, 1, stdout);
  assert.match(rows[0], /\| \d+\.\d{3} \| \d+\.\d{3} \| \d+ \| \d+ \|$/, rows[0]);
});
