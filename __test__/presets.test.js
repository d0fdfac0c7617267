'use strict';

// The policy presets and the bare resource defaults live once, in the
// launcher (crates/launcher/src/request/presets.rs): JavaScript's readOnly(),
// workspaceWrite() and profile(name) are the addon's export, `cordon run
// --policy NAME` uses the launcher's directly, and a policy that leaves
// `resources` out gets the presets' ceilings.

const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnIsolated, readOnly, workspaceWrite, profile } = require('..');
const { runToEnd } = require('./spawn-support');

const CLI = path.join(__dirname, '..', 'bin', 'cordon.js');

/** The receipt of `cordon run --policy <name> -- /bin/true`. */
function cliReceipt(name) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-presets-'));
  try {
    const file = path.join(dir, 'receipt.json');
    const run = spawnSync(process.execPath, [CLI, 'run', '--policy', name, '--receipt', file, '--', '/bin/true'], { encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

test('every preset is the same policy in JavaScript, in the CLI and in the launcher (equal digests)', async () => {
  const presets = { 'read-only': readOnly(), 'workspace-write': workspaceWrite(), untrusted: profile('untrusted') };
  assert.deepEqual(profile('read-only'), presets['read-only']);
  assert.deepEqual(profile('workspace-write'), presets['workspace-write']);
  for (const [name, policy] of Object.entries(presets)) {
    assert.ok(Object.isFrozen(policy) && Object.isFrozen(policy.resources) && Object.isFrozen(policy.filesystem.extra), name);
    const js = await runToEnd(spawnIsolated(['/bin/true'], { policy }));
    const cli = cliReceipt(name);
    assert.match(js.result.receipt.policy.digest, /^sha256:[0-9a-f]{64}$/);
    assert.equal(cli.policy.digest, js.result.receipt.policy.digest, name);
    assert.deepEqual(cli.policy.resources, policy.resources, name);
  }
  assert.notEqual(cliReceipt('read-only').policy.digest, cliReceipt('untrusted').policy.digest);
});

test('a policy without resources runs with the presets\' ceilings (the bare defaults are readOnly()\'s)', async () => {
  const { resources, ...bare } = JSON.parse(JSON.stringify(readOnly()));
  const { result, stderr } = await runToEnd(spawnIsolated(['/bin/cat', '/proc/self/limits'], { policy: bare }));
  assert.equal(result.returncode, 0, stderr);
  const row = (name) => stderr.split('\n').find((line) => line.startsWith(name)).slice(name.length).trim().split(/\s+/).slice(0, 2);
  assert.deepEqual(row('Max address space'), [String(resources.memoryBytes), String(resources.memoryBytes)]);
  assert.deepEqual(row('Max file size'), [String(resources.fileSizeBytes), String(resources.fileSizeBytes)]);
  assert.deepEqual(row('Max cpu time'), [String(resources.cpuSeconds), String(resources.cpuSeconds + 1)]);
  // The tree's process ceiling is the cgroup's pids.max when there is one
  // (RLIMIT_NPROC is then a host-wide backstop): the receipt says which.
  const cgroup = result.receipt.confinement.planned.cgroup;
  if (cgroup !== null) assert.equal(String(cgroup.pidsMax), String(resources.processes));
});
