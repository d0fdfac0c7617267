'use strict';

// `cordon doctor`: the JS function and the command, over the launcher's own
// host checks.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const cordon = require('../..');
const h = require('./harness');

const CLI = path.join(__dirname, '..', '..', 'bin', 'cordon.js');
const skip = h.skipReason();

test('doctor() reports every check, and on this host every required one passes', { skip: skip ?? false }, () => {
  const report = cordon.doctor({ runnerPath: '/bin/true' });
  const names = report.checks.map((c) => c.name);
  assert.deepEqual(names, [
    'bubblewrap', 'user namespaces (sysctls)', 'user namespaces (trial sandbox)',
    'sandbox uid unused by the host', 'seccomp', 'control-root base', 'ptrace scope (Yama)', "sandbox sockets' namespace",
    'descriptor refusal (SO_PASSRIGHTS)', 'cgroups (memory, pids)',
    'subordinate ids (non-root provider)', 'delegated cgroup (non-root provider)', 'runner', 'mediated network',
  ]);
  for (const check of report.checks.filter((c) => c.importance === 'required')) {
    assert.equal(check.ok, true, `${check.name}: ${check.detail}`);
  }
  assert.equal(report.ok, true);
  assert.ok(Object.isFrozen(report) && Object.isFrozen(report.checks));
  // Round 16b, R16b-2: this host lets the provider make the pair maker.
  assert.equal(report.checks.find((c) => c.name === "sandbox sockets' namespace").ok, true);
  // W26-1: whether this kernel refuses passed descriptors is what the check says.
  assert.equal(report.checks.find((c) => c.name === 'descriptor refusal (SO_PASSRIGHTS)').ok, h.kernelRefusesPassedFds());
});

test("doctor() reports the host's Yama ptrace_scope and what it means for /proc/<pid>/mem inside a sandbox", { skip: skip ?? false }, () => {
  const check = cordon.doctor({ runnerPath: '/bin/true' }).checks.find((c) => c.name === 'ptrace scope (Yama)');
  assert.equal(check.importance, 'optional');
  let scope = null;
  try {
    scope = require('node:fs').readFileSync('/proc/sys/kernel/yama/ptrace_scope', 'utf8').trim();
  } catch {
    // no Yama in this kernel
  }
  if (scope === null) assert.match(check.detail, /^no Yama/);
  else assert.ok(check.detail.startsWith(scope), check.detail);
  assert.equal(check.ok, scope !== null && scope !== '0');
  if (!check.ok) assert.match(check.fix, /kernel\.yama\.ptrace_scope/);
  assert.match(check.detail, /never beyond the sandbox/);
});

