'use strict';

// Two builds of cordon, interleaved in one process tree, row by row:
//
//   node bench/compare.js --a /work/main --b . [--rounds 6] [--rows cold,coldnet,coldrun,pooled,early,tool,connect,tput,relay] [--smoke]
//
// A build is a checkout whose addon (.node), cordon-runner and index.js are
// built (`npm run build`). Each round starts one worker process per build
// (order alternating A,B / B,A, so load drifts hit both alike); a worker
// `require`s its build and takes a few samples of each row:
//   cold    spawnIsolated(["/bin/true"]) → wait(), ms
//   coldnet the cold row with network "mediated" (one allowed destination)
//   coldrun createCodeMode({tools: []}).run("return 1") with no pool: a
//           sandbox and a runner started per run, ms (its baseline is the
//           cold row's raw bwrap when both rows are asked for)
//   pooled  createCodeMode({pool: {size: 2}}).run("return 1"), ms (the pool
//           refills between samples, untimed)
//   early   the pooled row with createCodeMode({resultBeforeTeardown: true}):
//           run() resolves at the terminal frame (docs/code-mode.md › Result
//           before teardown); a build without the option (it refuses it)
//           runs the ordinary pooled row, so b/a is "before teardown" vs
//           "after"; `final` is awaited untimed before the next sample
//   tool    µs per tool call between the first and last handler entry of one
//           run of 1000 sequential `tools.echo` calls (as bench/bridge.js)
//   connect proxied connect + 1-byte echo, µs, and
//   tput    proxied throughput, MB/s: bench section 8's python3 client in a
//           mediated sandbox through the proxy port (bench/network.js), each
//           beside its direct loopback baseline taken in the same rounds
//   relay   MB/s of 64 MiB written to `protocol`, echoed by `cat` on the
//           sandbox's fd 3 and read back (bench/bridge.js relay), beside the
//           same `cat` on a plain child's fd 3 wrapped in a net.Socket, taken
//           in the same rounds
// plus, build-independent, a raw Node socketpair JSON echo (the tool row's
// baseline, bench/peers.js) and raw bwrap with cordon's flag set running
// /bin/true (the cold row's baseline, bench/peers.js `rawBwrap`). Printed: median per row and build, b/a, and the
// worker's own CPU (user+system, process.cpuUsage) per sample beside wall time.

const path = require('node:path');
const { execFileSync } = require('node:child_process');

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : fallback;
};

// --smoke (what npm test runs, __test__/bench-smoke.test.js): one round of
// one sample per row, 20 tool calls; its numbers mean nothing.
const SMOKE = args.includes('--smoke');
const ROWS = {
  cold: { unit: 'ms', perWorker: SMOKE ? 1 : 8 },
  coldnet: { unit: 'ms', perWorker: SMOKE ? 1 : 8 },
  coldrun: { unit: 'ms', perWorker: SMOKE ? 1 : 8 },
  pooled: { unit: 'ms', perWorker: SMOKE ? 1 : 12 },
  early: { unit: 'ms', perWorker: SMOKE ? 1 : 12 },
  tool: { unit: 'µs', perWorker: SMOKE ? 1 : 2 },
  connect: { unit: 'µs', perWorker: SMOKE ? 1 : 100 },
  tput: { unit: 'MB/s', perWorker: SMOKE ? 1 : 2 },
  relay: { unit: 'MB/s', perWorker: SMOKE ? 1 : 3 },
};
// The build-independent baselines, taken in the same rounds: the network
// rows' direct loopback (the same python client on the host), the relay
// row's net.Socket.
const BASELINES = { connect: 'connect-direct', tput: 'tput-direct', relay: 'relay-raw' };
const BASELINE_NAMES = {
  connect: 'direct loopback', tput: 'direct loopback', relay: 'net.Socket over a socketpair',
};
const RELAY_BYTES = (SMOKE ? 1 : 64) * 1024 * 1024;
const TOOL_CALLS = SMOKE ? 20 : 1000;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const nowMs = () => Number(process.hrtime.bigint()) / 1e6;

