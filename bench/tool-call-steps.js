'use strict';

// Where the provider's JS thread spends a tool call, step by step: the
// methods on a call's path are wrapped (this process only; the library's
// files are not changed) to stamp `process.hrtime` at their entry and exit,
// and the time between consecutive stamps is averaged over the warm runs of
// N sequential `tools.echo` calls (the first two runs warm V8 up and are not
// counted). The stamps cost ~0.1 µs each, so the sum is a little above an
// unwrapped call's JS time; the step sizes are what to read.
//
//   node bench/tool-call-steps.js [--build DIR] [--calls N] [--runs R]
//
// Rows, in path order: the loop callback → the chunk read from fd 3 (the
// addon's FIONREAD + recvmsg, a Buffer) → the line split → decode (UTF-8
// check, JSON.parse, the duplicate-key and depth scan) → the frame checks →
// the dispatcher (tool.requested event with redaction, argument validation)
// → the handler → shaping (strict JSON text) → tool.completed → the reply
// encoded and written → the native send (which wakes the runner). What is
// left of the round trip is outside this thread: the runner, the kernel
// and the wake-ups (bench/runner-wakeups.js counts those).

const path = require('node:path');

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : fallback;
};
const root = path.resolve(option('--build', path.join(__dirname, '..')));
const CALLS = Number(option('--calls', 3000));
const RUNS = Number(option('--runs', 5));
const WARMUP = 2;

const cordon = require(root);
const { IsolatedExecution } = require(path.join(root, 'lib/isolated-execution.js'));
const { Execution } = require(path.join(root, 'lib/code-mode/execution.js'));
const { CallDispatcher } = require(path.join(root, 'lib/code-mode/calls.js'));
const { EventLog } = require(path.join(root, 'lib/code-mode/events.js'));
const { BoundedLineReader } = require(path.join(root, 'lib/code-mode/line-reader.js'));

let counting = false;
let last = null;
const steps = new Map(); // "from → to" → {ns, n}
let loopStarts = 0;
let roundTripNs = 0n;
let previousLoop = null;

function stamp(label) {
  const now = process.hrtime.bigint();
  if (label === 'loop callback') {
    if (counting && previousLoop !== null) { roundTripNs += now - previousLoop; loopStarts += 1; }
    previousLoop = now;
  } else if (counting && last !== null) {
    const key = `${last.label} → ${label}`;
    const step = steps.get(key) ?? { ns: 0n, n: 0, order: steps.size };
    step.ns += now - last.at;
    step.n += 1;
    steps.set(key, step);
  }
  last = { label, at: process.hrtime.bigint() };
}

/** Wrap `proto[name]` with stamps at entry (`in`) and, when given, at return (`out`). */
function wrap(proto, name, entry, exit) {
  const original = proto[name];
  if (typeof original !== 'function') throw new Error(`no method ${name} to wrap`);
  proto[name] = function wrapped(...callArgs) {
    if (entry) stamp(entry);
    const value = original.apply(this, callArgs);
    if (exit) stamp(exit);
    return value;
  };
}

wrap(IsolatedExecution.prototype, '_onLoop', 'loop callback');
wrap(IsolatedExecution.prototype, '_pullProtocol', null, 'chunk pushed (lines handled)');
wrap(BoundedLineReader.prototype, 'push', 'chunk read from fd 3');
wrap(Execution.prototype, 'onLine', 'line split');
wrap(Execution.prototype, 'onFrame', 'line decoded');
wrap(Execution.prototype, 'onToolCall', 'frame checked');
wrap(CallDispatcher.prototype, 'dispatch', 'call admitted');
wrap(EventLog.prototype, 'toolRequested', null, 'tool.requested emitted');
wrap(CallDispatcher.prototype, 'shape', 'handler returned');
wrap(CallDispatcher.prototype, 'checkSizes', null, 'result shaped');
wrap(EventLog.prototype, 'toolCompleted', 'call finished', 'tool.completed emitted');
wrap(Execution.prototype, 'answer', 'answering');
// The protocol stream's class is not exported: patched from the first run's instance, before any call.
let streamPatched = false;
const wireStreams = Execution.prototype.wireStreams;
Execution.prototype.wireStreams = function patchStream(...callArgs) {
  if (!streamPatched) {
    const proto = Object.getPrototypeOf(this.execution.protocol);
    wrap(proto, '_write', 'reply written to the stream');
    wrap(proto, '_writeSome', 'native send', 'sent');
    streamPatched = true;
  }
  return wireStreams.apply(this, callArgs);
};

async function main() {
  const echo = {
    name: 'echo', description: 'Echo the arguments', effect: 'read',
    inputSchema: { type: 'object', properties: { i: { type: 'integer' } } },
    handler: (input) => { stamp('handler entered'); return input; },
  };
  const mode = cordon.createCodeMode({ tools: [echo], limits: { toolCalls: CALLS, timeoutMs: 120000 } });
  const code = `for (let i = 0; i < ${CALLS}; i++) { const r = await tools.echo({ i }); if (r.i !== i) throw new Error('bad echo'); } return 1;`;
  for (let run = 0; run < WARMUP + RUNS; run += 1) {
    counting = run >= WARMUP;
    last = null;
    previousLoop = null;
    const result = await mode.run(code);
    if (!result.ok) throw new Error(`run failed: ${JSON.stringify(result.error)}`);
  }
  // Steps every call takes (other loop turns — ready, the result, the exit — are rarer and left out).
  const calls = RUNS * CALLS;
  const rows = [...steps].filter(([, step]) => step.n >= calls * 0.99).sort((a, b) => a[1].order - b[1].order);
  // In path order: from the loop callback on (a run's first stamps are the execute frame's write).
  const first = rows.findIndex(([key]) => key.startsWith('loop callback'));
  if (first > 0) rows.push(...rows.splice(0, first));
  let sum = 0;
  console.log('| step | µs per call |\n| --- | ---: |');
  for (const [key, step] of rows) {
    const us = Number(step.ns) / 1000 / step.n;
    sum += us;
    console.log(`| ${key} | ${us.toFixed(2)} |`);
  }
  console.log(`| **sum (the JS thread's work per call)** | **${sum.toFixed(1)}** |`);
  console.log(`| loop callback to the next one (the round trip) | ${(Number(roundTripNs) / 1000 / loopStarts).toFixed(1)} |`);
}

main().catch((error) => { console.error(error); process.exit(1); });
