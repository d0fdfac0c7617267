'use strict';
// Probe: worker_threads that run sandboxes (a spawnIsolated flooding fd 3 with
// descriptor-carrying messages while the worker writes to it, a Code Mode pool
// run with tool calls) are terminated at random moments (0-400 ms), 40 times.
// Expected: the provider does not crash; its threads, fds and child processes
// return near the control's. Control: the same workers left to finish.
// Usage: node worker-terminate.js [N=40]
const { Worker, isMainThread, workerData } = require('node:worker_threads');
const fs = require('node:fs');
if (!isMainThread) {
  const { py, cordon } = require('./h');
  (async () => {
    const ex = py(String.raw`
import socket, os, array, time
ch = socket.socket(fileno=3); r, w = os.pipe(); end = time.time() + 1
while time.time() < end:
    try: ch.sendmsg([b'x' * 1000], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', [r, w] * 50))])
    except OSError: time.sleep(0.001)
`);
    ex.protocol.on('data', () => {});
    const iv = setInterval(() => ex.protocol.write(Buffer.alloc(4096)), 1);
    const cm = cordon.createCodeMode({ tools: [{ name: 'echo', description: 'echo', effect: 'read', inputSchema: { type: 'object' }, handler: async (a) => a }], pool: { size: 2 } });
    const runs = [];
    for (let i = 0; i < 3; i++) runs.push(cm.run('let s = 0; for (let i = 0; i < 50; i++) s += (await tools.echo({i})).i; return s;', { mode: 'inspect' }));
    await Promise.allSettled(runs);
    clearInterval(iv); await ex.wait(); await cm.close();
    process.exit(0);
  })();
  return;
}
const { snap, sleep } = require('./h');
const N = Number(process.argv[2] || 40);
function kids() { let n = 0; for (const p of fs.readdirSync('/proc')) { if (!/^\d+$/.test(p)) continue; try { const st = fs.readFileSync(`/proc/${p}/stat`, 'utf8'); if (Number(st.slice(st.lastIndexOf(')') + 2).split(' ')[1]) === process.pid) n++; } catch {} } return n; }
(async () => {
  process.on('uncaughtException', (e) => { console.log('FINDING: uncaught in provider: ' + e.stack); process.exit(1); });
  process.on('exit', (c) => { if (c) console.log('exit ' + c); });
  const s0 = snap();
  for (let i = 0; i < 2; i++) { const w = new Worker(__filename); await new Promise((r) => w.on('exit', r)); }
  await sleep(1500);
  const control = { ...snap(), kids: kids() };
  let crashed = 0;
  for (let i = 0; i < N; i++) {
    const w = new Worker(__filename);
    w.on('error', (e) => { crashed++; console.log('worker error', e.message); });
    await sleep(Math.floor(Math.random() * 400));
    await w.terminate();
  }
  await sleep(5000);
  const after = { ...snap(), kids: kids() };
  console.log(JSON.stringify({ s0, control, after, crashed }));
  if (after.fds > control.fds + 4 || after.threads > control.threads + 4 || after.kids > control.kids) console.log(`FINDING: after ${N} terminated workers: fds ${control.fds}->${after.fds}, threads ${control.threads}->${after.threads}, child processes ${control.kids}->${after.kids}`);
  else console.log('held');
  process.exit(0);
})();
