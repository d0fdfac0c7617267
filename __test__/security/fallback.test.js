'use strict';

// Confinement on a host without a usable cgroup, seen from a provider that
// is not root (uid 65534 cannot write any cgroup here): the default policy
// still launches, with seccomp and per-process rlimits and `cgroup: null` in
// the receipt; a policy with `treeLimits: "required"` refuses to launch with
// ERR_CORDON_CONFINEMENT_UNAVAILABLE.
//
// The provider runs as uid 65534 from a world-readable copy of the package
// (and of the running Node when that uid cannot execute it), so the test runs
// from any checkout location, a clone under a 0700 /root included.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const h = require('./harness');
const { nobodyProvider } = require('./nobody-provider');

function script(pkg) {
  return `
const c = require(${JSON.stringify(pkg)});
const base = c.readOnly();
const required = { ...structuredClone(base), resources: { ...base.resources, treeLimits: 'required' } };
let refused = null;
try { c.spawnIsolated(['/bin/true'], { policy: required }); } catch (e) { refused = e.code; }
const ex = c.spawnIsolated(['/bin/true'], { policy: base });
ex.stderr.resume(); ex.protocol.resume();
ex.wait().then((r) => process.stdout.write(JSON.stringify({ refused, returncode: r.returncode,
  confinement: r.receipt.confinement })));
`;
}

/** The first id of uid 65534's range in `file` (/etc/subuid or /etc/subgid), or null. */
function subordinateFirst(file) {
  const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  const line = text.split('\n').find((l) => l.startsWith('nobody:') || l.startsWith(`${h.NOBODY_UID}:`));
  return line ? Number(line.split(':')[1]) : null;
}

function skipReason() {
  const base = h.skipReason();
  if (base) return base;
  if (process.geteuid() !== 0) return 'needs root to run the provider as uid 65534 (a user with no cgroup)';
  if (subordinateFirst('/etc/subuid') === null || subordinateFirst('/etc/subgid') === null) {
    return 'uid 65534 has no subordinate range in /etc/subuid and /etc/subgid (.ci/run adds one)';
  }
  return null;
}

/** Runs `source` with `args` in a Node provider of uid 65534 (no cgroup). */
function runAsNobody(source, args = [], timeout = 30_000) {
  const { node } = nobodyProvider();
  return spawnSync(node, ['-e', source, ...args], {
    uid: h.NOBODY_UID, gid: h.NOBODY_UID, cwd: '/', encoding: 'utf8', timeout,
    env: { PATH: process.env.PATH, TMPDIR: '/tmp' },
  });
}

test('without a cgroup: defaults fall back to rlimits; treeLimits "required" refuses', { skip: skipReason() ?? false }, () => {
  const run = runAsNobody(script(nobodyProvider().pkg));
  // No skip here: a provider that cannot load the package is a failure.
  assert.equal(run.status, 0, `uid ${h.NOBODY_UID} provider failed: ${run.stderr}`);
  const result = JSON.parse(run.stdout);
  assert.equal(result.refused, 'ERR_CORDON_CONFINEMENT_UNAVAILABLE');
  assert.equal(result.returncode, 0);
  assert.equal(result.confinement.planned.cgroup, null);
  assert.equal(result.confinement.cgroupOutcome, null);
  assert.deepEqual(result.confinement.mismatches, []);
  assert.equal(result.confinement.planned.seccomp.profile, 'cordon-default-v5');
  const nproc = result.confinement.planned.rlimits.find((r) => r.name === 'NPROC');
  // The policy's 64 plus the zombie allowance (confinement.rs NPROC_ZOMBIE_ALLOWANCE).
  assert.equal(nproc.hard, 64 + 512, 'without a cgroup NPROC is the only process bound');
});

// One probe.c attack in a sandbox of a non-root provider (uid 65534, no
// cgroup): the script prints the sandbox's output and receipt as JSON.
function attackScript(pkg) {
  return `
const c = require(${JSON.stringify(pkg)});
const [argv, options] = JSON.parse(process.argv[1]);
const policy = { ...structuredClone(c[options.policy]()), resources: options.resources ?? {} };
const ex = c.spawnIsolated(argv, { policy, workspace: options.workspace });
const chunks = [];
ex.stderr.on('data', (d) => chunks.push(d)); ex.protocol.resume();
ex.wait().then((r) => process.stdout.write(JSON.stringify({ text: Buffer.concat(chunks).toString(),
  signal: r.signal, confinement: r.receipt.confinement })));
`;
}

function attackAsNobody(t, args, options) {
  // No skip: the provider runs from a world-readable copy (nobodyProvider),
  // so "cannot read the checkout" cannot happen, and any other failure fails.
  const run = runAsNobody(attackScript(nobodyProvider().pkg), [JSON.stringify([[h.probe(), ...args], options])], 60_000);
  assert.equal(run.status, 0, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.equal(result.confinement.planned.cgroup, null, 'no cgroup for this provider');
  // Never the provider's own uid: one of its subordinate ids (.ci/run gives
  // uid 65534 a range; identity.test.js probes the identity itself).
  assert.match(result.confinement.planned.uidAllocation, /^subordinate-(per-run|owner)$/);
  assert.notEqual(result.confinement.planned.uid, h.NOBODY_UID);
  return { ...result, results: h.parseResults(result.text) };
}

test('without a cgroup: no set-uid or set-gid file reaches a host workspace', { skip: skipReason() ?? false }, (t) => {
  const workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-fallback-ws-'));
  // Owned by the first owner id of uid 65534's subordinate range, so its
  // sandboxes write it as that owner (run_identity.rs).
  const owner = subordinateFirst('/etc/subuid');
  fs.chownSync(workspace, owner, subordinateFirst('/etc/subgid'));
  try {
    const run = attackAsNobody(t, ['setid-files', '/workspace'], { policy: 'workspaceWrite', workspace });
    assert.equal(run.results.get('setid-files')?.verdict, 'blocked', run.text);
    assert.ok(fs.statSync(path.join(workspace, 'copy')).size > 0, 'the sandbox wrote on the host');
    const setId = fs.readdirSync(workspace).filter((name) => fs.lstatSync(path.join(workspace, name)).mode & 0o6000);
    assert.deepEqual(setId, []);
  } finally {
    fs.rmSync(workspace, { recursive: true, force: true });
  }
});

test('without a cgroup: /dev is read-only and every writable tmpfs ends in ENOSPC at its planned size', { skip: skipReason() ?? false }, (t) => {
  const run = attackAsNobody(t, ['fill', '/dev', '/dev/shm', '/tmp', '/workspace'], { policy: 'workspaceWrite', resources: { memoryBytes: 64 << 20 } });
  assert.equal(run.signal, null, run.text);
  assert.match(run.results.get('fill:/dev').detail, /wrote=0MiB then Read-only file system/);
  let total = 0;
  for (const { mount, kind, sizeBytes } of run.confinement.planned.writableFilesystems) {
    assert.equal(kind, 'tmpfs', mount);
    const result = run.results.get(`fill:${mount}`);
    assert.equal(result?.verdict, 'blocked', `${mount}: ${result?.detail}`);
    assert.ok(Number(/wrote=(\d+)/.exec(result.detail)[1]) <= sizeBytes / 2 ** 20, `${mount}: ${result.detail}`);
    total += sizeBytes;
  }
  assert.ok(total <= (64 << 20) / 2, `host memory held by the tmpfs mounts: at most ${total} bytes`);
});
