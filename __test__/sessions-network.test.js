'use strict';

// A session's network: none by default; with an allowlist, the launcher's
// mediated engine (its proxy variables reach every command), and no
// wildcard or IP literal in that allowlist (docs/sessions.md). Only
// loopback addresses are used.

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const fs = require('node:fs');
const http = require('node:http');
const { createSessionManager } = require('..');
const { sessionsSkipReason, managerFor, scope } = require('./sessions-support');

const skip = sessionsSkipReason();

test('a session allowlist with a wildcard or an IP literal is refused before anything is created', () => {
  const root = fs.mkdtempSync('/tmp/cordon-sessions-net-');
  fs.rmdirSync(root);
  for (const allow of [['*:443'], ['*.example.com:443'], ['1.2.3.4:443'], ['[::1]:80'], [{ host: '127.0.0.1', port: 80, allowPrivateAddresses: true }], [{ host: '::1', port: 80 }], []]) {
    assert.throws(() => createSessionManager({ secret: crypto.randomBytes(32), root, authorize: () => true, network: { allow } }), { code: 'ERR_CORDON_INVALID_OPTIONS' }, JSON.stringify(allow));
  }
  assert.ok(!fs.existsSync(root), 'a refused option created no sessions root');
});

test('without a network option a session command cannot open an internet socket', { skip }, async (t) => {
  const { manager } = managerFor(t);
  const session = await manager.acquire(scope('no-net'), 'u');
  const result = await session.exec(['/usr/bin/python3', '-c', 'import socket\ntry:\n  socket.socket()\n  print("socket")\nexcept OSError as e:\n  print("refused", e.errno)']);
  assert.equal(result.stdout, 'refused 1\n', result.stderr);
});

test('a session with an allowlist reaches an allowed destination through the mediated proxy, and nothing else', { skip }, async (t) => {
  const server = http.createServer((req, res) => res.end(`hello ${req.url}`));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  const { port } = server.address();
  const { manager } = managerFor(t, { network: { allow: [{ host: 'localhost', port, allowPrivateAddresses: true }] } });
  const session = await manager.acquire(scope('net'), 'u');
  const fetch = (url) => session.exec(['/usr/bin/python3', '-c', `import urllib.request\ntry:\n  print(urllib.request.urlopen(${JSON.stringify(url)}, timeout=10).read().decode())\nexcept Exception as e:\n  print("refused", type(e).__name__)`]);
  const allowed = await fetch(`http://localhost:${port}/turn-1`);
  assert.equal(allowed.stdout, 'hello /turn-1\n', allowed.stderr);
  const other = await fetch(`http://localhost:${port + 1 === 65536 ? port - 1 : port + 1}/`);
  assert.match(other.stdout, /^refused/);
  const literal = await fetch(`http://127.0.0.1:${port}/`);
  assert.match(literal.stdout, /^refused/, 'an address the allowlist does not name is refused');
});

test('a per-session allowlist given to acquire is checked like the manager one before authorize runs or anything is created', async (t) => {
  const root = fs.mkdtempSync('/tmp/cordon-sessions-net-');
  t.after(() => fs.rmSync(root, { recursive: true, force: true }));
  let asked = 0;
  const manager = createSessionManager({ secret: crypto.randomBytes(32), root, authorize: () => { asked += 1; return true; } });
  for (const allow of [['*:443'], ['1.2.3.4:443'], [{ host: '::1', port: 80 }], []]) {
    await assert.rejects(manager.acquire(scope('per-session-bad'), 'u', { network: { allow } }), { code: 'ERR_CORDON_INVALID_OPTIONS' }, JSON.stringify(allow));
  }
  await assert.rejects(manager.acquire(scope('per-session-bad'), 'u', { netwrok: {} }), { code: 'ERR_CORDON_INVALID_OPTIONS' });
  assert.equal(asked, 0, 'authorize never ran for a refused option');
  assert.deepEqual(fs.readdirSync(root), [], 'nothing was created');
});

