'use strict';

// Sessions: keys, authorisation on every acquire, resume, teardown and
// isolation, with real session sandboxes (docs/sessions.md).

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { createSessionManager, memorySessionStore } = require('..');
const { sessionKey, checkScope } = require('../lib/sessions/session-key');
const { CLAIMS_DIR } = require('../lib/sessions/owner-claims');
const { sessionsSkipReason, managerFor, mountedAt, unmountLeft, marker, background, pidsWithMarker, scope } = require('./sessions-support');
const { eventually } = require('./spawn-support');

const skip = sessionsSkipReason();
/** A pgrep pattern for `tag` that does not match the shell running pgrep (whose own command line holds the pattern). */
const selfless = (tag) => `'[${tag[0]}]${tag.slice(1)}'`;

test('a session key is an HMAC of the scope under the server secret: another secret or another part gives another key', () => {
  const a = crypto.randomBytes(32);
  const b = crypto.randomBytes(32);
  const s = checkScope({ tenant: 't', conversation: 'c' });
  assert.equal(sessionKey(a, s), sessionKey(a, checkScope({ conversation: 'c', tenant: 't' })));
  assert.notEqual(sessionKey(a, s), sessionKey(b, s));
  assert.notEqual(sessionKey(a, s), sessionKey(a, checkScope({ tenant: 't', conversation: 'c2' })));
  // Parts are length-prefixed: moving a boundary changes the key.
  assert.notEqual(sessionKey(a, checkScope({ tenant: 'ab', conversation: 'c' })), sessionKey(a, checkScope({ tenant: 'a', space: 'b', conversation: 'c' })));
  assert.match(sessionKey(a, s), /^[0-9a-f]{64}$/);
});

