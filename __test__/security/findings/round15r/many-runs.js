'use strict';
// R15r: per-run leaks of the pulled path. N runs (default 1000, 4 at a time),
// each: the sandbox sends 300 KB on fd 3 (pulled into FIONREAD-sized Buffers)
// and never reads; the provider writes 1 MiB (its rest kept in JS, a writable
// watch armed) and ends. Every run must settle, every write callback be called
// once, and fds/threads/RSS after N must match those after 200 (GC'd).
const path = require('node:path');
const fs = require('node:fs');
const PKG = process.env.R14_PKG || path.resolve(__dirname, '../../../..');
const cordon = require(PKG);
const N = Number(process.env.R15R_RUNS || 1000);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const snap = () => ({ fds: fs.readdirSync('/proc/self/fd').length, threads: fs.readdirSync('/proc/self/task').length, rss: Math.round(process.memoryUsage().rss / 1048576) });
let callbacks = 0; let badBytes = 0; let unsettled = 0;
const big = Buffer.alloc(1 << 20, 0x62);
async function one() {
  const e = cordon.spawnIsolated(['/bin/sh', '-c', 'head -c 300000 /dev/zero >&3; sleep 0.05'], { policy: cordon.readOnly(), deadlineMs: 20000 });
  e.stderr.resume();
  let got = 0;
  e.protocol.on('data', (c) => { got += c.length; });
  e.protocol.write(big, () => { callbacks++; });
  e.protocol.end();
  const r = await e.wait().then((v) => v, (err) => ({ err }));
  if (got !== 300000 || r.receipt?.bytes?.protocolOut !== 300000) badBytes++;
}
(async () => {
  let done = 0; let at200 = null; const t0 = Date.now();
  const lane = async () => { while (done < N) { done++; await one(); if (done >= 200 && !at200) { at200 = 'pending'; await sleep(500); global.gc?.(); await sleep(100); at200 = snap(); } } };
  await Promise.all([lane(), lane(), lane(), lane()]);
  await sleep(800); global.gc?.(); await sleep(200); global.gc?.();
  const end = snap();
  await sleep(200);
  const s = `${N} runs in ${Date.now() - t0} ms; write callbacks ${callbacks}/${N}; bad byte counts ${badBytes}; after 200 ${JSON.stringify(at200)}; after ${N} ${JSON.stringify(end)}`;
  const leak = end.fds - at200.fds > 8 || end.threads - at200.threads > 4 || end.rss - at200.rss > 60;
  console.log(leak || callbacks !== N || badBytes ? `FINDING: ${s}` : `held (${s})`);
})();
