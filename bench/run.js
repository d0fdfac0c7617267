'use strict';

// `npm run bench`: every benchmark, side by side with its peers, in one
// process tree. Prints one table (median, p90, p99, ratio to the section's
// baseline) and the goals of issue 6, and writes the rows to
// bench/results.json (or --out FILE). See bench/README.md.
//   node --expose-gc bench/run.js [--smoke] [--out FILE] [--only 1,3]
// --smoke: tiny iteration counts, for `npm test` (asserts the output exists,
// never a timing).

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const latency = require('./latency');
const bridge = require('./bridge');
const load = require('./load');
const { typescript } = require('./typescript');
const netbench = require('./network');
const { sessions } = require('./sessions');
const { sessionsNonRoot } = require('./sessions-nonroot');
const { intl } = require('./intl');
const { timers } = require('./timers');
const { fetchCost } = require('./fetch');
const remoteBench = require('./remote');
const { renderTable } = require('./stats');

const FULL = {
  cold: { iterations: 100, warmup: 10 },
  pooled: { iterations: 100, warmup: 10, settleMs: 30 },
  toolCalls: { runs: 15, warmup: 2, calls: 1000, concurrentCalls: { calls: 64, handlerMs: 20, slowMs: 200 } },
  relay: { runs: 7, megabytes: 64 },
  concurrency: { rounds: 3, runsPerLevel: 32 },
  memory: { rounds: 3, inFlight: 16, idleCount: 4 },
  typescript: { runs: 30, warmup: 3 },
  network: { streams: 7, megabytes: 64, connects: 200, coldIterations: 30 },
  engine: { counts: [1, 64, 512, 4096], runs: 32, perRun: 32, iterations: 3, idleMs: 2000, stalled: [32, 128] },
  sessions: { iterations: 100, warmup: 10, creations: 20, fileRuns: 30 },
  sessionsNonRoot: { iterations: 100, warmup: 10, batch: 100 },
  intl: { iterations: 40, warmup: 4, rssRounds: 5 },
  timers: { runs: 7, iterations: 1000, warmup: 1 },
  fetch: { runs: 5, fetches: 40 },
  remote: remoteBench.FULL,
};
const SMOKE = {
  cold: { iterations: 2, warmup: 0 },
  pooled: { iterations: 2, warmup: 0, settleMs: 0 },
  toolCalls: { runs: 1, calls: 20, concurrentCalls: { calls: 8, handlerMs: 1, slowMs: 5 } },
  relay: { runs: 1, megabytes: 1 },
  concurrency: { rounds: 1, runsPerLevel: 2, levels: [1, 2] },
  memory: { rounds: 1, inFlight: 2, idleCount: 1 },
  typescript: { runs: 1 },
  network: { streams: 1, megabytes: 1, connects: 2, coldIterations: 1 },
  engine: { counts: [1, 8], runs: 2, perRun: 2, iterations: 1, idleMs: 100, stalled: [4] },
  sessions: { iterations: 2, warmup: 0, creations: 1, fileRuns: 1 },
  sessionsNonRoot: { iterations: 2, warmup: 0, batch: 2 },
  intl: { iterations: 1, warmup: 0, rssRounds: 1 },
  timers: { runs: 1, iterations: 10 },
  fetch: { runs: 1, fetches: 2 },
  remote: remoteBench.SMOKE,
};

const SECTIONS = [
  ['1', (c) => latency.cold(c.cold)],
  ['2', (c) => latency.pooled(c.pooled)],
  ['3', (c) => bridge.toolCalls(c.toolCalls)],
  ['4', (c) => bridge.relay(c.relay)],
  ['5', (c) => load.concurrency(c.concurrency)],
  ['6', (c) => load.memory(c.memory)],
  ['7', (c) => typescript(c.typescript)],
  ['8', async (c) => [...(await netbench.network(c.network)), ...(await netbench.engineCost(c.engine))]],
  ['9', (c) => sessions(c.sessions)],
  ['10', (c) => intl(c.intl)],
  ['11', (c) => timers(c.timers)],
  ['12', (c) => fetchCost(c.fetch)],
  ['13', (c) => remoteBench.remote(c.remote)],
  ['14', (c) => sessionsNonRoot(c.sessionsNonRoot)],
];

function parseArgs(argv) {
  const args = { smoke: false, out: path.join(__dirname, 'results.json'), only: null };
  for (let i = 0; i < argv.length; i += 1) {
    if (argv[i] === '--smoke') args.smoke = true;
    else if (argv[i] === '--out') args.out = path.resolve(argv[(i += 1)]);
    else if (argv[i] === '--only') args.only = new Set(argv[(i += 1)].split(','));
    else throw new Error(`unknown argument ${argv[i]}; usage: bench/run.js [--smoke] [--out FILE] [--only 1,2,…]`);
  }
  return args;
}

const lastOf = (rows, section, name = '') => rows.filter((r) => r.section.startsWith(section) && r.name.includes(name)).reduce((a, r) => (r.name.startsWith('1 run') ? r : a), undefined);
const find = (rows, section, name) => rows.find((r) => r.section.startsWith(section) && r.name.startsWith(name));

