'use strict';

// Section 13 (issue 22): remote vs local, in one run. Through a `cordon host`
// child process on a Unix socket and one on 127.0.0.1 under mutual TLS
// (certificates made now with openssl), beside the addon in this process:
//  - a cold Code Mode run, a pooled run, and a run with `calls` tool calls;
//  - the host's memory per idle session: `idle` sessions of `sleep` started
//    through the Unix host, the host process's VmRSS (/proc/PID/status) and
//    Pss (/proc/PID/smaps_rollup) after minus before, ÷ `idle`;
//  - sessions per second one host accepts: `/bin/true` started and waited,
//    sequentially and 4 at a time, beside local spawnIsolated.
// Medians and ratios to local; nothing is asserted.
//   node bench/remote.js [--smoke]   (section 13 of `node bench/run.js --only 13`)

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const cordon = require('..');
const { connectRemote } = require('../lib/remote');
const { startHost, tlsMaterial } = require('../__test__/remote-support');
const { sectionRows, renderTable, nowMs, sleep } = require('./stats');

const tools = [{ name: 'echo', description: 'echo', effect: 'read', inputSchema: { type: 'object' }, handler: (args) => args }];
const callsProgram = (calls) => `let n = 0; for (let i = 0; i < ${calls}; i += 1) n += (await tools.echo({ i })).i; return n;`;
// The second method for the same figure: each call timed inside the program (performance.now()).
const timedCallsProgram = (calls) => `const t = []; for (let i = 0; i < ${calls}; i += 1) { const s = performance.now(); await tools.echo({ i }); t.push((performance.now() - s) * 1000); } return t;`;

async function timeRuns(mode, code, { iterations, warmup, settleMs = 0 }) {
  const out = [];
  for (let i = 0; i < warmup + iterations; i += 1) {
    if (settleMs) await sleep(settleMs); // let a pool refill
    const started = nowMs();
    const result = await mode.run(code);
    if (!result.ok) throw new Error(JSON.stringify(result.error));
    if (i >= warmup) out.push(nowMs() - started);
  }
  return out;
}

async function codeModeTimes(api, c) {
  const cold = api.createCodeMode({ tools, limits: { toolCalls: c.calls } });
  const pooled = api.createCodeMode({ tools, pool: { size: 1 } });
  try {
    return {
      cold: await timeRuns(cold, 'return 1;', c),
      pooled: await timeRuns(pooled, 'return 1;', { ...c, settleMs: c.settleMs }),
      calls: await timeRuns(cold, callsProgram(c.calls), { iterations: c.callRuns, warmup: 1 }),
      perCall: await callsTimedInside(cold, c),
    };
  } finally {
    await pooled.close();
  }
}

async function callsTimedInside(mode, c) {
  const out = [];
  for (let i = 0; i < c.callRuns; i += 1) {
    const result = await mode.run(timedCallsProgram(c.calls));
    if (!result.ok) throw new Error(JSON.stringify(result.error));
    out.push(...result.result);
  }
  return out;
}

/** kB fields of /proc/PID/status (VmRSS) and /proc/PID/smaps_rollup (Pss). */
function hostMemory(pid) {
  const field = (text, name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)[1]);
  return {
    rss: field(fs.readFileSync(`/proc/${pid}/status`, 'utf8'), 'VmRSS'),
    pss: field(fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'), 'Pss'),
  };
}

/** Idle sessions opened at once: under one source's share of the handshake pool. */
const WAVE = 8;

async function waitStarted(runs) {
  const deadline = Date.now() + 60000;
  while (runs.some((r) => r.pid == null)) {
    if (Date.now() > deadline) throw new Error('idle sessions did not start within 60 s');
    await sleep(20);
  }
}

/** Per idle session: (host memory with `idle` sleeping sessions − before) ÷ idle, per round. */
async function idleMemory(host, client, { idle, rounds }) {
  const rss = [];
  const pss = [];
  const policy = client.readOnly();
  await client.spawnIsolated(['true'], { policy }).wait(); // the host's first session warms its allocator
  for (let r = 0; r < rounds; r += 1) {
    await sleep(200);
    const before = hostMemory(host.child.pid);
    // In waves: one client is one handshake source, which may hold at most
    // half the host's handshake pool at once (docs/remote.md › Handshake
    // slots); a burst of 32 had 15 refused.
    const runs = [];
    try {
      while (runs.length < idle) {
        const wave = Array.from({ length: Math.min(WAVE, idle - runs.length) }, () => client.spawnIsolated(['sleep', '600'], { policy }));
        runs.push(...wave);
        await waitStarted(wave);
      }
      await sleep(200);
      const after = hostMemory(host.child.pid);
      rss.push((after.rss - before.rss) / idle);
      pss.push((after.pss - before.pss) / idle);
    } finally {
      await Promise.all(runs.map((run) => run.stop().catch(() => {})));
    }
  }
  return { rss, pss };
}

