'use strict';
// After a command settles, a process it left behind that still writes to the command's stdout:
// does its output still cross to the provider (provider CPU), unbounded? Control: orphan `sleep`.
const { monitorEventLoopDelay } = require('node:perf_hooks');
const { withManager } = require('./h.js');
const SECONDS = Number(process.argv[2] || 6);
const cpuMs = () => { const r = process.cpuUsage(); return (r.user + r.system) / 1000; };
async function phase(a, label, bg) {
  const r = await a.exec({ shell: 'bash', script: `for i in 1 2 3 4; do (setsid timeout ${SECONDS} ${bg} &) ; done; echo started` }, { timeoutMs: 3000 });
  const c0 = cpuMs(), t0 = Date.now();
  await new Promise((res) => setTimeout(res, (SECONDS - 1) * 1000));
  const cpu = cpuMs() - c0, wall = Date.now() - t0;
  console.log(`${label}: exec settled exit ${r.exitCode} timedOut ${r.timedOut} outputBytes ${r.outputBytes} in ${r.durationMs} ms; provider CPU after settle ${Math.round(cpu)} ms in ${wall} ms (${Math.round(cpu / wall * 100)}%)`);
  await new Promise((res) => setTimeout(res, 1500));
  return { cpu: cpu / wall, r };
}
withManager({}, async (sessions) => {
  const a = await sessions.acquire({ tenant: 't', conversation: 'orph' }, { tenant: 't' });
  console.log(`uid ${process.getuid()}`);
  const c = await phase(a, 'control (sleep)', 'sleep 100');
  const p = await phase(a, 'probe (yes)', 'yes');
  const ps = await a.exec(['sh', '-c', 'ps -eo pid,pgid,stat,args | head -30']);
  console.log(ps.stdout);
  console.log(p.cpu > 0.2 && p.cpu > 5 * c.cpu ? 'FINDING: output of a settled command\'s orphans still reaches the provider' : 'held');
}).catch((e) => { console.error(e); process.exitCode = 1; });
