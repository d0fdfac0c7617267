'use strict';

// Wake-ups per tool call inside the sandbox: the voluntary context switches
// of the runner's two threads (`cordon-runner`, the JavaScript thread, and
// `bridge-reader`, which reads fd 3) between call 100 and the last call of a
// run of N sequential `tools.echo` calls, read from /proc by the handler
// (the runner is a process of this host, in its own pid namespace), beside
// the round trip and the provider's CPU per call.
//
//   node bench/runner-wakeups.js [--build DIR] [--calls N] [--runs R]
//
// One JSON line per run: {usPerCall, cpuUsPerCall, switchesPerCall: {cordon-runner, bridge-reader}}.
// The floor is one switch per call for each thread (each sleeps once per
// call, waiting for the host's reply or for the next frame); a reader asleep
// in read(2) instead of poll(2) was also woken by the host consuming the
// runner's frame (crates/runner/src/readable_wait.rs): ~2 per call.

const fs = require('node:fs');
const path = require('node:path');

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : fallback;
};
const cordon = require(path.resolve(option('--build', path.join(__dirname, '..'))));
const CALLS = Number(option('--calls', 3000));
const RUNS = Number(option('--runs', 4));
const FIRST = 100;
const NAMES = new Set(['cordon-runner', 'bridge-reader']);

/** Voluntary switches of every runner thread on the host, by "name:tid". */
function runnerThreads() {
  const out = new Map();
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    let tasks;
    try { tasks = fs.readdirSync(`/proc/${pid}/task`); } catch { continue; }
    for (const tid of tasks) {
      try {
        const status = fs.readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8');
        const name = /^Name:\s+(.*)$/m.exec(status)[1];
        if (NAMES.has(name)) out.set(`${name}:${tid}`, Number(/^voluntary_ctxt_switches:\s+(\d+)$/m.exec(status)[1]));
      } catch { /* ended while we looked */ }
    }
  }
  return out;
}

async function main() {
  let first;
  let last;
  const echo = {
    name: 'echo', description: 'Echo the arguments', effect: 'read',
    inputSchema: { type: 'object', properties: { i: { type: 'integer' } } },
    handler: (input) => {
      if (input.i === FIRST) first = { at: process.hrtime.bigint(), threads: runnerThreads() };
      if (input.i === CALLS - 1) last = { at: process.hrtime.bigint(), threads: runnerThreads() };
      return input;
    },
  };
  const mode = cordon.createCodeMode({ tools: [echo], limits: { toolCalls: CALLS, timeoutMs: 120000 } });
  const code = `for (let i = 0; i < ${CALLS}; i++) { const r = await tools.echo({ i }); if (r.i !== i) throw new Error('bad echo'); } return 1;`;
  for (let run = 0; run < RUNS; run += 1) {
    const cpu = process.cpuUsage();
    const result = await mode.run(code);
    const used = process.cpuUsage(cpu);
    if (!result.ok) throw new Error(`run failed: ${JSON.stringify(result.error)}`);
    const calls = CALLS - 1 - FIRST;
    const switchesPerCall = {};
    for (const [key, after] of last.threads) {
      if (!first.threads.has(key)) continue;
      const name = key.split(':')[0];
      switchesPerCall[name] = Number(((after - first.threads.get(key)) / calls).toFixed(2));
    }
    if (Object.keys(switchesPerCall).length !== NAMES.size) throw new Error(`runner threads not found: ${JSON.stringify(switchesPerCall)}`);
    console.log(JSON.stringify({
      usPerCall: Number((Number(last.at - first.at) / 1000 / calls).toFixed(1)),
      cpuUsPerCall: Number(((used.user + used.system) / CALLS).toFixed(1)),
      switchesPerCall,
    }));
  }
}

main().catch((error) => { console.error(error); process.exit(1); });
