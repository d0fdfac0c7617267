'use strict';
// R18b: docs/remote.md: client.close() "refuses new runs, closes the client's pools and stops its running sandboxes;
// it resolves once each has settled". 4 concurrent runs write fire-and-forget (slow reader, non-reader, reader,
// closes fd 3 and lives), close() at 20-400 ms. Checked: close() resolves only after every wait() settled; each run
// resolves (stop) with the byte invariant; a spawn after close() is refused; no callback pending; nothing left.
// Usage: node remote-client-close.js [rounds] [tls|nobody|control]  (control: close() after the runs ended by themselves)
const { startHost, counter, missing, sleep, PKG, descendants } = require('./common');
const { connectRemote } = require(PKG + '/lib/remote');
const ROUNDS = +(process.argv[2] || 10);
const mode = process.argv[3] || '';
const control = mode === 'control';
const progs = [
  'import os,time\nwhile True:\n  if not os.read(3,4096): break\n  time.sleep(0.002)',
  'import time\ntime.sleep(2)',
  'import os\nwhile os.read(3,1<<20): pass',
  'import os,time\ntime.sleep(0.1)\nos.close(3)\ntime.sleep(2)',
];
(async () => {
  const h = await startHost({ tls: mode === 'tls', asNobody: mode === 'nobody' });
  let bad = 0, total = 0, early = 0, notRefused = 0;
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const c = connectRemote(h.target);
      const runs = progs.map((prog) => {
        const ex = c.spawnIsolated(['py', '-c', prog], { policy: c.readOnly(), deadlineMs: control ? 1000 : 20000 });
        ex.stderr.resume(); ex.protocol.resume();
        const x = counter(ex);
        const o = { ex, x, settledAt: 0 };
        o.waited = ex.wait().then((r) => { o.settledAt = Date.now(); return r; }, (e) => { o.settledAt = Date.now(); return { error: e }; });
        (async () => { let n = 0; while (!o.settledAt && n++ < 400) { x.w([1, 1000, 65536, 300000][n % 4]); await new Promise((r) => setImmediate(r)); } })();
        return o;
      });
      if (control) await Promise.all(runs.map((o) => o.waited)); else await sleep(20 + Math.floor(Math.random() * 380));
      await c.close();
      const closedAt = Date.now();
      if (runs.some((o) => !o.settledAt || o.settledAt > closedAt)) early++;
      let refused = false;
      try { const e2 = c.spawnIsolated(['true'], { policy: c.readOnly() }); await e2.wait(); } catch { refused = true; }
      if (!refused) notRefused++;
      const results = await Promise.all(runs.map((o) => o.waited));
      for (let k = 0; k < 400 && runs.some((o) => o.x.st.pending); k++) await sleep(5);
      results.forEach((r, k) => {
        total++;
        const o = runs[k];
        if (r.error) { bad++; console.log('REJECTED', round, k, r.error.code); return; }
        const m = missing(o.ex, o.x.st, r);
        if (m !== 0 || o.x.st.pending) { bad++; console.log('BAD', round, k, JSON.stringify({ m, ok: o.x.st.ok, in: r.receipt.bytes.protocolIn, disc: r.receipt.bytes.protocolInDiscarded, dropped: o.ex.protocolDroppedBytes, pending: o.x.st.pending, reason: r.receipt.stop?.reason })); }
      });
    }
    await sleep(200);
  } finally { console.log('processes left', descendants(h.pid).length); await h.stop(); }
  console.log(`runs ${total}: bad ${bad}; close() resolved before a run settled ${early}; spawn after close not refused ${notRefused}`);
  console.log(bad || early || notRefused ? `FINDING: client.close(): bad ${bad}, early ${early}, not refused ${notRefused}` : 'held');
})();
