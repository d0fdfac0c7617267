'use strict';

// What the sandbox's starter costs a cold run: `spawnIsolated(['/bin/true'])`
// → wait(), started through cordon-egress-relay (its provider-liveness gate:
// docs/security.md, "Processes of a dead provider") against the same run
// started through `/usr/bin/env -u PWD` (what every run started through
// before the gate, and still does when no `networkRelayPath` is known).
// Interleaved in one process, so load drift hits both alike.
//
//   node bench/starter.js [--runs 200] [--steps]
//
// --steps: also the launcher's step stamps (CORDON_STEP_TRACE, set here for
// this process), as the median time of each interval between consecutive
// steps, per variant: where the difference is (a second method).

const path = require('node:path');
const { IsolatedExecution } = require('../lib/isolated-execution');
const { loadBinding } = require('../lib/native');
const { readOnly } = require('..');
const { nativeExecutable } = require('../lib/platform-package');
const { sectionRows, renderTable, nowMs } = require('./stats');

const fs = require('node:fs');
const os = require('node:os');

const args = process.argv.slice(2);
const traceFile = args.includes('--steps') ? path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-starter-')), 'steps') : null;
// Read once by the launcher, at its first stamp: set before any run.
if (traceFile !== null) process.env.CORDON_STEP_TRACE = traceFile;
const runs = args.includes('--runs') ? Number(args[args.indexOf('--runs') + 1]) : 200;
const relay = nativeExecutable('cordon-egress-relay');

let serial = 0;

/** spawnIsolated's own steps (index.js), with networkRelayPath given or left out. */
function spawn(withStarter) {
  const native = loadBinding();
  const execution = new IsolatedExecution(native);
  const invocationId = `${withStarter ? 'starter' : 'env'}-${(serial += 1)}`;
  const options = { command: ['/bin/true'], policy: readOnly(), invocationId };
  if (withStarter) options.networkRelayPath = relay;
  const handle = native.spawnNative(JSON.stringify(options), (kind, chunk, message, settled) => execution._onEvent(kind, chunk, message, settled));
  execution._attach(handle);
  return execution;
}

async function once(withStarter) {
  const started = nowMs();
  const run = spawn(withStarter);
  run.stderr.resume();
  run.protocol.resume();
  const result = await run.wait();
  if (result.returncode !== 0) throw new Error(`exit ${result.returncode}`);
  return nowMs() - started;
}

/** Median per interval between consecutive step stamps, per variant (µs). */
function printSteps(text) {
  const runs = new Map();
  for (const line of text.trim().split('\n')) {
    const [id, step, ns] = line.split(' ');
    if (!runs.has(id)) runs.set(id, []);
    runs.get(id).push([step, Number(ns)]);
  }
  const intervals = { env: new Map(), starter: new Map() };
  for (const [id, steps] of runs) {
    const variant = id.startsWith('starter') ? 'starter' : 'env';
    for (let i = 1; i < steps.length; i += 1) {
      const name = `${steps[i - 1][0]} -> ${steps[i][0]}`;
      const list = intervals[variant].get(name) ?? [];
      list.push((steps[i][1] - steps[i - 1][1]) / 1000);
      intervals[variant].set(name, list);
    }
  }
  const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
  console.log('\nlauncher steps, median µs per interval: env | starter | difference');
  for (const [name, list] of intervals.env) {
    const other = intervals.starter.get(name);
    if (other === undefined) continue;
    const a = median(list);
    const b = median(other);
    console.log(`${name.padEnd(52)} ${a.toFixed(0).padStart(7)} ${b.toFixed(0).padStart(7)} ${(b - a).toFixed(0).padStart(7)}`);
  }
}

(async () => {
  const env = [];
  const starter = [];
  for (let i = 0; i < 10; i += 1) await once(i % 2 === 0); // warm-up
  for (let i = 0; i < runs; i += 1) {
    if (i % 2 === 0) {
      env.push(await once(false));
      starter.push(await once(true));
    } else {
      starter.push(await once(true));
      env.push(await once(false));
    }
  }
  console.log(`cold spawnIsolated(['/bin/true']) -> wait(), ${runs} each, interleaved (${path.basename(relay)})`);
  console.log(renderTable(sectionRows('cold', 'ms', [['via /usr/bin/env -u PWD', env], ['via the starter (gate)', starter]])));
  if (traceFile !== null) printSteps(fs.readFileSync(traceFile, 'utf8'));
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
