'use strict';
// R14w: the loop reader's libuv handles (src/uv.rs, src/loop_reader.rs) across
// a run's lifetime. Four parts, each with its own verdict:
//  A. N runs (default 2000, 4 at a time), each sending a frame on fd 3:
//     /proc/self/fd, threads and RSS after 200 runs vs after N (GC'd).
//  B. worker_threads terminated at each phase (before the sandbox starts,
//     mid-flood, after Finished, with several runs per worker): the process
//     must not abort (CheckedUvLoopClose), every sandbox must go, fds return.
//  C. executions dropped unreferenced mid-flood and GC'd (--expose-gc).
//  D. idle pooled sandboxes (createPool, createCodeMode({pool})) with no
//     close(): does Node exit on its own? (docs: a pool keeps the process alive
//     until close(); createCodeMode: see docs/code-mode.md)
// Usage: node --expose-gc loop-reader-lifecycle.js [A|B|C|D ...]
const path = require('node:path');
const fs = require('node:fs');
const { Worker } = require('node:worker_threads');
const { spawn, execFileSync } = require('node:child_process');
const PKG = process.env.R14W_PKG || path.resolve(__dirname, '../../../..');
const N = Number(process.env.R14W_RUNS || 2000);

const fdCount = () => fs.readdirSync('/proc/self/fd').length;
const threads = () => fs.readdirSync('/proc/self/task').length;
const rssMb = () => Math.round(process.memoryUsage().rss / 1048576);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
function sandboxesOfMine() {
  // bwrap processes whose ancestor is this process
  const out = [];
  for (const p of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      let pid = p; let comm = fs.readFileSync(`/proc/${p}/comm`, 'utf8').trim();
      if (comm !== 'bwrap') continue;
      for (let i = 0; i < 6; i++) { pid = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[1]; if (Number(pid) === process.pid) { out.push(p); break; } if (pid === '0' || pid === '1') break; }
    } catch {}
  }
  return out;
}

async function partA() {
  const { spawnIsolated, readOnly } = require(PKG);
  const one = async () => {
    const e = spawnIsolated(['/bin/sh', '-c', 'echo frame >&3'], { policy: readOnly() });
    let got = ''; e.protocol.on('data', (c) => { got += c; }); e.stderr.resume();
    const r = await e.wait();
    if (got !== 'frame\n' || r.receipt.bytes.protocolOut !== 6) throw new Error(`bytes: ${JSON.stringify(got)} ${r.receipt.bytes.protocolOut}`);
  };
  let done = 0; let snap = null; const t0 = Date.now();
  const lane = async () => { while (done < N) { done++; await one(); if (done === 200 && !snap) { await sleep(300); global.gc?.(); snap = { fds: fdCount(), threads: threads(), rss: rssMb() }; } } };
  await Promise.all([lane(), lane(), lane(), lane()]);
  await sleep(500); global.gc?.(); await sleep(200); global.gc?.();
  const end = { fds: fdCount(), threads: threads(), rss: rssMb() };
  const s = `A: ${N} runs in ${Date.now() - t0} ms; after 200: ${JSON.stringify(snap)}; after ${N}: ${JSON.stringify(end)}`;
  console.log(end.fds - snap.fds > 8 || end.threads - snap.threads > 4 || end.rss - snap.rss > 60 ? `FINDING: ${s}` : `held (${s})`);
}

const workerSrc = (phase, runs) => `
const { parentPort } = require('node:worker_threads');
const { spawnIsolated, readOnly } = require(${JSON.stringify(PKG)});
(async () => {
  for (let i = 0; i < ${runs}; i++) {
    const flood = ${JSON.stringify(phase)} === 'mid-flood';
    const e = spawnIsolated(flood ? ['/bin/sh', '-c', 'exec cat /dev/zero >&3'] : ['/bin/sh', '-c', 'echo frame >&3; sleep 30'], { policy: readOnly() });
    e.stderr.resume();
    if (${JSON.stringify(phase)} === 'before-start') { parentPort.postMessage('ready'); return; }
    await new Promise((r) => e.protocol.once('data', r));
    if (flood) { e.protocol.resume(); parentPort.postMessage('ready'); return; }
    if (i < ${runs} - 1 || ${JSON.stringify(phase)} === 'after-finished') { e.protocol.resume(); await e.stop(); }
  }
  parentPort.postMessage('ready');
})();`;

