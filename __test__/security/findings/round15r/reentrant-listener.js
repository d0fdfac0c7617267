'use strict';
// R15r: re-entrancy of the pulled protocol stream. A 'data' listener called
// from the addon's poll callback (napi_make_callback) does, synchronously, one
// of: stop(), protocol.destroy(), pause()+later resume(), write() of 4 MiB,
// end(), spawn another run, or readProtocol-ish read() on a paused stream —
// while the sandbox floods fd 3. Each run must settle (wait) within 10 s, the
// process must not crash, and every sandbox must be gone. Control: the same
// flood with a plain listener.
const path = require('node:path');
const fs = require('node:fs');
const PKG = process.env.R14_PKG || path.resolve(__dirname, '../../../..');
const cordon = require(PKG);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const within = (p, ms) => Promise.race([p.then(() => true, () => true), sleep(ms).then(() => false)]);
const uncaught = [];
process.on('uncaughtException', (e) => { uncaught.push(e.message); });
const FLOOD = ['/bin/sh', '-c', 'exec cat /dev/zero >&3'];
const spawn = (cmd = FLOOD) => { const e = cordon.spawnIsolated(cmd, { policy: cordon.readOnly(), deadlineMs: 20000 }); e.stderr.resume(); e.protocol.on('error', () => {}); return e; };
const fdCount = () => fs.readdirSync('/proc/self/fd').length;

const cases = {
  control: (ex) => { let n = 0; ex.protocol.on('data', () => { if (++n === 50) setImmediate(() => ex.stop()); }); },
  stop: (ex) => { let n = 0; ex.protocol.on('data', () => { if (++n === 5) ex.stop(); }); },
  stopEvery: (ex) => { ex.protocol.on('data', () => { ex.stop(); }); },
  destroy: (ex) => { let n = 0; ex.protocol.on('data', () => { if (++n === 5) { ex.protocol.destroy(); setTimeout(() => ex.stop(), 300); } }); },
  pauseResume: (ex) => { let n = 0; ex.protocol.on('data', () => { n++; ex.protocol.pause(); if (n < 200) setImmediate(() => ex.protocol.resume()); else setTimeout(() => ex.stop(), 100); }); },
  pauseReadSync: (ex) => { let n = 0; ex.protocol.on('data', () => { n++; ex.protocol.pause(); ex.protocol.read(); ex.protocol.resume(); if (n === 300) ex.stop(); }); },
  write: (ex) => { let n = 0; const big = Buffer.alloc(4 << 20, 1); ex.protocol.on('data', () => { n++; if (n < 20) ex.protocol.write(big); if (n === 40) ex.stop(); }); },
  end: (ex) => { let n = 0; ex.protocol.on('data', () => { n++; if (n === 3) { ex.protocol.write(Buffer.alloc(1 << 20)); ex.protocol.end(); } if (n === 60) ex.stop(); }); },
  spawnAnother: (ex) => { let n = 0; const others = []; ex._others = others; ex.protocol.on('data', () => { n++; if (n <= 3) { const o = spawn(['/bin/sh', '-c', 'echo hi >&3']); o.protocol.resume(); others.push(o); } if (n === 30) ex.stop(); }); },
  removeAndReadable: (ex) => { let n = 0; const f = () => { if (++n === 10) { ex.protocol.removeListener('data', f); ex.protocol.on('readable', () => { while (ex.protocol.read() !== null) n++; if (n > 500) ex.stop(); }); } }; ex.protocol.on('data', f); },
};

(async () => {
  // Warm-up run first: the addon's one-time descriptors (+3) are not per run.
  { const w = spawn(['/bin/sh', '-c', 'echo w >&3']); w.protocol.resume(); await w.wait(); await sleep(300); }
  const base = fdCount();
  const rows = []; let bad = false;
  for (const [name, setup] of Object.entries(cases)) {
    const ex = spawn();
    setup(ex);
    const ok = await within(ex.wait(), 10000);
    if (!ok) { bad = true; await ex.stop(); }
    const r = await ex.wait().then((v) => v, (e) => ({ err: e.code }));
    for (const o of ex._others || []) { const ok2 = await within(o.wait(), 5000); if (!ok2) { bad = true; rows.push(`${name}: child run unsettled`); o.stop(); } }
    rows.push(`${name}: settled=${ok} rc=${r.returncode ?? r.err} out=${r.receipt?.bytes?.protocolOut} in=${r.receipt?.bytes?.protocolIn}`);
  }
  await sleep(500);
  const fdsLeft = fdCount() - base;
  if (fdsLeft > 2) bad = true;
  const s = `${rows.join('; ')}; fds +${fdsLeft}; uncaught ${JSON.stringify(uncaught)}`;
  console.log(bad ? `FINDING: ${s}` : `held (${s})`);
})();
