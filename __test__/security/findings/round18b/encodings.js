'use strict';
// R18b: the invariant counts bytes; a `protocol` write may be a string (utf8 multibyte, hex, base64, latin1), a
// Uint8Array, a DataView-less typed array view with an offset, or empty. Each write's byte length (Buffer.byteLength
// with its encoding) must be in exactly one of protocolIn / protocolInDiscarded / protocolDroppedBytes: through a
// reader (all in protocolIn, and the program's sha256 of what it read matches), a program that exits without reading,
// and writes after wait(). Usage: node encodings.js [reps] [local|remote|remote-tls|remote-nobody] [control]
// (control: Buffers only).
const crypto = require('crypto');
const { startHost, sleep, PKG, descendants, missing } = require('./common');
const cordon = require(PKG);
const { connectRemote } = require(PKG + '/lib/remote');
const REPS = +(process.argv[2] || 10);
const where = process.argv[3] || 'local';
const control = process.argv[4] === 'control';
function items(i) {
  const big = new Uint8Array(300000).fill(7);
  const view = new Uint8Array(big.buffer, 1000 + i, 5000);
  const base = [['héllo wörld ✓ 🙂'.repeat(50), 'utf8'], ['deadbeef'.repeat(1000), 'hex'], [Buffer.alloc(40000, 5).toString('base64'), 'base64'],
    ['\u00ff\u00fe'.repeat(3000), 'latin1'], [view, undefined], [new Uint8Array(0), undefined], ['', 'utf8'], [new Uint16Array([1, 2, 3, 0xffff]), undefined], ['🙂'.repeat(40000), 'utf8']];
  return control ? base.map(([v, e]) => [Buffer.from(typeof v === 'string' ? Buffer.from(v, e) : Buffer.from(v.buffer, v.byteOffset, v.byteLength))]) : base;
}
const len = (v, e) => (typeof v === 'string' ? Buffer.byteLength(v, e) : v.byteLength);
const asBuf = (v, e) => (typeof v === 'string' ? Buffer.from(v, e) : Buffer.from(v.buffer, v.byteOffset, v.byteLength));
(async () => {
  let h = null, c = null;
  if (where !== 'local') { h = await startHost({ tls: where === 'remote-tls', asNobody: where === 'remote-nobody' }); c = connectRemote(h.target); }
  const spawn = (prog, o) => (c ? c.spawnIsolated(['py', '-c', prog], { policy: c.readOnly(), ...o }) : cordon.spawnIsolated(['/usr/bin/python3', '-c', prog], { policy: cordon.readOnly(), ...o }));
  let bad = 0, n = 0;
  try {
    for (let i = 0; i < REPS; i++) {
      for (const kind of ['reader', 'noread', 'late']) {
        n++;
        const prog = kind !== 'reader' ? 'import time\ntime.sleep(0.05)' : 'import os,sys,hashlib\nh=hashlib.sha256()\nwhile True:\n  b=os.read(3,1<<20)\n  if not b: break\n  h.update(b)\nsys.stderr.write(h.hexdigest())';
        const ex = spawn(prog, {});
        let err = ''; ex.stderr.on('data', (d) => { err += d; });
        ex.protocol.resume(); ex.protocol.on('error', () => {});
        let ok = 0, bytesErr = 0, pending = 0;
        const hash = crypto.createHash('sha256');
        const write = (v, e) => { pending++; const L = len(v, e); const cb = (er) => { pending--; if (er) bytesErr += L; else ok += L; }; if (e) ex.protocol.write(v, e, cb); else ex.protocol.write(v, cb); };
        for (const [v, e] of items(i)) { hash.update(asBuf(v, e)); write(v, e); }
        if (kind === 'reader') ex.protocol.end();
        const r = await ex.wait();
        if (kind === 'late') for (const [v, e] of items(i)) write(v, e);
        for (let k = 0; k < 200 && pending; k++) await sleep(5);
        const m = ok - r.receipt.bytes.protocolIn - r.receipt.bytes.protocolInDiscarded - ex.protocolDroppedBytes;
        const digestOk = kind !== 'reader' || err.trim() === hash.digest('hex');
        if (m !== 0 || pending || bytesErr || !digestOk) { bad++; console.log('BAD', JSON.stringify({ i, kind, ok, bytesErr, pending, m, in: r.receipt.bytes.protocolIn, disc: r.receipt.bytes.protocolInDiscarded, dropped: ex.protocolDroppedBytes, digestOk })); }
        else if (process.env.V) console.log('ok', JSON.stringify({ i, kind, ok, in: r.receipt.bytes.protocolIn, disc: r.receipt.bytes.protocolInDiscarded, dropped: ex.protocolDroppedBytes }));
      }
    }
  } finally { if (h) { console.log('processes left', descendants(h.pid).length); await c.close(); await h.stop(); } }
  console.log(`${where}${control ? ' control' : ''}: runs ${n}, bad ${bad}`);
  console.log(bad ? `FINDING: ${bad}/${n} runs: bytes of string/typed-array writes broke the invariant` : 'held');
})();
