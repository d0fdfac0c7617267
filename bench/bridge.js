'use strict';

// Sections 3 and 4: the bridge between the host and the sandbox.
//   3  tool-call round trip, N calls in one run, through the whole stack
//      (runner → fd 3 → launcher pumps → host validation → handler → back)
//      vs a Node ↔ child Node JSON-lines echo over a raw socketpair; plus
//      cordon-runner over a bare socketpair (the runner's share)
//   4  relay throughput: bytes written to `protocol`, echoed by `cat` on the
//      sandbox's fd 3 and read back, vs the same `cat` on a plain child's fd 3
//      (a socketpair Node wraps in a net.Socket)

const { spawn } = require('node:child_process');
const { createCodeMode, spawnIsolated, readOnly, runnerPath } = require('..');
const { rawEchoUs, runnerOverSocketpairUs } = require('./peers');
const { sectionRows, nowMs } = require('./stats');

const echoTool = {
  name: 'echo', description: 'Echo the arguments', effect: 'read',
  inputSchema: { type: 'object', properties: { i: { type: 'integer' } } }, handler: (args) => args,
};

/** µs per call from the first tool.requested to the last tool.completed event of one run. */
async function codeModeUsPerCall(mode, calls) {
  const code = `for (let i = 0; i < ${calls}; i++) { const r = await tools.echo({ i }); if (r.i !== i) throw new Error('bad echo'); } return ${calls};`;
  const result = await mode.run(code);
  if (!result.ok) throw new Error(`run failed: ${JSON.stringify(result.error)}`);
  const first = result.events.find((e) => e.type === 'tool.requested');
  const last = result.events.filter((e) => e.type === 'tool.completed').at(-1);
  return ((last.time - first.time) / (calls - 1)) * 1000;
}

async function toolCalls({ runs, warmup = 0, calls }) {
  const mode = createCodeMode({ tools: [echoTool], limits: { toolCalls: calls, timeoutMs: 120000 } });
  const samples = { cordon: [], echo: [], runner: [] };
  for (let i = 0; i < warmup + runs; i += 1) {
    // Warm-up rounds let V8 optimize both sides' JSON and validation paths before counting.
    const keep = i >= warmup;
    const a = await codeModeUsPerCall(mode, calls);
    const b = await rawEchoUs(calls);
    const c = await runnerOverSocketpairUs(runnerPath, calls);
    if (keep) { samples.cordon.push(a); samples.echo.push(b); samples.runner.push(c); }
  }
  const perSecond = (values) => values.map((us) => 1e6 / us);
  return [
    ...sectionRows(`3 tool call (${calls}/run)`, 'µs', [
      ['raw socketpair echo (node)', samples.echo],
      ['cordon tool call round trip', samples.cordon],
      ['cordon-runner, bare socketpair', samples.runner],
    ]),
    ...sectionRows('3 tool call rate', 'calls/s', [
      ['raw socketpair echo (node)', perSecond(samples.echo)],
      ['cordon tool calls in one run', perSecond(samples.cordon)],
    ]),
  ];
}

/** MB/s of `totalBytes` written to `duplex` and read back in full. */
function pumpThrough(writable, readable, totalBytes) {
  return new Promise((resolve, reject) => {
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    let written = 0;
    let read = 0;
    const started = nowMs();
    readable.on('data', (data) => {
      read += data.length;
      if (read >= totalBytes) resolve(totalBytes / 1e6 / ((nowMs() - started) / 1000));
    });
    readable.on('error', reject);
    const write = () => {
      while (written < totalBytes) {
        written += chunk.length;
        if (!writable.write(chunk)) return writable.once('drain', write);
      }
      return writable.end();
    };
    write();
  });
}

const CAT_FD3 = ['-c', 'exec cat <&3 >&3'];

async function relayCordon(totalBytes) {
  const execution = spawnIsolated(['/usr/bin/sh', ...CAT_FD3], { policy: readOnly() });
  execution.stderr.resume();
  const mbps = await pumpThrough(execution.protocol, execution.protocol, totalBytes);
  await execution.wait();
  return mbps;
}

async function relayRaw(totalBytes) {
  const child = spawn('/usr/bin/sh', CAT_FD3, { stdio: ['ignore', 'ignore', 'ignore', 'pipe'] });
  const socket = child.stdio[3];
  const mbps = await pumpThrough(socket, socket, totalBytes);
  await new Promise((resolve) => child.on('close', resolve));
  return mbps;
}

async function relay({ runs, megabytes }) {
  const totalBytes = megabytes * 1024 * 1024;
  const samples = { cordon: [], raw: [] };
  for (let i = 0; i < runs; i += 1) {
    samples.cordon.push(await relayCordon(totalBytes));
    samples.raw.push(await relayRaw(totalBytes));
  }
  return sectionRows(`4 relay (${megabytes} MiB echoed)`, 'MB/s', [
    ['net.Socket, raw socketpair', samples.raw],
    ['cordon protocol relay', samples.cordon],
  ]);
}

module.exports = { toolCalls, relay };
