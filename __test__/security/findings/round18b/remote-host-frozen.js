'use strict';
// R18b: docs/remote.md "No call can hang": wait() rejects ERR_CORDON_REMOTE_TIMEOUT "when the host sends nothing at
// all for slackMs" (the client pings every slackMs / 2). The host is SIGSTOPped mid-run while the client writes
// (slackMs 2000). Checked: wait() rejects within slackMs + 1.5 s, every write callback comes; after SIGCONT the host
// sees the client gone and stops the sandbox (kept receipt: "disconnect"), nothing left. Also `stop()` on the frozen
// host: bounded by graceMs + forceMs + slackMs. Usage: node remote-host-frozen.js [rounds] [tls|nobody|control]
// (control: no SIGSTOP; the run ends by itself).
const { startHost, sleep, PKG, descendants, counter } = require('./common');
const { connectRemote } = require(PKG + '/lib/remote');
const ROUNDS = +(process.argv[2] || 3);
const mode = process.argv[3] || '';
const control = mode === 'control';
const SLACK = 2000;
(async () => {
  let bad = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const h = await startHost({ tls: mode === 'tls', asNobody: mode === 'nobody' });
    const c = connectRemote(h.target, { slackMs: SLACK });
    const id = `r18b-frozen-${process.pid}-${round}`;
    try {
      const ex = c.spawnIsolated(['py', '-c', control ? 'import os\nwhile os.read(3,65536): pass' : 'import os,time\nwhile True:\n  if not os.read(3,4096): break\n  time.sleep(0.003)'], { policy: c.readOnly(), invocationId: id, deadlineMs: 30000 });
      ex.stderr.resume(); ex.protocol.resume();
      const x = counter(ex);
      let settled = false;
      const waited = ex.wait().then((r) => { settled = true; return r; }, (e) => { settled = true; return { error: e }; });
      (async () => { let n = 0; while (!settled && n++ < 200) { x.w(65536); await sleep(5); } if (control) x.p.end(); })();
      await sleep(300);
      const t0 = Date.now();
      if (!control) { h.child.kill('SIGSTOP'); if (round % 2) ex.stop({ graceMs: 100, forceMs: 100 }).catch(() => {}); }
      const r = await Promise.race([waited, sleep(20000).then(() => ({ timeout: true }))]);
      const ms = Date.now() - t0;
      for (let k = 0; k < 200 && x.st.pending; k++) await sleep(5);
      if (!control) h.child.kill('SIGCONT');
      await sleep(1500);
      const left = descendants(h.pid).length;
      const rs = await c.receipts(id).catch(() => []);
      const reason = rs[0]?.stop?.reason ?? null;
      const limit = SLACK + 1500 + (round % 2 ? 200 : 0);
      const okRun = control ? !r.error && !r.timeout : r.error?.code === 'ERR_CORDON_REMOTE_TIMEOUT' && ms <= limit && !x.st.pending && !left && (reason === 'disconnect' || (round % 2 && reason === 'stop')); // a stop frame read after SIGCONT wins (first cause)
      if (!okRun) bad++;
      console.log(okRun ? 'ok ' : 'BAD', JSON.stringify({ round, stopCalled: !!(round % 2) && !control, ms, result: r.timeout ? 'no settle in 20 s' : r.error ? r.error.code : 'resolved', pending: x.st.pending, okBytes: x.st.ok, dropped: ex.protocolDroppedBytes, left, keptReason: reason }));
    } finally { h.child.kill('SIGCONT'); await c.close().catch(() => {}); await h.stop(); }
  }
  console.log(bad ? `FINDING: ${bad}/${ROUNDS} rounds: a frozen host was not bounded as documented` : 'held');
})();