/** In a worker: samples of `row` for the build at `root`, with the worker's CPU per sample. */
async function measure(root, row, n) {
  const cordon = require(path.resolve(root));
  const samples = [];
  const cpu = process.cpuUsage();
  if (row === 'cold' || row === 'coldnet') {
    // coldnet: a mediated policy with one allowed destination (the egress
    // engine, its socket and the relay are set up and torn down per run)
    const policy = row === 'cold' ? cordon.readOnly() : {
      ...cordon.readOnly(),
      network: { mode: 'mediated', allow: [{ protocol: 'tcp', host: '127.0.0.1', port: 9, allowPrivateAddresses: true }] },
    };
    for (let i = 0; i < n; i += 1) {
      const t = nowMs();
      const execution = cordon.spawnIsolated(['/bin/true'], { policy });
      const { returncode } = await execution.wait();
      samples.push(nowMs() - t);
      if (returncode !== 0) throw new Error(`/bin/true exited ${returncode}`);
      await sleep(20);
    }
  } else if (row === 'coldrun') {
    const mode = cordon.createCodeMode({ tools: [] });
    for (let i = 0; i < n; i += 1) {
      const t = nowMs();
      const result = await mode.run('return 1');
      samples.push(nowMs() - t);
      if (!result.ok) throw new Error(`cold run failed: ${JSON.stringify(result.error)}`);
      await sleep(20);
    }
    await mode.close();
  } else if (row === 'pooled' || row === 'early') {
    const mode = pooledMode(cordon, row === 'early');
    await mode.run('return 1');
    for (let i = 0; i < n; i += 1) {
      await sleep(120); // refilled and waiting, as in an agent loop
      const t = nowMs();
      const result = await mode.run('return 1');
      samples.push(nowMs() - t);
      if (!result.ok) throw new Error(`pooled run failed: ${JSON.stringify(result.error)}`);
      if (result.final && !(await result.final).ok) throw new Error('pooled run not accounted for');
    }
    await mode.close();
  } else if (row === 'bwrap') {
    const { BWRAP, rawBwrap, timeChild } = require('./peers');
    const raw = rawBwrap('/bin/true');
    for (let i = 0; i < n; i += 1) {
      samples.push(await timeChild(BWRAP, raw.argv));
      await sleep(20);
    }
    raw.cleanup();
  } else if (row === 'tool') {
    const entries = [];
    const echo = {
      name: 'echo', description: 'Echo the arguments', effect: 'read',
      inputSchema: { type: 'object', properties: { i: { type: 'integer' } } },
      handler: (a) => { entries.push(nowMs()); return a; },
    };
    const mode = cordon.createCodeMode({ tools: [echo], limits: { toolCalls: TOOL_CALLS, timeoutMs: 120000 } });
    const code = `for (let i = 0; i < ${TOOL_CALLS}; i++) { const r = await tools.echo({ i }); if (r.i !== i) throw new Error('bad echo'); } return 1;`;
    for (let i = 0; i < n; i += 1) {
      entries.length = 0;
      const result = await mode.run(code);
      if (!result.ok || entries.length !== TOOL_CALLS) throw new Error(`tool run failed: ${JSON.stringify(result.error)}`);
      samples.push(((entries[TOOL_CALLS - 1] - entries[0]) / (TOOL_CALLS - 1)) * 1000);
    }
  } else if (row === 'connect' || row === 'tput') {
    // proxied connect + 1-byte echo / throughput: a python3 client in a
    // mediated sandbox, through the proxy port (bench/network.js)
    samples.push(...(await require('./network').compareSamples(cordon, row, n)));
  } else if (row === 'connect-direct' || row === 'tput-direct') {
    samples.push(...(await require('./network').compareSamples(null, row.split('-')[0], n)));
  } else if (row === 'relay' || row === 'relay-raw') {
    const { relayCordon, relayRaw } = require('./bridge');
    for (let i = 0; i < n; i += 1) {
      samples.push(row === 'relay' ? await relayCordon(RELAY_BYTES, cordon) : await relayRaw(RELAY_BYTES));
    }
  } else if (row === 'echo') {
    const { rawEchoUs } = require('./peers');
    for (let i = 0; i < n; i += 1) samples.push(await rawEchoUs(TOOL_CALLS));
  }
  const used = process.cpuUsage(cpu);
  return { samples, cpuMsPerSample: (used.user + used.system) / 1000 / n };
}

/** A pool of 2; `early`: results before teardown where the build knows the option. */
function pooledMode(cordon, early) {
  const options = { tools: [], pool: { size: 2 } };
  if (!early) return cordon.createCodeMode(options);
  try {
    return cordon.createCodeMode({ ...options, resultBeforeTeardown: true });
  } catch (error) {
    if (error.code !== 'ERR_CORDON_INVALID_OPTIONS') throw error;
    return cordon.createCodeMode(options);
  }
}

function worker(root, row, n) {
  const out = execFileSync(process.execPath, [__filename, '--worker', root, '--row', row, '--n', String(n), ...(SMOKE ? ['--smoke'] : [])], {
    encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 300000,
  });
  return JSON.parse(out.trim().split('\n').pop());
}

const median = (values) => {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted.length ? sorted[Math.floor(sorted.length / 2)] : NaN;
};
const fmt = (v) => (Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(3));

