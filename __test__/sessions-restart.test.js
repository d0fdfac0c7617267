'use strict';

// A provider killed mid-command: its sandbox dies with it, and a restarted
// provider on the same durable (SQLite) store resumes the session over the
// kept workspace (files kept, processes gone, origin "restarted") or reaps
// it (docs/sessions.md).

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { createSessionManager, sqliteSessionStore } = require('..');
const { sessionsSkipReason, mountedAt, workspaceOf, unmountLeft, marker, pidsWithMarker } = require('./sessions-support');
const { eventually } = require('./spawn-support');

const skip = sessionsSkipReason();

/** Runs fixtures/session-provider.js until it is ready, SIGKILLs it, and returns the session key. */
async function crashProvider(root, dbFile, secret, tag) {
  const child = spawn(process.execPath, [path.join(__dirname, 'fixtures', 'session-provider.js'), root, dbFile, secret.toString('hex'), tag], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => { err += d; });
  const key = await new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d;
      const m = /ready ([0-9a-f]{64})/.exec(out);
      if (m) resolve(m[1]);
    });
    child.on('exit', (code) => reject(new Error(`provider exited ${code}: ${err}`)));
  });
  // The fixture says ready 300 ms after it sent the command, which a loaded machine may not have started yet.
  const inFlight = () => pidsWithMarker(tag).filter((pid) => pid !== child.pid).length === 1;
  assert.ok(await eventually(inFlight, 10_000), 'the command is in flight when the provider dies');
  child.kill('SIGKILL');
  await new Promise((resolve) => child.on('exit', resolve));
  return key;
}

function setup(t) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-sessions-restart-'));
  const dbFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-sessions-db-')), 'sessions.db');
  t.after(() => {
    unmountLeft(root);
    fs.rmSync(root, { recursive: true, force: true });
    fs.rmSync(path.dirname(dbFile), { recursive: true, force: true });
  });
  return { root, dbFile, secret: crypto.randomBytes(32) };
}

test('a provider killed mid-command takes its sandbox down, and a restarted provider resumes the session with its files but not its processes', { skip }, async (t) => {
  const { root, dbFile, secret } = setup(t);
  const tag = marker('crash');
  const key = await crashProvider(root, dbFile, secret, tag);
  assert.ok(await eventually(() => pidsWithMarker(tag).length === 0, 10_000), 'the in-flight command died with its provider');
  const store = sqliteSessionStore(dbFile);
  const sessions = createSessionManager({ secret, root, store, authorize: () => true });
  t.after(async () => { await sessions.endAll(); await store.close(); });
  assert.deepEqual(await sessions.recover(), { resumable: [key], reaped: [] });
  const session = await sessions.acquire({ tenant: 'acme', conversation: 'restart' }, 'alice');
  assert.equal(session.id, key);
  assert.equal(session.origin, 'restarted', 'the session says its processes are gone');
  assert.equal((await session.readFile('kept.txt')).toString(), 'written before the crash');
  assert.equal((await session.exec({ shell: 'bash', script: `pgrep -f '[${tag[0]}]${tag.slice(1)}' || echo none` })).stdout, 'none\n');
  const receipt = await session.end();
  assert.equal(receipt.workspace.removed, true);
  assert.deepEqual(await store.list(), []);
});

test('a restarted provider reaps a stored session idle past idleTimeoutMs: workspace unmounted and removed, record deleted', { skip }, async (t) => {
  const { root, dbFile, secret } = setup(t);
  const key = await crashProvider(root, dbFile, secret, marker('reap'));
  await new Promise((resolve) => setTimeout(resolve, 300));
  const store = sqliteSessionStore(dbFile);
  const sessions = createSessionManager({ secret, root, store, authorize: () => true, idleTimeoutMs: 100 });
  t.after(async () => { await sessions.endAll(); await store.close(); });
  assert.deepEqual(await sessions.recover(), { resumable: [], reaped: [key] });
  assert.ok(!mountedAt(workspaceOf(root, key)));
  assert.deepEqual(fs.readdirSync(root), []);
  assert.deepEqual(await store.list(), []);
});

