'use strict';

// A root provider's sandbox runs as a reserved uid, and bwrap resolves the
// workspace as that uid: a workspace under a 0700 parent (every mkdtemp) or a
// root-owned workspace under workspace-write is refused before launch with
// ERR_CORDON_WORKSPACE_UNUSABLE and the fix, and nothing is created. A
// failure of bwrap's own set-up that happens after it reported its sandbox
// (here: a filesystem.extra under a 0700 directory) is a failed launch
// (outcome "spawn-failed", ERR_CORDON_SPAWN_FAILED naming bwrap), never the
// program's exit status.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnIsolated, readOnly, workspaceWrite } = require('..');
const { runToEnd, ownControlRoots } = require('./spawn-support');

const ROOT_ONLY = { skip: process.geteuid() === 0 ? false : 'needs root: a non-root provider runs its sandboxes as itself, so its own workspaces are always reachable' };

/** A mkdtemp directory (0700, root-owned) holding a world-readable `ws/`. */
function privateParent(t, base = os.tmpdir()) {
  const parent = fs.mkdtempSync(path.join(base, 'cordon-ws-access-'));
  t.after(() => fs.rmSync(parent, { recursive: true, force: true }));
  const ws = path.join(parent, 'ws');
  fs.mkdirSync(ws, { mode: 0o755 });
  fs.writeFileSync(path.join(ws, 'data.txt'), 'hello\n');
  return { parent, ws };
}

test('a workspace under a 0700 parent is refused before launch, naming the chmod that fixes it', ROOT_ONLY, (t) => {
  const { parent, ws } = privateParent(t);
  const before = ownControlRoots().length;
  assert.throws(() => spawnIsolated(['/bin/cat', '/workspace/data.txt'], { policy: readOnly(), workspace: ws }), (error) => {
    assert.equal(error.code, 'ERR_CORDON_WORKSPACE_UNUSABLE');
    assert.match(error.message, new RegExp(`${parent} is mode 0700, owner 0:0`));
    assert.ok(error.message.includes(`\`chmod o+x ${parent}\``), error.message);
    return true;
  });
  assert.equal(ownControlRoots().length, before, 'nothing was created');
  fs.chmodSync(parent, 0o711); // the named fix
  return runToEnd(spawnIsolated(['/bin/cat', '/workspace/data.txt'], { policy: readOnly(), workspace: ws })).then(({ result: done, stderr }) => {
    assert.equal(done.returncode, 0, stderr);
    assert.equal(stderr, 'hello\n');
  });
});

test('a root-owned workspace under workspace-write is refused before launch, naming the owner range', ROOT_ONLY, async (t) => {
  const { parent, ws } = privateParent(t);
  fs.chmodSync(parent, 0o711);
  assert.throws(() => spawnIsolated(['/bin/touch', '/workspace/new'], { policy: workspaceWrite(), workspace: ws }), (error) => {
    assert.equal(error.code, 'ERR_CORDON_WORKSPACE_UNUSABLE');
    assert.match(error.message, /cannot be written by the sandbox's uid \d+: it is mode 0755, owner 0:0/);
    assert.ok(error.message.includes(`\`chown -R 1879048192:1879048192 ${ws}\``), error.message);
    return true;
  });
  fs.chownSync(ws, 1879048192, 1879048192); // the named fix
  const { result: done, stderr } = await runToEnd(spawnIsolated(['/bin/touch', '/workspace/new'], { policy: workspaceWrite(), workspace: ws }));
  assert.equal(done.returncode, 0, stderr);
  assert.ok(fs.existsSync(path.join(ws, 'new')));
});

test("a failure of bwrap's own set-up after it reported the sandbox is a failed launch, not the program's exit", ROOT_ONLY, async (t) => {
  // filesystem.extra may not lie under /tmp; /var/tmp is a host directory like any other.
  const { ws: unreachable } = privateParent(t, '/var/tmp');
  const execution = spawnIsolated(['/bin/true'], {
    policy: { ...readOnly(), filesystem: { ...readOnly().filesystem, extra: [{ path: unreachable, access: 'read' }] } },
  });
  execution.protocol.resume();
  execution.stderr.resume();
  await assert.rejects(execution.wait(), (error) => {
    assert.equal(error.code, 'ERR_CORDON_SPAWN_FAILED');
    assert.match(error.message, /^bubblewrap could not set up the sandbox: bwrap: /);
    const { outcome } = error.details.receipt;
    assert.equal(outcome.status, 'spawn-failed');
    assert.equal(outcome.exitCode, null);
    assert.match(outcome.message, /bwrap: Can't find source path/);
    return true;
  });
});
