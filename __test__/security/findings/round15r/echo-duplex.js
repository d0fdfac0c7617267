'use strict';
// R15r: both directions full at once. The sandbox echoes fd 3 to fd 3 (cat),
// the provider writes 32 MiB (writes of 1 B .. 3 MiB, rests kept in JS until
// LoopEvent.Writable) and end()s, while reading the echo (flowing; and paused
// for 20 ms every 8 chunks so fd 3 fills both ways). Every byte must come
// back once, in order; protocolIn == protocolOut == 32 MiB; every write
// callback called; the run ends. Control: a child `cat` over pipes.
const path = require('node:path');
const crypto = require('node:crypto');
const { spawn } = require('node:child_process');
const PKG = process.env.R14_PKG || path.resolve(__dirname, '../../../..');
const cordon = require(PKG);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const TOTAL = 32 << 20;
const src = crypto.randomBytes(TOTAL);
const sizes = [1, 4095, 65536, 262145, 3 << 20, 17, 1 << 20];
async function drive(writable, readable, label) {
  const parts = []; let n = 0; let cbs = 0; let writes = 0;
  readable.on('data', (c) => { parts.push(c); if (++n % 8 === 0) { readable.pause(); setTimeout(() => readable.resume(), 20); } });
  const ended = new Promise((r) => readable.once('end', r));
  let off = 0; let i = 0;
  while (off < TOTAL) {
    const len = Math.min(sizes[i++ % sizes.length], TOTAL - off);
    writes++;
    const ok = writable.write(src.subarray(off, off + len), () => { cbs++; });
    off += len;
    if (!ok) await new Promise((r) => writable.once('drain', r));
  }
  writable.end();
  await Promise.race([ended, sleep(60000)]);
  const back = Buffer.concat(parts);
  return { label, back: back.length, exact: back.equals(src), cbs, writes };
}
(async () => {
  const ch = spawn('cat', [], { stdio: ['pipe', 'pipe', 'ignore'] });
  const control = await drive(ch.stdin, ch.stdout, 'control cat over pipes');
  const ex = cordon.spawnIsolated(['/bin/sh', '-c', 'exec cat <&3 >&3'], { policy: cordon.readOnly(), deadlineMs: 90000 });
  ex.stderr.resume();
  const t0 = Date.now();
  const c = await drive(ex.protocol, ex.protocol, 'cordon');
  const r = await ex.wait().then((v) => v, (e) => ({ err: e.code }));
  c.ms = Date.now() - t0; c.protocolIn = r.receipt?.bytes?.protocolIn; c.protocolOut = r.receipt?.bytes?.protocolOut; c.rc = r.returncode ?? r.err;
  const ok = c.exact && c.cbs === c.writes && c.protocolIn === TOTAL && c.protocolOut === TOTAL;
  const s = `${JSON.stringify(control)}; ${JSON.stringify(c)}`;
  console.log(ok ? `held (${s})` : `FINDING: ${s}`);
})();