test('a workspace left as a plain directory (a planted 5000-level tree, a symlink to a host directory, a hard link to a host file) is removed without following a link', { skip }, async (t) => {
  const { root, dbFile, secret } = setup(t);
  const { spawnIsolated, workspaceWrite } = require('..');
  const binding = require('../binding.js');
  const host = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-sessions-canary-'));
  t.after(() => fs.rmSync(host, { recursive: true, force: true }));
  fs.writeFileSync(path.join(host, 'keep'), 'host data');
  const key = crypto.randomBytes(32).toString('hex');
  const workspace = path.join(root, key);
  fs.chmodSync(root, 0o711); // as the manager's prepareRoot leaves it: the sandbox's uid traverses it
  const ownerUid = binding.WORKSPACE_OWNER_UID_FIRST + 1 + crypto.randomInt(binding.WORKSPACE_OWNER_UIDS - 1);
  fs.mkdirSync(workspace, { mode: 0o700 });
  fs.chownSync(workspace, ownerUid, ownerUid);
  fs.linkSync(path.join(host, 'keep'), path.join(workspace, 'hardlink'));
  // The sandbox (running as the workspace's owner) plants the rest.
  const plant = `import os\nos.symlink(${JSON.stringify(host)}, 'link-to-host')\nos.symlink('/', 'link-to-root')\nos.mkfifo('fifo')\nfor _ in range(5000):\n  os.mkdir('d')\n  os.chdir('d')\nos.symlink(${JSON.stringify(host)}, 'deep-link')\nprint('planted')`;
  const run = spawnIsolated(['/usr/bin/python3', '-c', plant], { policy: workspaceWrite(), workspace });
  const chunks = [];
  run.stderr.on('data', (c) => chunks.push(c));
  const result = await run.wait();
  assert.equal(result.returncode, 0, Buffer.concat(chunks).toString());
  const store = sqliteSessionStore(dbFile);
  await store.claim(key, null, () => ({ key, scope: { tenant: 'acme', conversation: 'plain' }, ownerUid, workspace, createdAt: 0, lastActiveAt: 0, network: null }), () => false);
  const sessions = createSessionManager({ secret, root, store, authorize: () => true });
  t.after(async () => { await sessions.endAll(); await store.close(); });
  assert.deepEqual(await sessions.recover(), { resumable: [], reaped: [key] });
  assert.ok(!fs.existsSync(workspace), 'the planted tree is gone');
  assert.deepEqual(await store.list(), [], 'and its record');
  assert.equal(fs.readFileSync(path.join(host, 'keep'), 'utf8'), 'host data', 'no link was followed');
  assert.equal(fs.statSync(path.join(host, 'keep')).nlink, 1);
});

test('the owner-uid sweep refuses root, the provider\'s own uid and every uid outside the session owner range, as ERR_CORDON_SESSION_SWEEP_FAILED with the launcher\'s reason', { skip }, async () => {
  const binding = require('../binding.js');
  const { sweepOwner, uidHasProcesses } = require('../lib/sessions/owner-sweep');
  const killUid = (uid) => binding.killUidProcesses(uid);
  for (const uid of [0, process.geteuid()]) {
    await assert.rejects(sweepOwner(killUid, uid), (error) => {
      assert.equal(error.code, 'ERR_CORDON_SESSION_SWEEP_FAILED');
      assert.match(error.message, /never swept/);
      return true;
    });
  }
  // A host account's uid, the default workspace owner, a per-run uid: not a session's (round 8, R8-7).
  const first = binding.WORKSPACE_OWNER_UID_FIRST;
  for (const uid of [1000, 0x6fff_f0e2, first, first + binding.WORKSPACE_OWNER_UIDS]) {
    await assert.rejects(sweepOwner(killUid, uid), (error) => {
      assert.equal(error.code, 'ERR_CORDON_SESSION_SWEEP_FAILED');
      assert.match(error.message, /not a session owner uid of this provider/);
      return true;
    });
  }
  // An owner uid with no process: nothing to kill, nothing signalled.
  const unused = [first + binding.WORKSPACE_OWNER_UIDS - 1, first + binding.WORKSPACE_OWNER_UIDS - 2].find((uid) => !uidHasProcesses(uid));
  assert.equal(await sweepOwner(killUid, unused), 0);
});
