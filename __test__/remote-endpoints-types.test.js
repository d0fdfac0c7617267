'use strict';

// lib/remote/endpoints.d.ts: a consumer that spreads sessions over hosts
// compiles under `tsc --strict --module nodenext` as CommonJS and as ESM,
// and one that passes a setting the module does not have does not.

const test = require('node:test');
const assert = require('node:assert/strict');
const { tscConsumer } = require('./tsc-consumer');

const CONSUMER = `
import { connectEndpoints, type Endpoints } from 'cordon/lib/remote/endpoints.js';

export async function use(): Promise<number | null> {
  const fixed: Endpoints = connectEndpoints({ endpoints: [{ socket: '/run/a.sock' }, { url: 'tls://10.0.0.1:7443', tls: { ca: 'CA', cert: 'C', key: 'K' } }] });
  const hosts = connectEndpoints({
    service: { name: 'cordon-host-endpoints.cordon-hosts.svc.cluster.local', port: 7443, tls: { ca: 'CA', cert: 'C', key: 'K' } },
  }, { strategy: 'random', maxAttempts: 3, maxWaitMs: 5000, slackMs: 5000 });
  const labels: string[] = await hosts.endpoints();
  void labels;
  const code: number | null = await hosts.run(async (client, { endpoint, attempt }) => {
    void endpoint; void attempt;
    return (await client.spawnIsolated(['cordon-runner'], { policy: client.readOnly() }).wait()).returncode;
  });
  await fixed.close();
  await hosts.close();
  return code;
}
`;

test('a consumer of lib/remote/endpoints.js type-checks with tsc --strict, as CommonJS and as ESM', (t) => {
  const check = tscConsumer(t);
  for (const file of ['consumer.ts', 'consumer.mts']) {
    const result = check(CONSUMER, file);
    assert.equal(result.status, 0, `${file}: ${result.stdout}${result.stderr}`);
  }
});

test('a strategy the module does not have fails to type-check', (t) => {
  const result = tscConsumer(t)(CONSUMER.replace("strategy: 'random'", "strategy: 'least-loaded'"), 'consumer.ts');
  assert.notEqual(result.status, 0);
  assert.match(result.stdout, /consumer\.ts.*error TS\d+/);
});