async function main() {
  if (args.includes('--worker')) {
    const result = await measure(option('--worker'), option('--row'), Number(option('--n')));
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return;
  }
  const a = path.resolve(option('--a', '/work/main'));
  const b = path.resolve(option('--b', '.'));
  const rounds = SMOKE ? 1 : Number(option('--rounds', '6'));
  const rows = option('--rows', 'cold,coldrun,pooled,early,tool').split(',');
  for (const row of rows) if (!ROWS[row]) throw new Error(`unknown row "${row}"; known: ${Object.keys(ROWS).join(', ')}`);
  const wantEcho = rows.includes('tool');
  const baselines = rows.filter((row) => BASELINES[row]).map((row) => BASELINES[row]);
  const wantBwrap = rows.includes('cold');
  const data = {};
  for (const row of [...rows, ...(wantEcho ? ['echo'] : []), ...(wantBwrap ? ['bwrap'] : []), ...baselines]) data[row] = { a: [], b: [], aCpu: [], bCpu: [] };
  for (let round = 0; round < rounds; round += 1) {
    const order = round % 2 === 0 ? ['a', 'b'] : ['b', 'a'];
    for (const row of rows) {
      for (const which of order) {
        const r = worker(which === 'a' ? a : b, row, ROWS[row].perWorker);
        data[row][which].push(...r.samples);
        data[row][`${which}Cpu`].push(r.cpuMsPerSample);
      }
    }
    if (wantEcho) {
      const r = worker(b, 'echo', SMOKE ? 1 : 2);
      data.echo.a.push(...r.samples);
    }
    for (const row of rows.filter((r) => BASELINES[r])) {
      const r = worker(b, BASELINES[row], ROWS[row].perWorker);
      data[BASELINES[row]].a.push(...r.samples);
    }
    if (wantBwrap) {
      const r = worker(b, 'bwrap', ROWS.cold.perWorker);
      data.bwrap.a.push(...r.samples);
    }
    process.stderr.write(`round ${round + 1}/${rounds} done\n`);
  }
  console.log(`a = ${a}\nb = ${b}\n${rounds} rounds, builds alternating; medians over all samples; CPU = the worker's user+system per sample`);
  console.log('| row | unit | n | a median | b median | b/a | a CPU ms | b CPU ms |');
  console.log('| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |');
  const names = {
    cold: 'cold spawnIsolated(/bin/true) → wait()', coldnet: 'cold spawnIsolated(/bin/true) → wait(), network mediated', coldrun: 'cold run("return 1"), no pool', pooled: 'pooled run("return 1")', early: 'pooled run("return 1"), resultBeforeTeardown where known',
    tool: `tool call round trip (${TOOL_CALLS} calls/run)`,
    connect: 'proxied connect + 1-byte echo (python3, CONNECT)', tput: 'proxied throughput (python3, 32 MiB streams)',
    relay: `protocol relay (${RELAY_BYTES / 1024 / 1024} MiB echoed by cat)`,
  };
  const result = {};
  for (const row of rows) {
    const d = data[row];
    const ma = median(d.a);
    const mb = median(d.b);
    result[row] = { a: ma, b: mb, ratio: mb / ma };
    console.log(`| ${names[row]} | ${ROWS[row].unit} | ${d.a.length}/${d.b.length} | ${fmt(ma)} | ${fmt(mb)} | ${(mb / ma).toFixed(2)} | ${fmt(median(d.aCpu))} | ${fmt(median(d.bCpu))} |`);
  }
  if (wantEcho) {
    const echo = median(data.echo.a);
    console.log(`| raw Node socketpair echo (baseline of the tool row) | µs | ${data.echo.a.length} | ${fmt(echo)} | | | | |`);
    console.log(`tool call / raw echo: a ${(result.tool.a / echo).toFixed(2)}×, b ${(result.tool.b / echo).toFixed(2)}×; calls/s: a ${Math.round(1e6 / result.tool.a)}, b ${Math.round(1e6 / result.tool.b)}`);
  }
  for (const row of rows.filter((r) => BASELINES[r])) {
    const base = median(data[BASELINES[row]].a);
    const { a: ma, b: mb } = result[row];
    console.log(`| ${BASELINE_NAMES[row]} (baseline of the ${row} row) | ${ROWS[row].unit} | ${data[BASELINES[row]].a.length} | ${fmt(base)} | | | | |`);
    console.log(`${row} / baseline: a ${(ma / base).toFixed(2)}×, b ${(mb / base).toFixed(2)}×`);
    result[BASELINES[row]] = { a: base };
  }
  if (wantBwrap) {
    const bwrap = median(data.bwrap.a);
    console.log(`| raw bwrap /bin/true, cordon's flags (baseline of the cold row) | ms | ${data.bwrap.a.length} | ${fmt(bwrap)} | | | | |`);
    console.log(`cold / raw bwrap: a ${(result.cold.a / bwrap).toFixed(2)}×, b ${(result.cold.b / bwrap).toFixed(2)}×`);
    if (result.coldrun) console.log(`coldrun / raw bwrap: a ${(result.coldrun.a / bwrap).toFixed(2)}×, b ${(result.coldrun.b / bwrap).toFixed(2)}×`);
  }
  console.log(`load average at the end: ${require('node:os').loadavg().map((v) => v.toFixed(2)).join(' ')}`);
  const out = option('--json');
  if (out) require('node:fs').writeFileSync(out, JSON.stringify({ a, b, rounds, result, data }, null, 2));
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
