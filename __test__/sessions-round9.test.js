'use strict';

// Black-box round 9 against sessions (issue 21;
// __test__/security/findings/round9/README.md), replayed with a root
// provider and real session sandboxes: one session's flood of file
// operations (R9-2), an acquire that runs out of descriptors (R9-2), the
// store's file modes (R9-10) and endAll() with acquires in flight (R9-11).
// The non-root provider's findings (R9-1, R9-5) are in
// security/sessions-nonroot.test.js.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { sqliteSessionStore } = require('..');
const { sessionsSkipReason, managerFor, mountedAt, workspaceOf, scope } = require('./sessions-support');

const skip = sessionsSkipReason();
const CLAIMS = '/run/cordon-session-owners';

/** Owner-uid claims that name a workspace under `root`. */
function claimsUnder(root) {
  if (!fs.existsSync(CLAIMS)) return [];
  return fs.readdirSync(CLAIMS).filter((uid) => {
    try {
      return fs.readFileSync(path.join(CLAIMS, uid), 'utf8').includes(root);
    } catch {
      return false;
    }
  });
}

test('one session\'s flood of file operations runs maxFileOperations (8) at once, the rest refused with ERR_CORDON_SESSION_BUSY; another session\'s readFile is unaffected (round 9, R9-2)', { skip, timeout: 120_000 }, async (t) => {
  const { manager } = managerFor(t);
  const a = await manager.acquire(scope('flood'), 'mallory');
  const b = await manager.acquire(scope('victim', 'other'), 'ada');
  await a.writeFile('f', 'x');
  await b.writeFile('g', 'y');
  // Issued in one tick: every call is admitted or refused before any of them completes.
  const flood = Array.from({ length: 50 }, () => a.readFile('f').then(() => 'ok', (e) => e.code));
  const victim = b.readFile('g');
  const codes = await Promise.all(flood);
  assert.deepEqual([codes.filter((c) => c === 'ok').length, codes.filter((c) => c === 'ERR_CORDON_SESSION_BUSY').length], [8, 42], codes.join(' '));
  assert.equal(String(await victim), 'y');
  assert.equal(String(await a.readFile('f')), 'x', 'the bound is free again once the flood settled');
});

test('an acquire that runs out of descriptors (EMFILE) rejects with ERR_CORDON_SESSION_OPEN_FAILED naming no host path, and leaves nothing behind (round 9, R9-2)', { skip, timeout: 120_000 }, (t) => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-r9-emfile-'));
  t.after(() => fs.rmSync(root, { recursive: true, force: true }));
  // A provider of its own under RLIMIT_NOFILE 256: it takes every descriptor left, then acquires.
  const script = `
    const crypto = require('node:crypto'); const fs = require('node:fs');
    const cordon = require(${JSON.stringify(path.join(__dirname, '..'))});
    const root = ${JSON.stringify(root)};
    const m = cordon.createSessionManager({ secret: crypto.randomBytes(32), root, authorize: () => true });
    (async () => {
      const held = [];
      for (;;) { try { held.push(fs.openSync('/dev/null', 'r')); } catch (e) { if (e.code !== 'EMFILE') throw e; break; } }
      const failed = await m.acquire({ tenant: 'acme', conversation: 'c' }, 'ada').then(() => null, (e) => ({ code: e.code, message: e.message, cause: e.cause?.code }));
      for (const fd of held) fs.closeSync(fd);
      const left = fs.readdirSync(root);
      const s = await m.acquire({ tenant: 'acme', conversation: 'c' }, 'ada');
      const echo = (await s.exec(['echo', 'ok'])).stdout.toString().trim();
      await m.endAll();
      process.stdout.write(JSON.stringify({ failed, left, echo }));
    })().catch((e) => { process.stdout.write(JSON.stringify({ crashed: String(e.stack) })); });`;
  const run = spawnSync('/usr/bin/prlimit', ['--nofile=256:256', process.execPath, '-e', script], { encoding: 'utf8', timeout: 100_000 });
  assert.equal(run.status, 0, run.stderr);
  const v = JSON.parse(run.stdout);
  assert.equal(v.crashed, undefined, v.crashed);
  assert.ok(v.failed !== null, 'the acquire without descriptors failed');
  assert.equal(v.failed.code, 'ERR_CORDON_SESSION_OPEN_FAILED', JSON.stringify(v.failed));
  assert.equal(v.failed.cause, 'EMFILE');
  assert.doesNotMatch(v.failed.message, /\//, 'no host path in the message');
  assert.deepEqual(v.left, [], 'no workspace left under the root');
  assert.equal(v.echo, 'ok', 'the next acquire, with descriptors again, works');
  assert.deepEqual(claimsUnder(root), []);
});

