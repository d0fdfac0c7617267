'use strict';
// A worker_thread spawns a run that floods fd 3 (and reads fd 3), then is terminated mid-run at random moments.
// The main thread must stay healthy. Then: no sandbox survives (the bwrap pid reported by the worker is gone
// within a few seconds), and provider threads/fds return to the baseline. Control: the same worker ends normally.
const { Worker } = require('worker_threads');
const fs = require('fs');
const { nthreads, nfds, PKG } = require('./common');
const RUNS = +(process.env.RUNS || 20);
const MODE = process.argv[2] || 'terminate';
const src = `
const { parentPort } = require('worker_threads');
const cordon = require(${JSON.stringify(PKG)});
const ex = cordon.spawnIsolated(['/usr/bin/python3', '-c', 'import os\\nb = b"z" * 65536\\nwhile True: os.write(3, b)'], { policy: cordon.readOnly(), deadlineMs: 30000 });
ex.stderr.resume(); ex.protocol.on('error', () => {});
let n = 0; ex.protocol.on('data', (d) => { n += d.length; });
ex.protocol.write(Buffer.alloc(1 << 20));
parentPort.postMessage({ pid: ex.pid });
ex.wait().then(() => parentPort.postMessage({ done: n }));
`;
const alive = (pid) => { try { return !fs.readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z'); } catch { return false; } };
(async () => {
  const base = { th: nthreads(), fds: nfds() }; const pids = [];
  for (let i = 0; i < RUNS; i++) {
    const w = new Worker(src, { eval: true });
    const pid = await new Promise((r) => w.on('message', (m) => m.pid && r(m.pid)));
    pids.push(pid);
    if (MODE === 'terminate') { await new Promise((r) => setTimeout(r, Math.random() * 300)); await w.terminate(); }
    else await new Promise((r) => w.on('message', (m) => m.done !== undefined && r()));
    if (MODE !== 'terminate') await w.terminate();
  }
  await new Promise((r) => setTimeout(r, 4000));
  const left = pids.filter(alive);
  const end = { th: nthreads(), fds: nfds() };
  console.log(JSON.stringify({ MODE, RUNS, base, end, sandboxesLeft: left.length }));
  const f = [];
  if (left.length) f.push(`${left.length} bwrap processes outlive their terminated worker`);
  if (end.fds > base.fds + 6) f.push('descriptors grew');
  if (end.th > base.th + 6) f.push('threads grew');
  console.log(f.length ? 'FINDING: ' + f.join('; ') : 'held');
  for (const p of left) { try { process.kill(p, 'SIGKILL'); } catch {} }
})();
