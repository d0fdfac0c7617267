'use strict';

// cordon/remote's declarations (lib/remote/index.d.ts, .d.mts): a consumer
// compiles under `tsc --strict --module nodenext` as CommonJS and as ESM; a
// host path where the remote API takes uploaded files does not.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { tscConsumer } = require('./tsc-consumer');

const CONSUMER = `
import { connectRemote, CordonError, type RemoteClient, type RemoteExecution } from 'cordon/remote';

export async function use(): Promise<number | null> {
  const remote: RemoteClient = connectRemote({ socket: '/run/cordon/host.sock' }, { slackMs: 5000 });
  const tls = connectRemote({ url: 'tls://127.0.0.1:7443', tls: { ca: 'CA', cert: 'C', key: 'K' }, token: 't' });
  void tls;
  const execution: RemoteExecution = remote.spawnIsolated(['cordon-runner'], {
    policy: remote.readOnly(), deadlineMs: 1000, workspace: { files: { 'a.txt': 'x', 'b.bin': Buffer.from([1]) } },
  });
  const clamped = execution.remote?.clamped;
  void clamped;
  const mode = remote.createCodeMode({ tools: [] });
  const run = await mode.run('return 1;');
  const pool = remote.createPool({ command: ['cordon-runner'], policy: remote.profile('untrusted') }, { size: 1 });
  await pool.close();
  try {
    return (await execution.wait()).returncode;
  } catch (error) {
    if (error instanceof CordonError && error.code === 'ERR_CORDON_REMOTE_TIMEOUT') return run.ok ? 1 : 0;
    throw error;
  } finally {
    await remote.close();
  }
}
`;

test('a consumer of cordon/remote type-checks with tsc --strict, as CommonJS and as ESM', (t) => {
  const check = tscConsumer(t);
  for (const file of ['consumer.ts', 'consumer.mts']) {
    const result = check(CONSUMER, file);
    assert.equal(result.status, 0, `${file}: ${result.stdout}${result.stderr}`);
  }
});

test('a workspace given as a host directory fails to type-check against cordon/remote', (t) => {
  const result = tscConsumer(t)(CONSUMER.replace("workspace: { files: { 'a.txt': 'x', 'b.bin': Buffer.from([1]) } }", "workspace: '/srv/data'"), 'consumer.ts');
  assert.notEqual(result.status, 0);
  assert.match(result.stdout, /consumer\.ts.*error TS\d+/);
});