async function partB() {
  const base = fdCount();
  const results = [];
  for (const [phase, runs] of [['before-start', 1], ['mid-flood', 1], ['after-finished', 1], ['after-finished', 5], ['live-sleep', 3]]) {
    for (let k = 0; k < 8; k++) {
      const w = new Worker(workerSrc(phase, runs), { eval: true });
      let exited = false; w.on('exit', () => { exited = true; }); w.on('error', (e) => results.push(`${phase} error ${e.message}`));
      await new Promise((r) => { w.once('message', r); w.once('exit', r); });
      if (phase === 'mid-flood') await sleep(20 * k);
      await w.terminate();
    }
  }
  await sleep(3000);
  const left = sandboxesOfMine();
  const s = `B: 40 workers terminated (before-start, mid-flood, after-finished x1/x5, live sleep x3); process alive; fds ${base} -> ${fdCount()}; sandboxes left ${left.length}; errors ${results.length}`;
  console.log(left.length || fdCount() - base > 6 || results.length ? `FINDING: ${s} ${results.join('; ')}` : `held (${s})`);
  for (const p of left) try { process.kill(Number(p), 'SIGKILL'); } catch {}
}

async function partC() {
  const { spawnIsolated, readOnly } = require(PKG);
  const base = fdCount();
  const waits = [];
  for (let i = 0; i < 20; i++) {
    // The caller keeps only wait(); the execution object itself is dropped mid-flood.
    let e = spawnIsolated(['/bin/sh', '-c', 'head -c 3000000 /dev/zero >&3'], { policy: readOnly() });
    e.protocol.resume(); e.stderr.resume();
    waits.push(e.wait().then((r) => r.receipt.bytes.protocolOut));
    e = null;
    global.gc?.();
  }
  const outs = await Promise.race([Promise.all(waits), sleep(60000).then(() => null)]);
  global.gc?.(); await sleep(500); global.gc?.();
  const s = `C: 20 executions dropped mid-flood + gc: ${outs ? 'all settled, protocolOut ' + [...new Set(outs)].join(',') : 'NOT all settled in 60 s'}; fds ${base} -> ${fdCount()}`;
  console.log(!outs || outs.some((b) => b !== 3000000) || fdCount() - base > 6 ? `FINDING: ${s}` : `held (${s})`);
}

function exitsAlone(src, ms) {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, ['-e', src], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = ''; c.stdout.on('data', (d) => { out += d; }); c.stderr.on('data', (d) => { out += d; });
    const t0 = Date.now();
    const timer = setTimeout(() => { try { process.kill(c.pid, 'SIGTERM'); } catch {} }, ms);
    c.on('exit', (code, sig) => { clearTimeout(timer); resolve({ code, sig, ms: Date.now() - t0, out: out.trim().slice(0, 300) }); });
  });
}

async function partD() {
  const pool = await exitsAlone(`const c = require(${JSON.stringify(PKG)}); const p = c.createPool({ command: ['/bin/sleep', '1000'], policy: c.readOnly() }, { size: 2 }); setTimeout(() => console.log(JSON.stringify(p.stats())), 1500);`, 8000);
  const taken = await exitsAlone(`const c = require(${JSON.stringify(PKG)}); const p = c.createPool({ command: ['/bin/sh', '-c', 'echo hi >&3; cat >/dev/null'], policy: c.readOnly() }, { size: 2 }); setTimeout(async () => { const e = p.take(); e.stderr.resume(); e.protocol.on('data', () => {}); e.protocol.end(); const r = await e.wait(); console.log('taken rc', r.returncode, JSON.stringify(p.stats())); }, 1500);`, 10000);
  let cm = null;
  try { cm = await exitsAlone(`const c = require(${JSON.stringify(PKG)}); const m = c.createCodeMode({ tools: [], pool: { size: 2 } }); setTimeout(async () => { const r = await m.run('return 1+1'); console.log('cm', JSON.stringify(r.ok ?? r).slice(0, 100), JSON.stringify(m.poolStats())); }, 2500);`, 15000); } catch (e) { cm = { out: String(e) }; }
  console.log(`D: createPool idle, no close: ${JSON.stringify(pool)}`);
  console.log(`D: createPool after a take, no close: ${JSON.stringify(taken)}`);
  console.log(`D: createCodeMode({pool}) after a run, no close: ${JSON.stringify(cm)}`);
  console.log('D: (a SIGTERM exit means Node did not exit on its own; docs/index.d.ts: a pool keeps the process alive until close())');
}

(async () => {
  const parts = process.argv.slice(2).length ? process.argv.slice(2) : ['A', 'B', 'C', 'D'];
  for (const p of parts) await ({ A: partA, B: partB, C: partC, D: partD })[p]();
  process.exit(0);
})().catch((e) => { console.log('error', e); process.exit(1); });
