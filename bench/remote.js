'use strict';

// Remote vs local, in one run (issue 22): a cold Code Mode run, a pooled
// run, and 100 tool calls in one run — locally (the addon), through a
// `cordon host` child process on a Unix socket, and through one on
// 127.0.0.1 under mutual TLS (certificates made now with openssl). Prints
// medians and the ratio to local; nothing is asserted.
//   node bench/remote.js [--iterations N]

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const cordon = require('..');
const { connectRemote } = require('../lib/remote');
const { startHost, tlsMaterial } = require('../__test__/remote-support');
const { sectionRows, renderTable, nowMs } = require('./stats');

const argIndex = process.argv.indexOf('--iterations');
const ITERATIONS = argIndex > 0 ? Number(process.argv[argIndex + 1]) : 30;
const WARMUP = 3;
const TOOL_CALLS = 100;
const tools = [{ name: 'echo', description: 'echo', effect: 'read', inputSchema: { type: 'object' }, handler: (args) => args }];
const CALLS = `let n = 0; for (let i = 0; i < ${TOOL_CALLS}; i += 1) n += (await tools.echo({ i })).i; return n;`;

async function timeRuns(mode, code, iterations) {
  const out = [];
  for (let i = 0; i < WARMUP + iterations; i += 1) {
    const started = nowMs();
    const result = await mode.run(code);
    if (!result.ok) throw new Error(JSON.stringify(result.error));
    if (i >= WARMUP) out.push(nowMs() - started);
  }
  return out;
}

async function contestant(api) {
  const cold = api.createCodeMode({ tools, limits: { toolCalls: TOOL_CALLS } });
  const pooled = api.createCodeMode({ tools, pool: { size: 1 } });
  try {
    const coldMs = await timeRuns(cold, 'return 1;', ITERATIONS);
    const pooledMs = [];
    for (let i = 0; i < WARMUP + ITERATIONS; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 30)); // let the pool refill
      const started = nowMs();
      const result = await pooled.run('return 1;');
      if (!result.ok) throw new Error(JSON.stringify(result.error));
      if (i >= WARMUP) pooledMs.push(nowMs() - started);
    }
    const callMs = await timeRuns(cold, CALLS, Math.max(5, Math.floor(ITERATIONS / 3)));
    return { coldMs, pooledMs, callMs };
  } finally {
    await pooled.close();
  }
}

async function main() {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-bench-remote-'));
  const material = tlsMaterial(scratch);
  const unix = await startHost();
  const tls = await startHost({ listen: { tcp: '127.0.0.1:0' }, tls: { cert: material.file('host.pem'), key: material.file('host.key'), clientCa: material.file('ca.pem') } });
  try {
    const local = await contestant(cordon);
    const overUnix = await contestant(connectRemote({ socket: unix.socket }));
    const overTls = await contestant(connectRemote({ url: tls.url, tls: { ca: material.ca, ...material.client } }));
    const rows = [
      ...sectionRows('cold Code Mode run', 'ms', [['local', local.coldMs], ['remote unix', overUnix.coldMs], ['remote tls', overTls.coldMs]]),
      ...sectionRows('pooled Code Mode run', 'ms', [['local', local.pooledMs], ['remote unix', overUnix.pooledMs], ['remote tls', overTls.pooledMs]]),
      ...sectionRows(`run with ${TOOL_CALLS} tool calls`, 'ms', [['local', local.callMs], ['remote unix', overUnix.callMs], ['remote tls', overTls.callMs]]),
    ];
    console.log(renderTable(rows));
  } finally {
    await Promise.all([unix.stop(), tls.stop()]);
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