const rootOnly = process.geteuid() === 0 ? false : 'needs root: only a root provider gives sandboxes their own uid';
test('doctor() fails, with the fix, while a host process runs as the sandbox uid', { skip: skip ?? rootOnly }, async () => {
  const sentinel = h.sandboxUidSentinel();
  try {
    await new Promise((resolve) => sentinel.once('spawn', resolve));
    const report = cordon.doctor({ runnerPath: '/bin/true' });
    const check = report.checks.find((c) => c.name === 'sandbox uid unused by the host');
    assert.equal(check.ok, false, check.detail);
    assert.equal(report.ok, false);
    assert.match(check.detail, new RegExp(`uid ${h.SANDBOX_UID} .*\\b${sentinel.pid} \\(sleep\\)`));
    assert.match(check.fix, /reserved for cordon's sandboxes/);
  } finally {
    sentinel.kill('SIGKILL');
    await new Promise((resolve) => sentinel.once('exit', resolve));
  }
});

test('doctor() names the exact fix for a missing bwrap and a missing runner', () => {
  const report = cordon.doctor({ bwrapPath: '/nonexistent/bwrap', runnerPath: '/nonexistent/cordon-runner' });
  assert.equal(report.ok, false);
  const byName = Object.fromEntries(report.checks.map((c) => [c.name, c]));
  assert.equal(byName.bubblewrap.ok, false);
  assert.match(byName.bubblewrap.fix, /apt-get install bubblewrap/);
  assert.equal(byName.runner.ok, false);
  assert.match(byName.runner.fix, /cargo build --release -p cordon-runner|npm rebuild/);
});

test('`cordon doctor` prints each check and exits 0 when the host is usable', { skip: skip ?? false }, () => {
  const run = spawnSync(process.execPath, [CLI, 'doctor'], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  assert.match(run.stdout, /^ok +bubblewrap: /m);
  assert.match(run.stdout, /cordon can launch sandboxes on this host\./);
});

test('`cordon doctor` exits 1 with a fix line when a required check fails', () => {
  const run = spawnSync(process.execPath, [CLI, 'doctor', '--bwrap', '/nonexistent/bwrap'], { encoding: 'utf8' });
  assert.equal(run.status, 1, run.stderr);
  assert.match(run.stdout, /^FAIL {2}bubblewrap: /m);
  assert.match(run.stdout, /^ {6}fix: apt-get install bubblewrap/m);
});

test('`cordon doctor --json` is the report as JSON; unknown commands exit 2', () => {
  const json = spawnSync(process.execPath, [CLI, 'doctor', '--json', '--bwrap', '/nonexistent/bwrap'], { encoding: 'utf8' });
  const report = JSON.parse(json.stdout);
  assert.equal(report.ok, false);
  assert.equal(report.checks[0].name, 'bubblewrap');
  const bad = spawnSync(process.execPath, [CLI, 'frobnicate'], { encoding: 'utf8' });
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /usage/);
  assert.match(bad.stderr, /cordon doctor/);
});

test('doctor() and `cordon doctor --json` are one report: the same checks and the same verdict', { skip: skip ?? false }, () => {
  // Each defaults to the runner and relay it would launch; name them so the
  // two look at the same files.
  const js = cordon.doctor({ runnerPath: cordon.runnerPath });
  const run = spawnSync(process.execPath, [CLI, 'doctor', '--json', '--runner', cordon.runnerPath], { encoding: 'utf8' });
  const cli = JSON.parse(run.stdout);
  assert.deepEqual(cli.checks.map((c) => [c.name, c.ok, c.importance]), js.checks.map((c) => [c.name, c.ok, c.importance]));
  assert.equal(cli.ok, js.ok);
  assert.equal(run.status, js.ok ? 0 : 1);
  assert.deepEqual(cordon.doctor().checks.map((c) => c.name), js.checks.map((c) => c.name), 'doctor() checks the runner by default, as the CLI does');
  // A failed required check fails both verdicts.
  const broken = cordon.doctor({ runnerPath: '/nonexistent/cordon-runner' });
  const brokenCli = spawnSync(process.execPath, [CLI, 'doctor', '--json', '--runner', '/nonexistent/cordon-runner'], { encoding: 'utf8' });
  assert.equal(broken.ok, false);
  assert.equal(JSON.parse(brokenCli.stdout).ok, false);
  assert.equal(brokenCli.status, 1);
});

test('doctor() fails the control-root base check, with the way to recover, exactly when launch refuses a base another uid planted', { skip: skip ?? rootOnly }, () => {
  // A uid with no base yet: a local user (here the sandbox uid) creates
  // <base>/cordon-<uid> first, world-writable. Launch refuses it; doctor must
  // say so (it used to report the host fine), then pass once it is removed.
  const uid = 40000 + (process.pid % 20000);
  const base = `${h.controlRootBase().replace(/cordon-\d+$/, '')}cordon-${uid}`;
  if (require('node:fs').existsSync(base)) return;
  const { node, pkg } = require('./nobody-provider').nobodyProvider();
  const asUid = () => {
    const run = spawnSync(node, ['-e', `
      const cordon = require(${JSON.stringify(pkg)});
      const check = cordon.doctor({ runnerPath: '/bin/true' }).checks.find((c) => c.name === 'control-root base');
      let launch = null;
      try {
        // This uid has no subordinate ids: the run shares its identity (by
        // the policy's explicit choice), so only the base decides the launch.
        const base = structuredClone(cordon.readOnly());
        const policy = { ...base, process: { ...base.process, identity: 'shared-with-provider' } };
        const ex = cordon.spawnIsolated(['/bin/true'], { policy });
        ex.stderr.resume(); ex.protocol.resume();
        ex.wait().then(() => { launch = 'ran'; }, (e) => { launch = e.message; }).finally(() => console.log(JSON.stringify({ check, launch })));
      } catch (e) { console.log(JSON.stringify({ check, launch: e.message })); }
    `], { uid, gid: uid, cwd: '/', encoding: 'utf8', timeout: 60_000, env: { PATH: process.env.PATH } });
    assert.equal(run.status, 0, run.stderr);
    return JSON.parse(run.stdout);
  };
  const fs = require('node:fs');
  fs.mkdirSync(base, { mode: 0o777 });
  fs.chmodSync(base, 0o777);
  fs.chownSync(base, h.SANDBOX_UID, h.SANDBOX_UID);
  try {
    const planted = asUid();
    assert.match(planted.launch, /not a private directory owned by uid/, 'launch refuses the planted base');
    assert.equal(planted.check.ok, false, `doctor agrees: ${planted.check.detail}`);
    assert.equal(planted.check.importance, 'required');
    assert.match(planted.check.detail, new RegExp(`${base} is not a private directory owned by uid ${uid}`));
    assert.match(planted.check.fix, new RegExp(`rm -rf -- ${base}`));
    assert.match(planted.check.fix, /TMPDIR/);
    fs.rmSync(base, { recursive: true, force: true });
    const recovered = asUid();
    assert.equal(recovered.check.ok, true, recovered.check.detail);
    assert.equal(recovered.launch, 'ran');
  } finally {
    fs.rmSync(base, { recursive: true, force: true });
  }
});

test('a non-root provider in v1 cgroups made writable for it: doctor says its runs get cgroups, and a run gets one, its program inside', { skip: skip ?? rootOnly }, () => {
  const fs = require('node:fs');
  const hierarchies = ['memory', 'pids'].map((name) => `/sys/fs/cgroup/${name}`);
  // This host's kind (hybrid, memory and pids on v1): what CI runs on.
  assert.ok(hierarchies.every((dir) => fs.existsSync(`${dir}/cgroup.procs`)), 'v1 memory and pids hierarchies');
  const leaf = `cordon-nobody-v1-${process.pid}`;
  const dirs = hierarchies.map((dir) => `${dir}/${leaf}`);
  const { node, pkg } = require('./nobody-provider').nobodyProvider();
  const script = `
    const cordon = require(${JSON.stringify(pkg)});
    const check = cordon.doctor().checks.find((c) => c.name === 'delegated cgroup (non-root provider)');
    // Alive for a second: a program that has already exited cannot be observed ("not-observed"; seen under load).
    const ex = cordon.spawnIsolated(['/bin/sh', '-c', 'cat /proc/self/cgroup; sleep 1'], { policy: cordon.readOnly() });
    let out = ''; ex.stderr.on('data', (d) => { out += d; }); ex.protocol.resume();
    ex.wait().then((r) => console.log(JSON.stringify({ check, out, planned: r.receipt.confinement.planned.cgroup, observed: r.receipt.confinement.observed.cgroup, code: r.returncode })),
      (e) => console.log(JSON.stringify({ check, error: e.message })));
  `;
  for (const dir of dirs) {
    fs.mkdirSync(dir);
    fs.chownSync(dir, 65534, 65534);
    for (const file of fs.readdirSync(dir)) fs.chownSync(`${dir}/${file}`, 65534, 65534);
  }
  try {
    // The shell moves itself into both leaves, then becomes uid 65534.
    const join = dirs.map((dir) => `echo $$ > ${dir}/cgroup.procs`).join(' && ');
    const run = spawnSync('/bin/sh', ['-c', `${join} && exec setpriv --reuid 65534 --regid 65534 --clear-groups "$0" -e "$1"`, node, script], { cwd: '/', encoding: 'utf8', timeout: 60_000, env: { PATH: process.env.PATH } });
    assert.equal(run.status, 0, run.stderr);
    const report = JSON.parse(run.stdout);
    assert.equal(report.check.ok, true, report.check.detail);
    assert.match(report.check.detail, /writable v1 hierarchies .* run cgroups go under them/);
    assert.equal(report.error, undefined, report.error);
    assert.equal(report.code, 0, report.out);
    assert.equal(report.planned.version, 'v1');
    // Observed from outside: the program is in the run's own leaves, below
    // the provider's (inside, its cgroup namespace is rooted there: "/").
    assert.ok(report.observed, `observed: ${JSON.stringify(report)}`);
    const membership = report.observed.membership.join('\n');
    for (const name of ['memory', 'pids']) {
      assert.match(membership, new RegExp(`:${name}:/${leaf}/cordon/[^/\\n]+$`, 'm'), membership);
    }
    assert.match(report.out, /^\d+:pids:\/$/m, report.out);
  } finally {
    for (const dir of dirs) {
      fs.rmSync(`${dir}/cordon`, { recursive: false, force: true, maxRetries: 0 });
      try { fs.rmdirSync(`${dir}/cordon`); } catch {}
      try { fs.rmdirSync(dir); } catch {}
    }
  }
});
