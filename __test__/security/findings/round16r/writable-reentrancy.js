'use strict';
// R16r: re-entrancy from LoopEvent.Writable. A write whose rest was kept has
// its callback called from the poll callback (napi_make_callback ->
// _onLoop(Writable) -> _writable -> _writeSome -> callback). Those callbacks
// here do, at their 3rd call: stop(), protocol.destroy(), spawn and await
// another run, protocol.pause()+resume(), a further 2 MiB write + end(),
// throw (with an uncaughtException handler installed), or nothing (control).
// Every run must settle, no crash, protocolIn + protocolInDiscarded == bytes
// accepted (bytes that entered _write; all before the end here), fds back
// after a warm-up. (destroy(): the sandbox never sees EOF and runs to its
// deadline: protocol has no _destroy, as on main: noted, not this round's.)
const path = require('node:path');
const fs = require('node:fs');
const PKG = process.env.R14_PKG || path.resolve(__dirname, '../../../..');
const cordon = require(PKG);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const fds = () => fs.readdirSync('/proc/self/fd').length;
// Reads slowly, so the socket fills and drains: rests are kept and the
// writable watch fires.
const PROG = 'import os,time\nos.write(3,b"x")\nn=0\nwhile True:\n b=os.read(3,65536)\n if not b: break\n n+=len(b)\n time.sleep(0.002)\nos.write(2,b"got %d" % n)\n';
let thrown = 0;
process.on('uncaughtException', (e) => { if (e && e.r16r) thrown++; else { console.log('FINDING: unexpected uncaught', e); process.exitCode = 1; } });
async function one(action) {
  const e = cordon.spawnIsolated(['/usr/bin/python3', '-c', PROG], { policy: cordon.readOnly(), deadlineMs: 10000 });
  let err = ''; e.stderr.on('data', (d) => { err += d; });
  e.protocol.on('error', () => {});
  let accepted = 0; let calls = 0; let fromLoop = 0; const nested = [];
  const origWritable = e.protocol._writable;
  let inWritable = false;
  const origW = e.protocol._write;
  let settled = false; const origSettle = e._settle;
  e._settle = function () { settled = true; return origSettle.call(this); };
  // Counted when the native writer was still open as the chunk entered (a
  // zero-byte write answers Ended once it closed; no rest is kept while
  // _write runs). Writes between the launcher's close and Finished reaching
  // JS are "after the run ended" (dropped, uncounted: docs/receipts.md).
  e.protocol._write = function (c, enc, k) { if (!settled && e._native.write(Buffer.alloc(0)) !== 1) accepted += c.length; return origW.call(this, c, enc, k); };
  e.protocol._writable = function () { inWritable = true; try { return origWritable.call(this); } finally { inWritable = false; } };
  const cb = () => {
    calls++;
    if (inWritable) fromLoop++;
    if (calls === 16 + (action === 'more' ? 1 : 0)) e.protocol.end();
    if (calls !== 3) return;
    switch (action) {
      case 'stop': e.stop(); break;
      case 'destroy': e.protocol.destroy(); break;
      case 'spawn': { const n = cordon.spawnIsolated(['/bin/true'], { policy: cordon.readOnly() }); n.protocol.resume(); n.stderr.resume(); nested.push(n.wait().then(() => 'ok', (x) => x.code)); break; }
      case 'pause': e.protocol.pause(); e.protocol.resume(); break;
      case 'more': e.protocol.write(Buffer.alloc(2 << 20, 0x6d), cb); break;
      case 'throw': { const x = new Error('r16r'); x.r16r = true; throw x; }
      default: break;
    }
  };
  e.protocol.once('data', () => {
    for (let i = 0; i < 16; i++) e.protocol.write(Buffer.alloc(256 << 10, 0x61 + (i % 20)), cb);
  });
  e.protocol.resume();
  const t0 = Date.now();
  const timer = setTimeout(() => e.stop(), 12000);
  const r = await e.wait().then((v) => v, (x) => ({ err: x.code, receipt: x.details?.receipt }));
  clearTimeout(timer);
  const nestedRes = await Promise.all(nested);
  const b = r.receipt?.bytes || {};
  const got = Number((err.match(/got (\d+)/) || [])[1]);
  return { action, ms: Date.now() - t0, calls, fromLoop, in: b.protocolIn, disc: b.protocolInDiscarded, accepted, got, rc: r.returncode ?? r.err, nested: nestedRes };
}
(async () => {
  await one('none');
  await sleep(300);
  const f0 = fds();
  const res = [];
  for (const a of ['none', 'stop', 'destroy', 'spawn', 'pause', 'more', 'throw', 'none']) res.push(await one(a));
  await sleep(500);
  const f1 = fds();
  const bad = res.filter((x) => x.in + x.disc !== x.accepted ||  (['none', 'spawn', 'pause', 'more', 'throw'].includes(x.action) && x.got !== x.accepted) || (x.action !== 'destroy' && x.ms > 9000));
  const s = `${res.map((x) => JSON.stringify(x)).join('; ')}; thrown ${thrown}; fds ${f0} -> ${f1}`;
  console.log(bad.length || f1 > f0 + 2 ? `FINDING: ${JSON.stringify(bad)} :: ${s}` : `held (${s})`);
})();
