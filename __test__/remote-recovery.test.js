'use strict';

// cordon/remote against a `cordon host` child process that is SIGKILLed
// mid-run and restarted on the same state (docs/remote.md § Crash
// recovery): the client's run fails without hanging, and `receipts()` on a
// fresh connection gets the restarted host's true answer — `host-lost`, no
// exit data.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const path = require('node:path');
const { once } = require('node:events');
const { startHost, CORDON } = require('./remote-support');
const { connectRemote } = require('../lib/remote');

test('after the host is killed mid-run, the restarted host answers receipts() with a host-lost receipt', async (t) => {
  const first = await startHost();
  t.after(() => first.stop());
  const remote = connectRemote({ socket: first.socket }, { slackMs: 3000 });
  const run = remote.spawnIsolated(['sh', '-c', 'echo ready >&3; exec sleep 300'], { invocationId: 'js-lost-1', policy: remote.readOnly() });
  const [ready] = await once(run.protocol, 'data');
  assert.equal(ready.toString(), 'ready\n');
  first.child.kill('SIGKILL');
  await assert.rejects(run.wait(), { code: 'ERR_CORDON_REMOTE_DISCONNECTED' });
  // The client sees the socket close before the killed host is reaped: wait for that, or the
  // new host may still find stateDir locked and exit 125.
  if (first.child.exitCode === null && first.child.signalCode === null) await once(first.child, 'exit');

  // The same configuration and stateDir: a new host over the old one's socket path.
  const second = spawn(CORDON, ['host', '--config', path.join(first.dir, 'host.json')], { stdio: ['ignore', 'ignore', 'pipe'] });
  t.after(() => { if (second.exitCode === null) second.kill('SIGTERM'); });
  let output = '';
  second.stderr.on('data', (chunk) => { output += chunk; });
  const deadline = Date.now() + 20_000;
  while (!/listening on/.test(output)) {
    assert.ok(Date.now() < deadline && second.exitCode === null, output);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  assert.match(output, /recovered 1 run\(s\) a previous host lost/);
  const [receipt, ...more] = await remote.receipts('js-lost-1');
  assert.equal(more.length, 0);
  assert.equal(receipt.invocationId, 'js-lost-1');
  assert.equal(receipt.outcome.status, 'host-lost');
  assert.equal(receipt.outcome.exitCode, null);
  assert.equal(receipt.stop.reason, 'host-lost');
  assert.deepEqual(await remote.receipts('js-lost-2'), []);
  await assert.rejects(remote.receipts('../x'), { code: 'ERR_CORDON_INVALID_OPTIONS' });
  await remote.close();
  second.kill('SIGTERM');
  await once(second, 'exit');
});