test('a manager refuses a short secret, a missing authorize hook and unknown options with coded errors', () => {
  const root = fs.mkdtempSync('/tmp/cordon-sessions-opt-');
  try {
    const base = { secret: crypto.randomBytes(32), root, authorize: () => true };
    for (const bad of [{ ...base, secret: 'short' }, { ...base, authorize: undefined }, { ...base, colour: 'red' }, { ...base, idleTimeoutMs: -1 }]) {
      assert.throws(() => createSessionManager(bad), { code: 'ERR_CORDON_INVALID_OPTIONS' });
    }
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('acquire creates a warm session over a quota-bounded tmpfs owned by the session own uid, and commands run as that uid', { skip }, async (t) => {
  const { manager, root } = managerFor(t, { workspaceBytes: 8 << 20 });
  const session = await manager.acquire(scope('c1'), { user: 'alice' });
  assert.equal(session.origin, 'created');
  assert.equal(path.dirname(path.dirname(session.workspace)), root, '<root>/<key>/ws');
  const keyDir = fs.statSync(path.dirname(session.workspace));
  assert.deepEqual([keyDir.uid, keyDir.mode & 0o777], [session.ownerUid, 0o700], '<key> is the owner\'s, 0700: only it reaches the workspace');
  assert.ok(mountedAt(session.workspace), 'the workspace is a mount point');
  const st = fs.statSync(session.workspace);
  assert.equal(st.uid, session.ownerUid);
  assert.equal(st.mode & 0o777, 0o700);
  assert.ok(session.ownerUid > 0x7000_0000 && session.ownerUid < 0x7001_0000, `owner ${session.ownerUid}`);
  const result = await session.exec(['/usr/bin/id', '-u']);
  assert.equal(result.exitCode, 0, result.stderr);
  assert.equal(result.stdout.trim(), String(session.ownerUid));
  const df = await session.exec({ shell: 'bash', script: 'df -B1 --output=size /workspace | tail -1' });
  assert.equal(Number(df.stdout.trim()), 8 << 20, 'the sandbox sees the quota as its filesystem size');
});

test('a second acquire of the same scope resumes the warm session with its files and background processes', { skip }, async (t) => {
  const { manager } = managerFor(t);
  const first = await manager.acquire(scope('turns'), 'alice');
  const tag = marker('bg');
  await first.exec({ shell: 'bash', script: `echo kept > notes.txt; ${background(tag)}` });
  assert.equal(pidsWithMarker(tag).length, 1, 'the background process runs');
  const second = await manager.acquire(scope('turns'), 'alice');
  assert.equal(second.id, first.id);
  assert.equal(second.origin, 'resumed');
  const result = await second.exec({ shell: 'bash', script: `cat notes.txt; pgrep -f ${selfless(tag)} >/dev/null && echo alive` });
  assert.equal(result.stdout, 'kept\nalive\n');
});

test('a denied actor never gets the warm session, and a denial (false, {allow:false}, a throw) touches nothing', { skip }, async (t) => {
  const calls = [];
  const { manager, root } = managerFor(t, {
    authorize: (actor, s) => {
      calls.push([actor, s.conversation]);
      if (actor === 'mallory') return { allow: false, reason: 'not a member' };
      if (actor === 'eve') throw new Error('directory down');
      return actor === 'alice' ? true : false;
    },
  });
  const session = await manager.acquire(scope('private'), 'alice');
  await session.writeFile('secret.txt', 'alice only');
  for (const actor of ['mallory', 'eve', 'bob']) {
    await assert.rejects(manager.acquire(scope('private'), actor), { code: 'ERR_CORDON_SESSION_DENIED' });
    await assert.rejects(manager.acquire(scope('fresh'), actor), { code: 'ERR_CORDON_SESSION_DENIED' });
  }
  assert.equal(fs.readdirSync(root).length, 1, 'denials created no workspace');
  assert.equal(manager.size, 1);
  assert.equal((await manager.acquire(scope('private'), 'alice')).origin, 'resumed');
  assert.equal(calls.length, 8, 'authorize ran on every acquire, resumes included');
});

test('two sessions cannot see each other files or processes', { skip }, async (t) => {
  const { manager } = managerFor(t);
  const a = await manager.acquire(scope('a'), 'u');
  const b = await manager.acquire(scope('b'), 'u');
  assert.notEqual(a.ownerUid, b.ownerUid);
  const tag = marker('iso');
  await a.exec({ shell: 'bash', script: `echo a-secret > mine.txt; ${background(tag)}` });
  const hostPid = pidsWithMarker(tag)[0];
  assert.ok(hostPid, 'a background process of session a runs');
  const listing = await b.exec(['/bin/ls', '-A', '/workspace']);
  assert.equal(listing.stdout, '');
  const probe = await b.exec({ shell: 'bash', script: `cat ${a.workspace}/mine.txt /proc/*/root/workspace/mine.txt 2>&1; pgrep -f ${selfless(tag)} || echo no-such-process; kill -9 ${hostPid} 2>&1; pkill -9 -f ${selfless(tag)}; true` });
  assert.doesNotMatch(probe.stdout, /a-secret/);
  assert.match(probe.stdout, /no-such-process/);
  assert.deepEqual(pidsWithMarker(tag), [hostPid], "session a's process survived session b's attempts to kill it");
  assert.equal((await a.exec({ shell: 'bash', script: `pgrep -f ${selfless(tag)} >/dev/null && echo visible-to-a` })).stdout, 'visible-to-a\n', 'the probe can see a process where there is one');
});

test('end() stops the sandbox, unmounts and removes the workspace, forgets the record, and is idempotent', { skip }, async (t) => {
  const store = memorySessionStore();
  const { manager } = managerFor(t, { store });
  const session = await manager.acquire(scope('end'), 'u');
  const tag = marker('end');
  await session.exec({ shell: 'bash', script: background(tag) });
  const agentPid = session._session._sandbox.execution.pid;
  const [r1, r2] = await Promise.all([session.end(), session.end()]);
  assert.equal(r1, r2);
  assert.equal(await session.end(), r1);
  assert.equal(r1.endReason, 'end');
  assert.equal(r1.sandbox.receipt.stop.containmentConfirmed, true);
  assert.equal(r1.workspace.removed, true, r1.workspace.detail);
  assert.equal(r1.commands.length, 1);
  assert.match(r1.commands[0].argvSha256, /^[0-9a-f]{64}$/);
  assert.ok(!mountedAt(session.workspace));
  assert.ok(!fs.existsSync(session.workspace));
  assert.equal(await store.get(session.id), null);
  assert.deepEqual(pidsWithMarker(tag), []);
  assert.ok(!fs.existsSync(`/proc/${agentPid}`), 'bwrap is gone');
  const cgroups = r1.sandbox.receipt.confinement.planned.cgroup?.paths ?? [];
  assert.ok(cgroups.length > 0, 'the session sandbox had a cgroup');
  for (const dir of cgroups) assert.ok(!fs.existsSync(dir), `cgroup ${dir} was removed`);
  await assert.rejects(session.exec(['/bin/true']), { code: 'ERR_CORDON_SESSION_ENDED' });
  assert.equal(manager.size, 0);
});

test('the end receipt lists the first and last 64 commands, counts all and digests all: its memory is bounded whatever the session length (round 9, R9-6)', { skip }, async (t) => {
  const { manager } = managerFor(t);
  const session = await manager.acquire(scope('many-commands'), 'u');
  const total = 200;
  for (let i = 1; i <= total; i += 1) assert.equal((await session.exec(['/bin/echo', String(i)])).exitCode, 0);
  const log = session._session._sandbox.log;
  assert.equal(log._head.length + log._tail.length, 128, 'only the listed commands are held');
  assert.ok([...log._head, ...log._tail].every((slot) => slot.command === null), 'a settled command is dropped, only its line kept');
  const receipt = await session.end();
  assert.equal(receipt.commandCount, total);
  assert.equal(receipt.commandsOmitted, total - 128);
  assert.equal(receipt.commands.length, 128);
  const argvDigest = (i) => crypto.createHash('sha256').update(JSON.stringify(['/bin/echo', String(i)])).digest('hex');
  const listed = [...Array.from({ length: 64 }, (_, k) => k + 1), ...Array.from({ length: 64 }, (_, k) => total - 63 + k)];
  assert.deepEqual(receipt.commands.map((c) => c.seq), listed);
  assert.deepEqual(receipt.commands.map((c) => c.argvSha256), listed.map(argvDigest));
  assert.ok(receipt.commands.every((c) => c.exitCode === 0 && c.settled === true));
  assert.match(receipt.commandsDigest, /^[0-9a-f]{64}$/);
});

test('the commands digest chains every command line in the order they settled: a short session recomputes it from its receipt', { skip }, async (t) => {
  const { manager } = managerFor(t);
  const session = await manager.acquire(scope('digest'), 'u');
  // A background command that settles after the later ones (round 10, R10-3).
  // It waits for a file the host writes only after the others settled.
  const background = await session.start({ shell: 'bash', script: 'until [ -e go ]; do sleep 0.05; done' });
  for (const word of ['a', 'b', 'c']) await session.exec(['/bin/echo', word]);
  await session.writeFile('go', '');
  await background.wait();
  const receipt = await session.end();
  assert.equal(receipt.commandsOmitted, 0);
  assert.deepEqual(receipt.commands.map((line) => line.seq), [1, 2, 3, 4]);
  const bySettling = [...receipt.commands].sort((a, b) => a.settledOrder - b.settledOrder);
  assert.deepEqual(bySettling.map((line) => line.seq), [2, 3, 4, 1]);
  let digest = crypto.createHash('sha256').digest('hex');
  for (const line of bySettling) digest = crypto.createHash('sha256').update(digest).update(JSON.stringify(line)).digest('hex');
  assert.equal(receipt.commandsDigest, digest);
});

test('an idle session is torn down after idleTimeoutMs, leaving no workspace or process', { skip }, async (t) => {
  const { manager } = managerFor(t, { idleTimeoutMs: 400 });
  const session = await manager.acquire(scope('idle'), 'u');
  const tag = marker('idle');
  await session.exec({ shell: 'bash', script: background(tag) });
  assert.ok(await eventually(() => session.receipt !== null, 10_000), 'the idle timer ended the session');
  assert.equal(session.receipt.endReason, 'idle');
  assert.equal(session.receipt.workspace.removed, true);
  assert.ok(!fs.existsSync(session.workspace));
  assert.deepEqual(pidsWithMarker(tag), []);
});

test('a session whose sandbox could not even be spawned (a root its uid cannot traverse) leaves no mount, claim or record behind', { skip }, async (t) => {
  // The sessions root under a 0700 directory: the launcher refuses the
  // sandbox (ERR_CORDON_WORKSPACE_UNUSABLE) before any process exists.
  const parent = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'cordon-sessions-unspawned-'));
  const root = path.join(parent, 'sessions');
  const store = memorySessionStore();
  const manager = createSessionManager({ secret: crypto.randomBytes(32), root, store, authorize: () => true });
  t.after(() => {
    unmountLeft(root);
    fs.rmSync(parent, { recursive: true, force: true });
  });
  await assert.rejects(manager.acquire(scope('unspawned'), 'u'), { code: 'ERR_CORDON_WORKSPACE_UNUSABLE' });
  assert.deepEqual(fs.readdirSync(root), [], 'the workspace was unmounted and removed');
  assert.deepEqual(await store.list(), [], 'no record');
  const claimText = (name) => {
    try {
      return fs.readFileSync(path.join(CLAIMS_DIR, name), 'utf8');
    } catch {
      return ''; // released meanwhile (another test's session)
    }
  };
  const claims = fs.readdirSync(CLAIMS_DIR).filter((name) => claimText(name).includes(root));
  assert.deepEqual(claims, [], 'no owner uid claim');
  assert.equal(manager.size, 0);
});