/** Sessions started and waited per second, `concurrency` at a time, one figure per round. */
async function acceptRate(spawn, { sessions, rounds }, concurrency) {
  const rates = [];
  for (let r = 0; r < rounds; r += 1) {
    let next = 0;
    const worker = async () => {
      while (next < sessions) {
        next += 1;
        const exit = await spawn().wait();
        if (exit.returncode !== 0) throw new Error(`/bin/true exited ${JSON.stringify(exit)}`);
      }
    };
    const started = nowMs();
    await Promise.all(Array.from({ length: concurrency }, worker));
    rates.push(sessions / ((nowMs() - started) / 1000));
  }
  return rates;
}

async function acceptRates(contestants, c) {
  const rows = [];
  for (const concurrency of [1, 4]) {
    const label = concurrency === 1 ? 'sequential' : `${concurrency} at a time`;
    const results = [];
    for (const [name, spawn] of contestants) results.push([`${name}, ${label}`, await acceptRate(spawn, c, concurrency)]);
    rows.push(...sectionRows(`13 remote sessions/s (/bin/true), ${label}`, 'runs/s', results));
  }
  return rows;
}

async function remote(c) {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-bench-remote-'));
  const material = tlsMaterial(scratch);
  const unix = await startHost();
  const tls = await startHost({ listen: { tcp: '127.0.0.1:0' }, tls: { cert: material.file('host.pem'), key: material.file('host.key'), clientCa: material.file('ca.pem') } });
  const overUnix = connectRemote({ socket: unix.socket });
  const overTls = connectRemote({ url: tls.url, tls: { ca: material.ca, ...material.client } });
  try {
    const local = await codeModeTimes(cordon, c.codeMode);
    const u = await codeModeTimes(overUnix, c.codeMode);
    const t = await codeModeTimes(overTls, c.codeMode);
    const three = (key) => [['local', local[key]], ['remote unix', u[key]], ['remote tls', t[key]]];
    const memory = await idleMemory(unix, overUnix, c.memory);
    const trueRun = (api, program) => () => api.spawnIsolated([program], { policy: api.readOnly() });
    return [
      ...sectionRows('13 remote cold Code Mode run', 'ms', three('cold')),
      ...sectionRows('13 remote pooled Code Mode run', 'ms', three('pooled')),
      ...sectionRows(`13 remote run with ${c.codeMode.calls} tool calls`, 'ms', three('calls')),
      ...sectionRows('13 remote tool call, timed inside the program', 'µs', three('perCall')),
      ...sectionRows(`13 remote host memory per idle session (${c.memory.idle} sleeping)`, 'KiB', [['host VmRSS', memory.rss], ['host Pss', memory.pss]]),
      ...(await acceptRates([['local spawnIsolated', trueRun(cordon, '/bin/true')], ['host unix', trueRun(overUnix, 'true')], ['host tls', trueRun(overTls, 'true')]], c.accepts)),
    ];
  } finally {
    await Promise.all([overUnix.close(), overTls.close()]);
    await Promise.all([unix.stop(), tls.stop()]);
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

const FULL = { codeMode: { iterations: 30, warmup: 3, settleMs: 30, calls: 100, callRuns: 10 }, memory: { idle: 32, rounds: 3 }, accepts: { sessions: 60, rounds: 3 } };
const SMOKE = { codeMode: { iterations: 2, warmup: 0, settleMs: 0, calls: 5, callRuns: 1 }, memory: { idle: 2, rounds: 1 }, accepts: { sessions: 4, rounds: 1 } };

if (require.main === module) {
  remote(process.argv.includes('--smoke') ? SMOKE : FULL)
    .then((rows) => console.log(renderTable(rows)))
    .catch((error) => {
      console.error(error);
      process.exitCode = 1;
    });
}

module.exports = { remote, FULL, SMOKE };