test('each session gets its own allowlist: one reaches its destination, a session of the same manager without one reaches nothing, and another allowlist for a live session is refused', { skip }, async (t) => {
  const server = http.createServer((req, res) => res.end(`hello ${req.url}`));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  const { port } = server.address();
  const { manager } = managerFor(t);
  const network = { allow: [{ host: 'localhost', port, allowPrivateAddresses: true }] };
  const open = await manager.acquire(scope('net-open'), 'u', { network });
  const closed = await manager.acquire(scope('net-closed'), 'u');
  const fetch = (session) => session.exec(['/usr/bin/python3', '-c', `import urllib.request\ntry:\n  print(urllib.request.urlopen("http://localhost:${port}/x", timeout=10).read().decode())\nexcept Exception as e:\n  print("refused", type(e).__name__)`]);
  assert.equal((await fetch(open)).stdout, 'hello /x\n');
  assert.match((await fetch(closed)).stdout, /^refused/, 'the session without an allowlist has no network');
  const again = await manager.acquire(scope('net-open'), 'u', { network: { allow: [{ allowPrivateAddresses: true, port, host: 'localhost' }] } });
  assert.equal(again.origin, 'resumed', 'the same allowlist (keys in another order) resumes');
  await assert.rejects(manager.acquire(scope('net-open'), 'u', { network: { allow: [{ host: 'localhost', port: port === 1 ? 2 : port - 1, allowPrivateAddresses: true }] } }), { code: 'ERR_CORDON_SESSION_NETWORK_CONFLICT' });
  await assert.rejects(manager.acquire(scope('net-closed'), 'u', { network }), { code: 'ERR_CORDON_SESSION_NETWORK_CONFLICT' });
});

test('a session\'s network quotas are per session and 16x the per-run ones: 300 requests in one turn, then more in the next, all answered (round 9, R9-12)', { skip }, async (t) => {
  const server = http.createServer((req, res) => res.end('hello\n'));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  const { port } = server.address();
  const { manager } = managerFor(t);
  const session = await manager.acquire(scope('budget'), 'u', { network: { allow: [{ host: 'localhost', port, allowPrivateAddresses: true }] } });
  const burst = await session.exec({ shell: 'bash', script: `ok=0; for i in $(seq 1 300); do curl -s -m 10 -o /dev/null -w '%{http_code}' http://localhost:${port}/ | grep -q 200 && ok=$((ok+1)); done; echo $ok` }, { timeoutMs: 600_000 });
  assert.equal(burst.stdout, '300\n', 'past the per-run 256 streams');
  const later = await session.exec(['curl', '-s', '-m', '10', `http://localhost:${port}/`]);
  assert.equal(later.stdout, 'hello\n', later.stderr);
  assert.equal(later.notice, undefined, 'the budget is not spent');
  const receipt = await session.end();
  assert.equal(receipt.sandbox.receipt.networkReceipts.filter((r) => r.result === 'allowed').length, 301);
});

test('once a session\'s stream budget is spent, every later exec result (and the model\'s bash tool result) says so instead of leaving a bare curl exit 7 (round 9, R9-12)', { skip }, async (t) => {
  const server = http.createServer((req, res) => res.end('hello\n'));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  const { port } = server.address();
  const base = require('..').workspaceWrite();
  const { manager } = managerFor(t, { policy: { ...base, resources: { ...base.resources, networkStreams: 10 } } });
  const session = await manager.acquire(scope('spent'), 'u', { network: { allow: [{ host: 'localhost', port, allowPrivateAddresses: true }] } });
  const url = `http://localhost:${port}/`;
  const first = await session.exec(['curl', '-s', '-m', '10', url]);
  assert.equal(first.stdout, 'hello\n', first.stderr);
  assert.equal(first.notice, undefined);
  const spend = await session.exec({ shell: 'bash', script: `for i in $(seq 1 12); do curl -s -m 10 -o /dev/null ${url}; done; echo done` }, { timeoutMs: 300_000 });
  assert.match(spend.notice, /network budget is spent \(networkStreams: 10 connections per session/);
  const { sessionToolSpecs } = require('../lib/adapters/session-tools');
  const bash = sessionToolSpecs(session).find((spec) => spec.name === 'bash');
  const told = await bash.run({ command: `curl -s -m 10 ${url}; echo "exit $?"` });
  assert.equal(told.stdout, 'exit 7\n');
  assert.match(told.notice, /network budget is spent/, 'the model is told why');
  assert.equal((await session.exec(['/bin/true'])).notice, spend.notice, 'sticky: the run\'s quota never comes back');
});
