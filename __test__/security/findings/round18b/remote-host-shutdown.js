'use strict';
// R18b: docs/remote.md § Process, signals: on SIGTERM the host stops every running sandbox through its ladder
// (stop.reason "signal"), waits for the sessions, gives open connections 1 s to end (an `exit` being written), exits 0.
// Here 4 concurrent runs write fire-and-forget to programs that read slowly / not at all / to EOF, and the host gets
// SIGTERM at 50-400 ms. Checked per run: wait() resolves with stop.reason "signal" (exit written) and the byte
// invariant holds (ok = in + discarded + protocolDroppedBytes), every callback came, host exit 0, nothing left.
// Usage: node remote-host-shutdown.js [rounds] [control|tls|nobody]   (control: no SIGTERM until the runs ended)
const { startHost, counter, missing, sleep, PKG, descendants } = require('./common');
const { connectRemote } = require(PKG + '/lib/remote');
const ROUNDS = +(process.argv[2] || 10);
const mode = process.argv[3] || '';
const control = mode === 'control';
const progs = [
  'import os,time\nwhile True:\n  if not os.read(3,4096): break\n  time.sleep(0.002)',
  'import time\ntime.sleep(2)',
  'import os\nwhile os.read(3,1<<20): pass\nimport time\ntime.sleep(2)',
  'import os,time\ntime.sleep(0.1)\nos.close(3)\ntime.sleep(2)',
];
(async () => {
  let bad = 0, total = 0, notSignal = 0, rejected = 0, hostBad = 0, left = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const h = await startHost({ tls: mode === 'tls', asNobody: mode === 'nobody' });
    const c = connectRemote(h.target);
    const runs = progs.map((prog) => {
      const ex = c.spawnIsolated(['py', '-c', prog], { policy: c.readOnly(), deadlineMs: control ? 1500 : 20000 });
      ex.stderr.resume(); ex.protocol.resume();
      const { st, w } = counter(ex);
      let settled = false;
      const waited = ex.wait().then((r) => { settled = true; return r; }, (e) => { settled = true; return { error: e }; });
      (async () => { let n = 0; while (!settled && n++ < 400) { w([1, 1000, 65536, 300000][n % 4]); await new Promise((r) => setImmediate(r)); } })();
      return { ex, st, w, waited };
    });
    const at = 50 + Math.floor(Math.random() * 350);
    if (!control) { await sleep(at); h.child.kill('SIGTERM'); }
    const results = await Promise.all(runs.map((x) => x.waited));
    for (let k = 0; k < 400 && runs.some((x) => x.st.pending > 0); k++) await sleep(5);
    const code = await new Promise((r) => { if (control) { h.child.once('exit', (c2) => r(c2)); h.child.kill('SIGTERM'); } else if (h.child.exitCode !== null) r(h.child.exitCode); else h.child.once('exit', (c2) => r(c2)); });
    if (code !== 0) hostBad++;
    left += descendants(h.pid).length;
    results.forEach((r, k) => {
      total++;
      const x = runs[k];
      if (r.error) { rejected++; bad++; console.log('REJECTED', round, k, r.error.code, 'ok', x.st.ok, 'pending', x.st.pending, 'dropped', x.ex.protocolDroppedBytes); return; }
      const m = missing(x.ex, x.st, r);
      const reason = r.receipt.stop?.reason ?? null;
      if (!control && reason !== 'signal' && reason !== null) notSignal++;
      if (m !== 0 || x.st.pending) { bad++; console.log('BAD', round, k, JSON.stringify({ at, m, ok: x.st.ok, in: r.receipt.bytes.protocolIn, disc: r.receipt.bytes.protocolInDiscarded, dropped: x.ex.protocolDroppedBytes, pending: x.st.pending, reason })); }
      else if (process.env.V) console.log('ok', round, k, JSON.stringify({ at, ok: x.st.ok, in: r.receipt.bytes.protocolIn, disc: r.receipt.bytes.protocolInDiscarded, dropped: x.ex.protocolDroppedBytes, reason }));
    });
    await c.close(); await h.stop();
  }
  console.log(`runs ${total}, bad ${bad} (rejected ${rejected}), stop reason other than signal ${notSignal}, host exit != 0: ${hostBad}, processes left ${left}`);
  console.log(bad || hostBad || left ? `FINDING: host SIGTERM mid-run: ${bad}/${total} runs broke the invariant or were rejected; host exit!=0 ${hostBad}; left ${left}` : 'held');
})();
