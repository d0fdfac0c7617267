'use strict';

// Confinement on a host without a usable cgroup, seen from a provider that
// is not root (uid 65534 cannot write any cgroup here): the default policy
// still launches, with seccomp and per-process rlimits and `cgroup: null` in
// the receipt; a policy with `treeLimits: "required"` refuses to launch with
// ERR_CORDON_CONFINEMENT_UNAVAILABLE.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const h = require('./harness');

const ROOT = path.join(__dirname, '..', '..');
const SCRIPT = `
const c = require(${JSON.stringify(ROOT)});
const base = c.readOnly();
const required = { ...structuredClone(base), resources: { ...base.resources, treeLimits: 'required' } };
let refused = null;
try { c.spawnIsolated(['/bin/true'], { policy: required }); } catch (e) { refused = e.code; }
const ex = c.spawnIsolated(['/bin/true'], { policy: base });
ex.stderr.resume(); ex.protocol.resume();
ex.wait().then((r) => process.stdout.write(JSON.stringify({ refused, returncode: r.returncode,
  confinement: r.receipt.confinement })));
`;

function skipReason() {
  const base = h.skipReason();
  if (base) return base;
  if (process.geteuid() !== 0) return 'needs root to run the provider as uid 65534 (a user with no cgroup)';
  return null;
}

test('without a cgroup: defaults fall back to rlimits; treeLimits "required" refuses', { skip: skipReason() ?? false }, (t) => {
  const run = spawnSync(process.execPath, ['-e', SCRIPT], {
    uid: h.NOBODY_UID, gid: h.NOBODY_UID, cwd: '/', encoding: 'utf8', timeout: 30_000,
    env: { PATH: process.env.PATH, TMPDIR: '/tmp' },
  });
  // A checkout under a 0700 directory (a clone in /root) is unreadable for
  // that uid, and require() then reports EACCES or a missing module.
  if (/EACCES|Cannot find module/.test(run.stderr)) {
    t.skip(`uid ${h.NOBODY_UID} cannot read the checkout: ${run.stderr.split('\n')[0]}`);
    return;
  }
  assert.equal(run.status, 0, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.equal(result.refused, 'ERR_CORDON_CONFINEMENT_UNAVAILABLE');
  assert.equal(result.returncode, 0);
  assert.equal(result.confinement.cgroup, null);
  assert.equal(result.confinement.seccomp.profile, 'cordon-default-v2');
  const nproc = result.confinement.rlimits.find((r) => r.name === 'NPROC');
  // The policy's 64 plus the zombie allowance (confinement.rs NPROC_ZOMBIE_ALLOWANCE).
  assert.equal(nproc.hard, 64 + 512, 'without a cgroup NPROC is the only process bound');
});
