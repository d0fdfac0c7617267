'use strict';

// Session policy hook, per-tenant bound, budget hook and audit records
// (docs/sessions.md): a blocked operation spawns or opens nothing and is
// audited; a refused admission charges nothing; redaction is linear and
// happens before the cut; a failing sink never fails the operation.

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const fs = require('node:fs');
const { sessionsSkipReason, managerFor, marker, pidsWithMarker, scope } = require('./sessions-support');
const { auditRecord } = require('../lib/sessions/audit');

const skip = sessionsSkipReason();

test('an operation the allow hook refuses spawns and opens nothing, is refused with ERR_CORDON_SESSION_POLICY_DENIED, and is audited', { skip }, async (t) => {
  const records = [];
  const seen = [];
  const { manager } = managerFor(t, {
    audit: (r) => records.push(r),
    allow: (operation, actor) => {
      seen.push([operation.kind, actor]);
      if (operation.kind === 'exec' && operation.argv.join(' ').includes('curl')) return { allow: false, reason: 'no network tools' };
      if (operation.path?.startsWith('private/')) return false;
      return true;
    },
  });
  const session = await manager.acquire(scope('policy'), 'alice');
  const tag = marker('blocked');
  await assert.rejects(session.exec({ shell: 'bash', script: `curl x; exec -a ${tag} sleep 30` }), { code: 'ERR_CORDON_SESSION_POLICY_DENIED' });
  assert.deepEqual(pidsWithMarker(tag), [], 'nothing was spawned');
  await assert.rejects(session.writeFile('private/x', 'data'), { code: 'ERR_CORDON_SESSION_POLICY_DENIED' });
  assert.equal((await session.exec(['/bin/echo', 'fine'])).stdout, 'fine\n');
  const echoed = crypto.createHash('sha256').update(JSON.stringify(['/bin/echo', 'fine'])).digest('hex');
  assert.deepEqual((await session.end()).commands.map((c) => c.argvSha256), [echoed], 'the agent was only ever asked to run the allowed command');
  const denials = records.filter((r) => r.denial !== null);
  assert.deepEqual(denials.map((r) => [r.operation, r.actor]), [['exec', 'alice'], ['writeFile', 'alice']]);
  assert.match(denials[0].denial, /ERR_CORDON_SESSION_POLICY_DENIED: .*no network tools/);
  assert.equal(denials[1].path, 'private/x');
  const ok = records.find((r) => r.operation === 'exec' && r.denial === null);
  assert.deepEqual([ok.exitCode, ok.bytes, ok.command], [0, 5, '/bin/echo fine']);
  assert.ok(seen.some(([kind]) => kind === 'writeFile'));
});

test('per-tenant sessions are bounded before the budget hook is asked, and a budget denial creates nothing', { skip }, async (t) => {
  const charged = [];
  const { manager, root } = managerFor(t, {
    maxSessionsPerTenant: 1,
    budget: (s) => {
      if (s.tenant === 'broke') return { allow: false, reason: 'out of credit' };
      charged.push(s.conversation);
      return true;
    },
  });
  await manager.acquire(scope('one'), 'u');
  await assert.rejects(manager.acquire(scope('two'), 'u'), { code: 'ERR_CORDON_SESSION_LIMIT' });
  assert.deepEqual(charged, ['one'], 'the refused second session never reached the budget');
  assert.equal((await manager.acquire(scope('one'), 'u')).origin, 'resumed', 'resuming is not a new session');
  await manager.acquire(scope('other', 'beta'), 'u');
  await assert.rejects(manager.acquire(scope('x', 'broke'), 'u'), { code: 'ERR_CORDON_SESSION_BUDGET' });
  assert.equal(fs.readdirSync(root).length, 2);
});

test('a sink that throws or rejects never fails the operation it records', { skip }, async (t) => {
  for (const audit of [() => { throw new Error('sink down'); }, () => Promise.reject(new Error('sink down'))]) {
    const { manager } = managerFor(t, { audit });
    const session = await manager.acquire(scope('sink'), 'u');
    assert.equal((await session.exec(['/bin/echo', 'ok'])).stdout, 'ok\n');
    await session.writeFile('f', 'x');
    assert.equal((await session.end()).workspace.removed, true);
  }
});

test('audit redaction of 384 KiB adversarial commands stays linear (each under 1 s) and happens before the cut', () => {
  const secret = `${'A1'.repeat(20)}`;
  const base = (argv) => auditRecord({ session: 's', scope: { tenant: 't', conversation: 'c' }, actor: 'a', operation: 'exec', argv });
  // A token straddling the 4 KiB cut: redacted whole, no prefix left.
  const argv = ['/bin/bash', '-c', `echo "${'x '.repeat(2030)}${secret}${'y '.repeat(100)}"`];
  assert.ok(argv.join(' ').slice(0, 4096).includes('A1A1A1'), 'cut first, a prefix of the token would be kept');
  const straddle = base(argv);
  assert.equal(straddle.commandTruncated, true);
  assert.ok(!straddle.command.includes('A1A1A1'), straddle.command.slice(-80));
  assert.ok(straddle.command.includes('[REDACTED]'));
  // Shapes that make naive scanners backtrack or rescan: unterminated quotes and
  // escapes, one endless token, a secret key repeated. A super-linear scan of
  // 384 KiB takes minutes; the linear one takes milliseconds (bound: 1 s each).
  const KIB384 = 384 * 1024;
  const shapes = {
    quotes: `password="${'"\\'.repeat(KIB384 / 2)}`,
    token: `echo "${'a1'.repeat(KIB384 / 2)}`,
    keys: 'apiKey=apiKey='.repeat(KIB384 / 14),
  };
  for (const [name, script] of Object.entries(shapes)) {
    const started = performance.now();
    const record = base(['/bin/bash', '-c', script]);
    const ms = performance.now() - started;
    assert.ok(Buffer.byteLength(record.command) <= 4096, name);
    assert.ok(ms < 1000, `${name}: ${ms} ms for 384 KiB`);
  }
});
