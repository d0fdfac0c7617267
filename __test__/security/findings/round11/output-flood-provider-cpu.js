'use strict';
// R11-5: output past a command's cap (`outputBytes`, 1 MiB) is still carried
// to the provider: the exec agent keeps reading the command's pipes and
// sending STDOUT frames, and the provider decodes and drops each one on its
// event loop. A command that floods stdout (`yes`) costs the provider about as
// much CPU as the command itself, outside the sandbox's CPU ceiling, and for
// as long as the command runs (a background `start()` until the session ends).
// Probe: session A runs N background `yes` commands for a few seconds while
// session B runs `/bin/true` in a loop; we print the provider's CPU and B's
// exec latency and event-loop delay, against the control (A runs `sleep`).
// Usage: node output-flood-provider-cpu.js [N=4] [seconds=6]  (root, or uid 65534 via setpriv)
const { monitorEventLoopDelay } = require('node:perf_hooks');
const { withManager } = require('./h.js');

const N = Number(process.argv[2] || 4);
const SECONDS = Number(process.argv[3] || 6);
const cpuMs = () => { const r = process.cpuUsage(); return (r.user + r.system) / 1000; };

async function phase(a, b, label, script) {
  const handles = [];
  for (let i = 0; i < N; i++) handles.push(await a.start({ shell: 'bash', script: `timeout ${SECONDS} ${script}; true` }));
  // 1: the provider's CPU with nothing else running in it
  const c0 = cpuMs();
  const t0 = Date.now();
  await new Promise((r) => setTimeout(r, (SECONDS / 2) * 1000));
  const wall = Date.now() - t0;
  const cpu = cpuMs() - c0;
  // 2: another session's exec latency and the event loop's delay meanwhile
  const h = monitorEventLoopDelay({ resolution: 10 });
  h.enable();
  const lat = [];
  const t1 = Date.now();
  while (Date.now() - t1 < (SECONDS / 2 - 1) * 1000) {
    const t = process.hrtime.bigint();
    await b.exec(['/bin/true']);
    lat.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  h.disable();
  const results = await Promise.all(handles.map((x) => x.wait()));
  lat.sort((x, y) => x - y);
  const bytes = results.reduce((s, r) => s + r.outputBytes, 0);
  console.log(`${label}: provider CPU ${Math.round(cpu)} ms in ${wall} ms (${Math.round(cpu / wall * 100)}% of a core); ` +
    `then session B: ${lat.length} execs, median ${lat[lat.length >> 1].toFixed(1)} ms, p90 ${lat[Math.floor(lat.length * 0.9)].toFixed(1)} ms, ` +
    `event-loop delay p99 ${(h.percentile(99) / 1e6).toFixed(1)} ms; output the agent sent (cap 1 MiB each) ${(bytes / 1e6).toFixed(0)} MB`);
  return cpu / wall;
}

withManager({}, async (sessions) => {
  const a = await sessions.acquire({ tenant: 't', conversation: 'flood' }, { tenant: 't' });
  const b = await sessions.acquire({ tenant: 't', conversation: 'victim' }, { tenant: 't' });
  console.log(`uid ${process.getuid()}, ${N} background commands in session A, ${SECONDS} s`);
  const control = await phase(a, b, 'control (sleep)', `sleep ${SECONDS}`);
  const probe = await phase(a, b, 'probe (yes)', 'yes');
  console.log(probe > 0.3 && probe > 5 * control ? 'FINDING: capped-out output still costs the provider CPU per byte, unbounded in time' : 'held');
}).catch((e) => { console.error(e); process.exitCode = 1; });