test('sqliteSessionStore creates the database and its -wal/-shm 0600, and makes an existing world-readable one 0600 (round 9, R9-10)', { skip: process.versions.node.split('.')[0] < 22 ? 'node:sqlite needs Node >= 22.5' : false }, async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-r9-store-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const previous = process.umask(0o022);
  try {
    const file = path.join(dir, 'sessions.db');
    const store = sqliteSessionStore(file);
    await store.put({ key: 'k', scope: { tenant: 'acme', conversation: 'conv-4711' } });
    const modes = ['', '-wal', '-shm'].map((suffix) => (fs.statSync(file + suffix).mode & 0o777).toString(8));
    await store.close();
    assert.deepEqual(modes, ['600', '600', '600']);
    // A store made before (the umask's 0644): opened, it is made the provider's alone.
    const old = path.join(dir, 'old.db');
    const before = sqliteSessionStore(old);
    await before.put({ key: 'k' });
    for (const suffix of ['', '-wal', '-shm']) fs.chmodSync(old + suffix, 0o644);
    const reopened = sqliteSessionStore(old);
    const after = ['', '-wal', '-shm'].map((suffix) => (fs.statSync(old + suffix).mode & 0o777).toString(8));
    assert.deepEqual((await reopened.list()).map((r) => r.key), ['k']);
    await reopened.close();
    await before.close();
    assert.deepEqual(after, ['600', '600', '600']);
  } finally {
    process.umask(previous);
  }
});

test('endAll() with acquires in flight waits for what they open and ends it; they and every later acquire are refused with ERR_CORDON_SESSION_MANAGER_CLOSED; no mount or claim is left (round 9, R9-11)', { skip, timeout: 120_000 }, async (t) => {
  // The budget hook runs once each acquire's opening is under way (its slot taken, before any mount).
  let reached = 0;
  let allReached;
  const inFlight = new Promise((resolve) => { allReached = resolve; });
  const budget = () => {
    reached += 1;
    if (reached === 3) allReached();
    return true;
  };
  const { manager, root } = managerFor(t, { budget, maxSessionsPerTenant: 8 });
  const acquires = [0, 1, 2].map((i) => manager.acquire(scope(`c${i}`), 'ada').then((s) => s.origin, (e) => e.code));
  await inFlight;
  const receipts = await manager.endAll();
  assert.deepEqual(await Promise.all(acquires), Array(3).fill('ERR_CORDON_SESSION_MANAGER_CLOSED'));
  assert.equal(receipts.length, 3, 'endAll ended the sessions opened in flight');
  assert.ok(receipts.every((r) => r.workspace.removed), JSON.stringify(receipts.map((r) => r.workspace)));
  assert.equal(manager.size, 0);
  assert.deepEqual(fs.readdirSync(root).filter((name) => mountedAt(workspaceOf(root, name))), []);
  assert.deepEqual(claimsUnder(root), []);
  await assert.rejects(manager.acquire(scope('later'), 'ada'), { code: 'ERR_CORDON_SESSION_MANAGER_CLOSED' });
  assert.equal(reached, 3, 'the refused acquire opened nothing');
});