/** Issue 6's goals, each checked against this run's rows (null when its section did not run). */
function goals(rows) {
  const check = (goal, row, value, ok) => ({ goal, value: row ? value(row) : null, met: row ? ok(value(row)) : null });
  return [
    check('cold run <= 1.3x raw bwrap /bin/true', find(rows, '1', 'cordon'), (r) => r.ratio, (v) => v <= 1.3),
    check('pooled run p50 <= 1 ms', find(rows, '2', 'cordon'), (r) => r.median, (v) => v <= 1),
    check('pooled run <= 5x quickjs-emscripten ctx+eval', find(rows, '2', 'cordon'), (r) => r.ratio, (v) => v <= 5),
    check('tool call <= 1.3x raw echo', find(rows, '3 tool call (', 'cordon'), (r) => r.ratio, (v) => v <= 1.3),
    check('>= 10000 tool calls/s in one run', find(rows, '3 tool call rate', 'cordon'), (r) => r.median, (v) => v >= 10000),
    check('Promise.all of 8 calls to a 200 ms tool < 300 ms inside a run (issue 12)', find(rows, '3 Promise.all 8 x', 'cordon'), (r) => r.median, (v) => v < 300),
    check('relay >= 0.5x raw net.Socket', find(rows, '4', 'cordon'), (r) => r.ratio, (v) => v >= 0.5),
    check('relay >= 0.8x raw net.Socket (issue 23)', find(rows, '4', 'cordon'), (r) => r.ratio, (v) => v >= 0.8),
    check('idle runner RSS <= 4 MiB', find(rows, '6 idle', 'cordon-runner'), (r) => r.median / 1024, (v) => v <= 4),
    check('Node RSS per in-flight run <= 256 KiB', find(rows, '6 Node', 'cordon run: RSS'), (r) => r.median, (v) => v <= 256),
    check('Node JS heap per in-flight run <= 256 KiB', find(rows, '6 Node', 'cordon run: JS'), (r) => r.median, (v) => v <= 256),
    check('ICU4X Intl: spawn→terminal <= 1.1x the hand-written Intl runner (issue 20)', find(rows, '10 Intl: spawn', 'ICU4X Intl (this checkout)'), (r) => r.ratio, (v) => v <= 1.1),
    check('ICU4X Intl: idle runner RSS <= 1.1x the hand-written Intl runner (issue 20)', find(rows, '10 Intl: idle', 'ICU4X Intl (this checkout)'), (r) => r.ratio, (v) => v <= 1.1),
    check('proxied throughput >= 0.5x direct loopback (issue 13)', find(rows, '8 network throughput', 'cordon'), (r) => r.ratio, (v) => v >= 0.5),
    check('proxied throughput >= 0.9x direct loopback (issue 19)', find(rows, '8 network throughput', 'cordon'), (r) => r.ratio, (v) => v >= 0.9),
    check('proxied connect+1B echo <= 2x direct (issue 19)', find(rows, '8 network connect', 'cordon'), (r) => r.ratio, (v) => v <= 2),
    check('provider threads constant in streams: most streams <= idle run + 2 (issue 19)', lastOf(rows, '8 engine provider threads'), (r) => r.median - find(rows, '8 engine provider threads', 'idle').median, (v) => v <= 2),
    check('provider RSS <= 16 KiB per idle stream at the most streams (issue 19)', lastOf(rows, '8 engine RSS per idle stream', ' streams'), (r) => r.median, (v) => v <= 16),
    check('provider RSS <= 2 x 64 KiB + 16 KiB per stream full both ways (issue 19)', lastOf(rows, '8 engine RSS per stalled stream'), (r) => r.median, (v) => v <= 144),
    check('provider CPU with every stream stalled ~0: <= idle run + 5 ms/s (issue 19)', lastOf(rows, '8 engine provider CPU'), (r) => r.median - find(rows, '8 engine provider CPU', 'idle').median, (v) => v <= 5),
    check('warm session.exec(/bin/true) p50 <= 2 ms (issue 21)', find(rows, '9 session command', 'session.exec'), (r) => r.median, (v) => v <= 2),
    check('Code Mode fetch of 1 KiB <= 4x Node fetch, loopback (issue 20)', find(rows, '12 fetch', 'Code Mode'), (r) => r.ratio, (v) => v <= 4),
    check('warm session.exec <= 0.1x spawnIsolated /bin/true (issue 21)', find(rows, '9 session command', 'session.exec'), (r) => r.median / find(rows, '9 session command', 'spawnIsolated').median, (v) => v <= 0.1),
  ];
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const config = args.smoke ? SMOKE : FULL;
  const rows = [];
  for (const [id, section] of SECTIONS) {
    if (args.only && !args.only.has(id)) continue;
    rows.push(...(await section(config)));
  }
  const checked = goals(rows);
  const machine = `node ${process.version}, ${os.cpus().length} cpus, load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`;
  console.log(`cordon bench${args.smoke ? ' --smoke (tiny counts: not a measurement)' : ''} — ${machine}`);
  console.log(renderTable(rows));
  console.log('\ngoals (issues 6, 12 and 13):');
  for (const g of checked) {
    const value = g.value === null ? 'not run' : g.value.toFixed(g.value >= 100 ? 0 : 2);
    console.log(`  ${g.met === null ? '-' : g.met ? 'met   ' : 'missed'}  ${g.goal}: ${value}`);
  }
  // Which Node ran it: numbers move between Node lines (V8's GC, streams).
  const node = { version: process.version, v8: process.versions.v8, execPath: process.execPath };
  const report = { date: new Date().toISOString(), smoke: args.smoke, node, machine, config, rows, goals: checked };
  fs.writeFileSync(args.out, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`\nwrote ${path.relative(process.cwd(), args.out) || args.out}`);
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
