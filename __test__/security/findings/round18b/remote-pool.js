'use strict';
// R18b: docs/remote.md: createPool over a host is the local pool bound to the remote spawnIsolated. A waiting
// sandbox has been spawned before take(); writes made right after take() (and while its deadline, counted from the
// take, fires; or after the pool closes) keep the byte invariant; pool.close() stops what waits; nothing is left.
// Usage: node remote-pool.js [takes] [tls|nobody|control]  (control: the program reads to EOF and the client end()s)
const { startHost, counter, missing, sleep, PKG, descendants } = require('./common');
const { connectRemote } = require(PKG + '/lib/remote');
const TAKES = +(process.argv[2] || 40);
const mode = process.argv[3] || '';
const control = mode === 'control';
(async () => {
  const h = await startHost({ tls: mode === 'tls', asNobody: mode === 'nobody' });
  const c = connectRemote(h.target);
  const prog = control ? 'import os\nwhile os.read(3,1<<20): pass' : 'import os,time\nn=0\nwhile n<300000:\n  b=os.read(3,65536)\n  if not b: break\n  n+=len(b)';
  const pool = c.createPool({ command: ['py', '-c', prog], policy: c.readOnly() }, { size: 3 });
  let bad = 0, failed = 0;
  try {
    for (let i = 0; i < TAKES; i++) {
      const ex = pool.take(control ? {} : { deadlineMs: 150 + (i % 5) * 50 });
      ex.stderr.resume(); ex.protocol.resume();
      const x = counter(ex);
      let settled = false;
      const waited = ex.wait().then((r) => { settled = true; return r; }, (e) => { settled = true; return { error: e }; });
      let n = 0;
      while (!settled && n++ < 40) { x.w([65536, 200000, 7, 1 << 20][n % 4]); await new Promise((r) => setImmediate(r)); }
      if (control) x.p.end();
      const r = await waited;
      if (!control) { x.w(5); x.w(100000); }
      for (let k = 0; k < 200 && x.st.pending; k++) await sleep(5);
      if (r.error) { failed++; bad++; console.log('failed', i, r.error.code, r.error.message); continue; }
      const m = missing(ex, x.st, r);
      if (m !== 0 || x.st.pending) { bad++; console.log('BAD', i, JSON.stringify({ m, ok: x.st.ok, in: r.receipt.bytes.protocolIn, disc: r.receipt.bytes.protocolInDiscarded, dropped: ex.protocolDroppedBytes })); }
      else if (process.env.V) console.log('ok', i, JSON.stringify({ ok: x.st.ok, in: r.receipt.bytes.protocolIn, disc: r.receipt.bytes.protocolInDiscarded, dropped: ex.protocolDroppedBytes, stop: r.receipt.stop?.reason }));
    }
  } finally {
    await pool.close(); await sleep(300);
    const left = descendants(h.pid).length;
    console.log(`takes ${TAKES}: bad ${bad} (failed ${failed}); processes left after pool.close() ${left}`);
    if (left) bad++;
    await c.close(); await h.stop();
  }
  console.log(bad ? `FINDING: remote pool: ${bad} bad` : 'held');
})();
