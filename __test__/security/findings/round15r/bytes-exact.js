'use strict';
// R15r: bytes lost, duplicated or reordered between pulled chunks (readProtocol,
// up to 256 KiB into a FIONREAD-sized Buffer), the teardown's reads and End.
// The sandbox writes a deterministic stream (sizes 1 B .. 1 MiB, bursts and
// pauses) and either exits (the teardown drains the rest) or is stopped
// mid-flood; the consumer switches between flowing, paused and 'readable'
// mode. Received bytes must equal the stream's prefix and the receipt's
// protocolOut exactly. Control: the same program's stdout through a plain
// child_process pipe.
const path = require('node:path');
const crypto = require('node:crypto');
const PKG = process.env.R14_PKG || path.resolve(__dirname, '../../../..');
const cordon = require(PKG);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const TOTAL = 24 << 20;
const PROG = `
import os, sys, time, random
fd = int(sys.argv[1]); total = int(sys.argv[2]); random.seed(7)
pat = bytes((i * 7 + 3) & 255 for i in range(256)) * 4097
off = 0
while off < total:
    n = min(total - off, random.choice([1, 7, 4095, 16383, 16384, 16385, 65536, 262143, 262145, 1 << 20]))
    data = (pat[off % 256:] * (n // len(pat) + 2))[:n]
    mv = memoryview(data)
    while mv:
        k = os.write(fd, mv); mv = mv[k:]
    off += n
    if random.random() < 0.02: time.sleep(0.005)
`;
function expected(n) { const pat = Buffer.alloc(256); for (let i = 0; i < 256; i++) pat[i] = (i * 7 + 3) & 255; const b = Buffer.alloc(n); for (let i = 0; i < n; i++) b[i] = pat[i & 255]; return b; }
const EXP = expected(TOTAL);

async function one(mode, stopAfterMs) {
  const ex = cordon.spawnIsolated(['/usr/bin/python3', '-c', PROG, '3', String(TOTAL)], { policy: cordon.readOnly(), deadlineMs: 60000 });
  ex.stderr.resume();
  const parts = []; let got = 0;
  const take = (c) => { parts.push(c); got += c.length; };
  if (mode === 'flowing') ex.protocol.on('data', take);
  else if (mode === 'readable') ex.protocol.on('readable', () => { let c; while ((c = ex.protocol.read()) !== null) take(c); });
  else if (mode === 'games') {
    let n = 0;
    ex.protocol.on('data', (c) => { take(c); n++; if (n % 7 === 0) { ex.protocol.pause(); setTimeout(() => ex.protocol.resume(), 3); } if (n % 11 === 0) { ex.protocol.pause(); setImmediate(() => { while (ex.protocol.read(1000) !== null); ex.protocol.resume(); /* read() emits 'data' itself */ }); } });
  }
  if (stopAfterMs) setTimeout(() => ex.stop(), stopAfterMs);
  const ended = new Promise((r) => ex.protocol.once('end', r));
  const r = await ex.wait().then((v) => v, (e) => ({ err: e.code, receipt: e.details?.receipt }));
  await Promise.race([ended, sleep(2000)]);
  const buf = Buffer.concat(parts);
  const out = r.receipt?.bytes?.protocolOut;
  const prefixOk = buf.length <= TOTAL && buf.equals(EXP.subarray(0, buf.length));
  const full = stopAfterMs ? true : buf.length === TOTAL;
  return { mode, stop: !!stopAfterMs, got: buf.length, out, prefixOk, ok: prefixOk && full && out === buf.length, rc: r.returncode, err: r.err };
}
async function control() {
  const { spawn } = require('node:child_process');
  const ch = spawn('/usr/bin/python3', ['-c', PROG, '1', String(TOTAL)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const parts = []; ch.stdout.on('data', (c) => parts.push(c));
  await new Promise((r) => ch.on('close', r));
  const b = Buffer.concat(parts); return { got: b.length, ok: b.equals(EXP) };
}
(async () => {
  const c = await control();
  const rows = [];
  for (const mode of ['flowing', 'readable', 'games']) for (const stopAfter of [0, 150, 400]) rows.push(await one(mode, stopAfter));
  const bad = rows.filter((r) => !r.ok);
  const s = `control ${JSON.stringify(c)}; ${rows.map((r) => `${r.mode}${r.stop ? '+stop' : ''}: got ${r.got} out ${r.out} prefixOk ${r.prefixOk}`).join('; ')}`;
  console.log(bad.length || !c.ok ? `FINDING: ${s}` : `held (${s})`);
})();
