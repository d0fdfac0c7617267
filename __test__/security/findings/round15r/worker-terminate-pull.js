'use strict';
// R15r: worker_threads terminated while the pulled reader is mid-call: inside a
// 'data' listener (busy, called from the poll callback via napi_make_callback),
// with a write's rest kept waiting for LoopEvent.Writable (sandbox never reads),
// with a listener that throws on every chunk, and with several floods at once.
// The process must not abort; the worker must exit; every sandbox must go; fds
// return to the base. Control: the same workers running a plain setInterval.
const path = require('node:path');
const fs = require('node:fs');
const { Worker } = require('node:worker_threads');
const PKG = process.env.R14_PKG || path.resolve(__dirname, '../../../..');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const fdCount = () => fs.readdirSync('/proc/self/fd').length;
function bwrapsOfMine() {
  let n = 0;
  for (const p of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      if (fs.readFileSync(`/proc/${p}/comm`, 'utf8').trim() !== 'bwrap') continue;
      let pid = p;
      for (let i = 0; i < 6; i++) { pid = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[1]; if (Number(pid) === process.pid) { n++; break; } if (pid === '0' || pid === '1') break; }
    } catch {}
  }
  return n;
}
const src = (kind) => `
const { parentPort } = require('node:worker_threads');
if (${JSON.stringify(kind)} === 'control') { setInterval(() => {}, 5); parentPort.postMessage('ready'); } else {
const cordon = require(${JSON.stringify(PKG)});
const runs = ${JSON.stringify(kind)} === 'many' ? 4 : 1;
let told = false;
const tell = () => { if (!told) { told = true; parentPort.postMessage('ready'); } };
process.on('uncaughtException', () => {});
for (let i = 0; i < runs; i++) {
  const e = cordon.spawnIsolated(['/bin/sh', '-c', 'exec cat /dev/zero >&3'], { policy: cordon.readOnly() });
  e.stderr.resume();
  if (${JSON.stringify(kind)} === 'busy') e.protocol.on('data', () => { tell(); const t = Date.now(); while (Date.now() - t < 3); });
  else if (${JSON.stringify(kind)} === 'throw') e.protocol.on('data', () => { tell(); throw new Error('x'); });
  else if (${JSON.stringify(kind)} === 'rest') { e.protocol.once('data', () => { e.protocol.write(Buffer.alloc(8 << 20, 1)); tell(); }); e.protocol.resume(); }
  else e.protocol.on('data', tell);
}
}`;
(async () => {
  const base = fdCount();
  const rows = [];
  for (const kind of ['control', 'busy', 'throw', 'rest', 'many']) {
    let exitCodes = [];
    for (let k = 0; k < 10; k++) {
      const w = new Worker(src(kind), { eval: true });
      w.on('error', (e) => rows.push(`${kind} error ${e.message}`));
      await Promise.race([new Promise((r) => w.once('message', r)), sleep(5000)]);
      await sleep(k * 7);
      const code = await Promise.race([w.terminate(), sleep(10000).then(() => 'HUNG')]);
      exitCodes.push(code);
    }
    await sleep(1500);
    rows.push(`${kind}: exits ${[...new Set(exitCodes)]} bwraps-left ${bwrapsOfMine()} fds ${fdCount() - base}`);
  }
  await sleep(2000);
  const left = bwrapsOfMine(); const fdl = fdCount() - base;
  const hung = rows.some((r) => /HUNG|error/.test(r));
  const s = `${rows.join('; ')}; at end bwraps ${left} fds +${fdl}`;
  console.log(hung || left || fdl > 4 ? `FINDING: ${s}` : `held (${s})`);
})();
