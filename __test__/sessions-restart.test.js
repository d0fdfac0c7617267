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
const { sessionsSkipReason, mountedAt, marker, pidsWithMarker } = require('./sessions-support');
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
  assert.equal(pidsWithMarker(tag).filter((pid) => pid !== child.pid).length, 1, 'the command is in flight when the provider dies');
  child.kill('SIGKILL');
  await new Promise((resolve) => child.on('exit', resolve));
  return key;
}

function setup(t) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-sessions-restart-'));
  const dbFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-sessions-db-')), 'sessions.db');
  t.after(() => {
    for (const entry of fs.existsSync(root) ? fs.readdirSync(root) : []) {
      if (mountedAt(path.join(root, entry))) require('node:child_process').execFileSync('/usr/bin/umount', [path.join(root, entry)]);
    }
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
  assert.ok(!mountedAt(path.join(root, key)));
  assert.deepEqual(fs.readdirSync(root), []);
  assert.deepEqual(await store.list(), []);
});
