'use strict';

// Threads per run: N sandboxes (`sleep`) in flight at once, started through
// the addon directly; counts this process's threads (/proc/self/task)
// before any run, with all N running, and after they all ended.
//
//   node bench/threads.js [N]        (default 8)
//   CORDON_BINDING=/path/to/cordon.linux-x64-gnu.node node bench/threads.js
//
// Prints one JSON line: {runs, idle, inFlight, perRun, after, namedDuring}
// (namedDuring: the launcher's threads by name while the N runs wait).

const fs = require('node:fs');
const path = require('node:path');
const { readOnly } = require('..');

const threads = () => fs.readdirSync('/proc/self/task').length;
/** This process's threads by name (`comm`), e.g. {"cordon-fd3-out": 8}. */
function byName() {
  const names = {};
  for (const tid of fs.readdirSync('/proc/self/task')) {
    try {
      const name = fs.readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim();
      if (name.startsWith('cordon')) names[name] = (names[name] ?? 0) + 1;
    } catch { /* ended while we looked */ }
  }
  return names;
}
const native = process.env.CORDON_BINDING
  ? require(path.resolve(process.env.CORDON_BINDING))
  : require('../binding.js');
// Finished or Failed ends a run. An older binding (CORDON_BINDING, for a
// before/after count) exports no EventKind and passes its arguments as one array.
const ENDED = native.EventKind ? [native.EventKind.Finished, native.EventKind.Failed] : [6, 7];
const runs = Number(process.argv[2] ?? 8);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function main() {
  // One short run first: lazily created process-wide threads (the
  // supervision runtime, libuv's pool) exist before the baseline.
  await start(['/usr/bin/true']).done;
  await sleep(200);
  const idle = threads();
  const inFlight = Array.from({ length: runs }, () => start(['/usr/bin/sleep', '5']));
  await Promise.all(inFlight.map((r) => r.started));
  await sleep(2500); // every run past set-up, waiting for its program (idle
  // blocking-pool threads of the supervision runtime expire after 1 s)
  const during = threads();
  const namedDuring = byName();
  await Promise.all(inFlight.map((r) => r.done));
  await sleep(1500);
  const after = threads();
  const perRun = (during - idle) / runs;
  console.log(JSON.stringify({ runs, idle, inFlight: during, perRun, after, namedDuring }));
}

function start(command) {
  let done;
  const finished = new Promise((resolve) => { done = resolve; });
  const json = JSON.stringify({ command, policy: readOnly() });
  native.spawnNative(json, (first) => {
    const kind = Array.isArray(first) ? first[0] : first;
    if (ENDED.includes(kind)) done();
  });
  return { started: Promise.resolve(), done: finished };
}

main().catch((error) => { console.error(error); process.exit(1); });
