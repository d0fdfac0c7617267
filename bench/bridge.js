'use strict';

// Sections 3 and 4: the bridge between the host and the sandbox.
//   3  tool-call round trip, N calls in one run, through the whole stack
//      (runner → fd 3 → launcher pumps → host validation → handler → back),
//      timed between the first and the last handler entry (result.events is
//      capped at 1000 events, so it cannot time long runs), vs a Node ↔ child
//      Node JSON-lines echo and a byte-for-byte `cat` echo over a raw
//      socketpair; cordon-runner over a bare socketpair (the runner's share);
//      and concurrency: the same calls with a 20 ms handler, one at a time vs
//      Promise.all with 8 outstanding, and Promise.all of 8 calls to a 200 ms
//      tool timed inside the run (performance.now() in the sandbox)
//   4  relay throughput: bytes written to `protocol`, echoed by `cat` on the
//      sandbox's fd 3 and read back, vs the same `cat` on a plain child's fd 3
//      (a socketpair Node wraps in a net.Socket)

const { spawn } = require('node:child_process');
// This checkout, loaded on first use: bench/compare.js takes the relay rows
// from here while measuring another build, whose addon is the only one its
// worker should load.
const here = () => require('..');
const { rawEchoUs, catEchoUs, runnerOverSocketpairUs } = require('./peers');
const { sectionRows, nowMs } = require('./stats');

const echoTool = {
  name: 'echo', description: 'Echo the arguments', effect: 'read',
  inputSchema: { type: 'object', properties: { i: { type: 'integer' } } }, handler: (args) => args,
};

/** A tool that records when each handler was entered. */
function timedEcho(entries) {
  return { ...echoTool, handler: (args) => { entries.push(nowMs()); return args; } };
}

/** µs per call between the first and the last handler entry of one run of `calls` sequential calls. */
async function codeModeUsPerCall(mode, entries, calls) {
  entries.length = 0;
  const code = `for (let i = 0; i < ${calls}; i++) { const r = await tools.echo({ i }); if (r.i !== i) throw new Error('bad echo'); } return ${calls};`;
  const result = await mode.run(code);
  if (!result.ok) throw new Error(`run failed: ${JSON.stringify(result.error)}`);
  if (entries.length !== calls) throw new Error(`${entries.length} handler entries for ${calls} calls`);
  return ((entries[calls - 1] - entries[0]) / (calls - 1)) * 1000;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const sleepTool = { ...echoTool, name: 'sleep', handler: async (args) => { await sleep(args.ms); return args.i; } };

/** ms inside the run (the sandbox's performance.now()) for `calls` calls to a handler sleeping `ms`. */
async function insideRunMs(mode, { calls, ms, parallel }) {
  const body = parallel
    ? `await Promise.all(Array.from({ length: ${calls} }, (_, i) => tools.sleep({ i, ms: ${ms} })));`
    : `for (let i = 0; i < ${calls}; i++) await tools.sleep({ i, ms: ${ms} });`;
  const result = await mode.run(`const t0 = performance.now(); ${body} return performance.now() - t0;`);
  if (!result.ok) throw new Error(`run failed: ${JSON.stringify(result.error)}`);
  return result.result;
}

async function concurrency({ runs, concurrentCalls }) {
  const { calls, handlerMs, slowMs } = concurrentCalls;
  const mode = here().createCodeMode({ tools: [sleepTool], limits: { toolCalls: calls, timeoutMs: 120000, maxOutstandingCalls: 8 } });
  const samples = { sequential: [], parallel: [], slow8: [] };
  for (let i = 0; i < runs; i += 1) {
    samples.sequential.push(await insideRunMs(mode, { calls, ms: handlerMs, parallel: false }));
    samples.parallel.push(await insideRunMs(mode, { calls, ms: handlerMs, parallel: true }));
    samples.slow8.push(await insideRunMs(mode, { calls: 8, ms: slowMs, parallel: true }));
  }
  return [
    ...sectionRows(`3 ${calls} calls, ${handlerMs} ms handler`, 'ms', [
      ['sequential (await in a loop)', samples.sequential],
      ['Promise.all, 8 outstanding', samples.parallel],
    ]),
    ...sectionRows(`3 Promise.all 8 x ${slowMs} ms tool`, 'ms', [['cordon, inside the run', samples.slow8]]),
  ];
}

async function toolCalls({ runs, warmup = 0, calls, ...rest }) {
  const entries = [];
  const mode = here().createCodeMode({ tools: [timedEcho(entries)], limits: { toolCalls: calls, timeoutMs: 120000 } });
  const samples = { cordon: [], echo: [], cat: [], runner: [] };
  for (let i = 0; i < warmup + runs; i += 1) {
    // Warm-up rounds let V8 optimize both sides' JSON and validation paths before counting.
    const keep = i >= warmup;
    const a = await codeModeUsPerCall(mode, entries, calls);
    const b = await rawEchoUs(calls);
    const c = await runnerOverSocketpairUs(here().runnerPath, calls);
    const d = await catEchoUs(calls);
    if (keep) { samples.cordon.push(a); samples.echo.push(b); samples.runner.push(c); samples.cat.push(d); }
  }
  const perSecond = (values) => values.map((us) => 1e6 / us);
  return [
    ...sectionRows(`3 tool call (${calls}/run)`, 'µs', [
      ['raw socketpair echo (node)', samples.echo],
      ['raw socketpair echo (cat)', samples.cat],
      ['cordon tool call round trip', samples.cordon],
      ['cordon-runner, bare socketpair', samples.runner],
    ]),
    ...sectionRows('3 tool call rate', 'calls/s', [
      ['raw socketpair echo (node)', perSecond(samples.echo)],
      ['cordon tool calls in one run', perSecond(samples.cordon)],
    ]),
    ...(rest.concurrentCalls ? await concurrency({ runs, concurrentCalls: rest.concurrentCalls }) : []),
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

/** `cordon`: the build to measure (bench/compare.js), this checkout by default. */
async function relayCordon(totalBytes, cordon = here()) {
  const execution = cordon.spawnIsolated(['/usr/bin/sh', ...CAT_FD3], { policy: cordon.readOnly() });
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

module.exports = { toolCalls, relay, relayCordon, relayRaw };
