'use strict';
// R16r: worker_threads terminated at the phases the R15r-1 fix added: a kept
// rest handed to the writer thread at ProtocolEnd (the sandbox half-closes and
// reads slowly: 'half'), write callbacks running from LoopEvent.Writable that
// write again ('writable'), and 3 runs mixing both with stop() ('mixed'),
// terminated 0..63 ms after the first event.
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
const HALF = 'import os,socket,time\nos.write(3,b"x")\ns=socket.socket(fileno=3);s.shutdown(socket.SHUT_WR);s.detach()\nwhile os.read(3,65536): time.sleep(0.001)\n';
const SLOW = 'import os,time\nos.write(3,b"x")\nwhile os.read(3,65536): time.sleep(0.001)\n';
const src = (kind) => `
const { parentPort } = require('node:worker_threads');
if (${JSON.stringify(kind)} === 'control') { setInterval(() => {}, 5); parentPort.postMessage('ready'); } else {
const cordon = require(${JSON.stringify(PKG)});
const runs = ${JSON.stringify(kind)} === 'mixed' ? 3 : 1;
let told = false;
const tell = () => { if (!told) { told = true; parentPort.postMessage('ready'); } };
process.on('uncaughtException', () => {});
for (let i = 0; i < runs; i++) {
  const kind = ${JSON.stringify(kind)} === 'mixed' ? ['half', 'writable', 'stop'][i % 3] : ${JSON.stringify(kind)};
  const prog = kind === 'half' ? ${JSON.stringify(HALF)} : ${JSON.stringify(SLOW)};
  const e = cordon.spawnIsolated(['/usr/bin/python3', '-c', prog], { policy: cordon.readOnly() });
  e.stderr.resume();
  e.protocol.on('error', () => {});
  e.protocol.once('data', () => {
    tell();
    const cb = () => { if (kind !== 'half') e.protocol.write(Buffer.alloc(256 << 10, 2), cb); };
    e.protocol.write(Buffer.alloc(8 << 20, 1), cb);
    if (kind === 'half') e.protocol.end();
    if (kind === 'stop') setTimeout(() => e.stop(), 20);
  });
  e.protocol.resume();
}
}`;
(async () => {
  const base = fdCount();
  const rows = [];
  for (const kind of ['control', 'half', 'writable', 'mixed']) {
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
