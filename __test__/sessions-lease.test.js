'use strict';

// Two provider processes and one host: a session is driven by one
// provider at a time (the store lease, lib/sessions/lease.js), and a
// session owner uid belongs to one live workspace host-wide, whatever
// store its manager uses (lib/sessions/owner-claims.js). Both probes run
// two real provider processes over real sandboxes.

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { createSessionManager, sqliteSessionStore } = require('..');
const binding = require('../binding.js');
const { managerFactoryWithOwners, sessionsSkipReason, mountedAt, workspaceOf, providerPlace, startHolder, exited } = require('./sessions-support');

const skip = sessionsSkipReason();

const place = (t) => providerPlace(t, 'cordon-sessions-lease-');

test('two providers on one store never share a session: the second is refused with ERR_CORDON_SESSION_HELD, its recover() leaves the session alone, and it takes over once the holder dies', { skip }, async (t) => {
  const { root, dbFile } = place(t);
  const secret = crypto.randomBytes(32);
  const holder = await startHolder(t, [root, dbFile, secret.toString('hex'), 'shared']);
  const store = sqliteSessionStore(dbFile);
  const sessions = createSessionManager({ secret, root, store, authorize: () => true });
  t.after(async () => { await sessions.endAll(); await store.close(); });
  await assert.rejects(sessions.acquire({ tenant: 'acme', conversation: 'shared' }, 'other'), { code: 'ERR_CORDON_SESSION_HELD' });
  assert.deepEqual(await sessions.recover(), { resumable: [], reaped: [] }, 'a live provider\'s session is neither resumable nor reaped here');
  assert.ok(mountedAt(workspaceOf(root, holder.key)), 'the holder\'s workspace is untouched');
  holder.child.kill('SIGKILL');
  await exited(holder.child);
  const session = await sessions.acquire({ tenant: 'acme', conversation: 'shared' }, 'other');
  assert.equal(session.origin, 'restarted', 'a dead holder\'s lease is taken over at once');
  assert.equal((await session.readFile('holder.txt')).toString(), String(holder.child.pid));
  assert.equal((await session.end()).workspace.removed, true);
});

test('owner uids are unique host-wide: a provider on another store cannot get the owner uid a live workspace holds, and gets it once that workspace is removed', { skip }, async (t) => {
  // A two-uid slice of the real owner range: the first uid is never handed out, so each manager has exactly one to give.
  const first = binding.WORKSPACE_OWNER_UID_FIRST + 1000 + crypto.randomInt(binding.WORKSPACE_OWNER_UIDS - 2000);
  const a = place(t);
  const holder = await startHolder(t, [a.root, a.dbFile, crypto.randomBytes(32).toString('hex'), 'a', String(first)]);
  assert.equal(holder.ownerUid, first + 1);
  const narrow = managerFactoryWithOwners({ first, count: 2 });
  const b = place(t);
  const store = sqliteSessionStore(b.dbFile);
  const sessions = narrow({ secret: crypto.randomBytes(32), root: b.root, store, authorize: () => true });
  t.after(async () => { await sessions.endAll(); await store.close(); });
  await assert.rejects(sessions.acquire({ tenant: 'acme', conversation: 'b' }, 'u'), { code: 'ERR_CORDON_SESSION_LIMIT' });
  assert.deepEqual(fs.readdirSync(b.root), [], 'the refused acquire left no workspace');
  assert.deepEqual(await store.list(), [], 'nor a record');
  holder.child.kill('SIGTERM'); // the holder ends its session: workspace removed, claim released
  await exited(holder.child);
  const session = await sessions.acquire({ tenant: 'acme', conversation: 'b' }, 'u');
  assert.equal(session.ownerUid, first + 1);
  assert.equal((await session.exec(['/usr/bin/id', '-u'])).stdout, `${first + 1}\n`);
  await session.end();
});
