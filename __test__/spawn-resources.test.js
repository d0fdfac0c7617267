'use strict';

// Policy resources and filesystem.extra as the sandboxed program meets them
// (docs/policy.md, docs/security.md): each limit is set low and the program
// runs into it inside a real sandbox.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawnIsolated, readOnly } = require('..');
const { runToEnd } = require('./spawn-support');
const h = require('./security/harness');

const MiB = 1024 * 1024;

/** readOnly() with `resources` overridden. */
function withResources(resources) {
  const policy = structuredClone(readOnly());
  policy.resources = { ...policy.resources, ...resources };
  return policy;
}

/** Runs `script` under /bin/sh with `policy`; returns {result, stderr}. */
const sh = (script, policy, options = {}) => runToEnd(spawnIsolated(['/bin/sh', '-c', script], { policy, deadlineMs: 30_000, ...options }));

test('fileSizeBytes: a write past it fails with EFBIG and the file stops at the limit', async () => {
  const policy = withResources({ fileSizeBytes: MiB });
  // SIGXFSZ ignored (as the program inherits it from Node today), so the
  // write fails with EFBIG instead of the signal killing the writer.
  const over = await sh(`trap '' XFSZ; head -c ${2 * MiB} /dev/zero > /tmp/big; echo "status=$?"; wc -c < /tmp/big`, policy);
  assert.match(over.stderr, /File too large/);
  assert.match(over.stderr, new RegExp(`status=1\\n${MiB}\\n$`), over.stderr);
  const within = await sh(`head -c ${MiB} /dev/zero > /tmp/ok; echo "status=$?"`, policy);
  assert.equal(within.stderr, 'status=0\n', 'a file of exactly the limit is fine');
  // As observed in the running program (/proc/<pid>/limits), not only planned.
  const limits = over.result.receipt.confinement.observed.rlimits.find((r) => r.name === 'FSIZE');
  assert.deepEqual([limits.soft, limits.hard], [MiB, MiB]);
});

test('cpuSeconds: a busy loop gets SIGXCPU at the limit; one ignoring it is SIGKILLed a second of CPU later', async () => {
  const policy = withResources({ cpuSeconds: 1 });
  // The inner shell burns CPU; the outer one (idle) reports how it ended.
  const burned = await sh('sh -c "while :; do :; done"; echo "status=$?"', policy);
  assert.match(burned.stderr, /status=152\n$/, 'SIGXCPU (128 + 24)');
  const stubborn = await sh(`sh -c "trap '' XCPU; while :; do :; done"; echo "status=$?"`, policy);
  assert.match(stubborn.stderr, /status=137\n$/, 'SIGKILL (128 + 9) at the hard limit');
  const limits = burned.result.receipt.confinement.observed.rlimits.find((r) => r.name === 'CPU');
  assert.deepEqual([limits.soft, limits.hard], [1, 2]);
});

test('openFiles: descriptor exhaustion stops exactly at the limit', { skip: h.skipReason() ?? false }, async () => {
  // The static attacker opens /dev/null until EMFILE; fds 0-3 are taken.
  const run = await h.attack(['fd-exhaustion'], { policy: withResources({ openFiles: 20 }) });
  const result = run.results.get('fd-exhaustion');
  assert.equal(result?.verdict, 'blocked', run.text);
  assert.match(result.detail, /^opened=16 then Too many open files$/);
  const wider = await h.attack(['fd-exhaustion'], { policy: withResources({ openFiles: 40 }) });
  assert.match(wider.results.get('fd-exhaustion').detail, /^opened=36 /, 'the limit is the policy\'s, not a fixed one');
});

test('filesystem.extra: a "read" path is readable and read-only, a "write" path is writable, a sibling is absent', async () => {
  // Not under /tmp (refused: the sandbox has its own /tmp); /var/tmp is a host path like any other.
  const base = fs.mkdtempSync('/var/tmp/cordon-extra-');
  fs.chmodSync(base, 0o755);
  const [readDir, writeDir, sibling] = ['read', 'write', 'sibling'].map((name) => path.join(base, name));
  for (const dir of [readDir, writeDir, sibling]) fs.mkdirSync(dir, { mode: 0o755 });
  fs.writeFileSync(path.join(readDir, 'input.txt'), 'data\n');
  fs.writeFileSync(path.join(sibling, 'secret.txt'), 'secret\n');
  // A root provider's run has a per-run uid: a writable extra path needs
  // "other" write access (docs/policy.md).
  fs.chmodSync(writeDir, 0o777);
  try {
    const policy = structuredClone(readOnly());
    policy.filesystem.extra = [{ path: readDir, access: 'read' }, { path: writeDir, access: 'write' }];
    const script = [
      `cat ${readDir}/input.txt`,
      `(echo x > ${readDir}/input.txt) 2>/dev/null && echo read-wrote || echo read-denied`,
      `(echo x > ${readDir}/new.txt) 2>/dev/null && echo read-created || echo read-create-denied`,
      `echo out > ${writeDir}/out.txt && echo write-ok`,
      `test -e ${sibling} && echo sibling-present || echo sibling-absent`,
      `cat ${sibling}/secret.txt 2>/dev/null || echo secret-unreadable`,
    ].join('; ');
    const { result, stderr } = await sh(script, policy);
    assert.equal(stderr, 'data\nread-denied\nread-create-denied\nwrite-ok\nsibling-absent\nsecret-unreadable\n');
    assert.equal(fs.readFileSync(path.join(readDir, 'input.txt'), 'utf8'), 'data\n');
    assert.equal(fs.existsSync(path.join(readDir, 'new.txt')), false);
    assert.equal(fs.readFileSync(path.join(writeDir, 'out.txt'), 'utf8'), 'out\n');
    assert.deepEqual(result.receipt.policy.filesystem.extra, policy.filesystem.extra);
  } finally {
    fs.rmSync(base, { recursive: true, force: true });
  }
});
