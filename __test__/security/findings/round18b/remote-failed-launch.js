'use strict';
// R18b: a remote run that fails after `started` (docs/remote.md: exit {"error", "receipt", "inbound"}; here
// openFiles 1e10 above the host's hard RLIMIT_NOFILE with a permissive ceiling: ERR_CORDON_SPAWN_FAILED). 1 MB of
// protocol writes are made at once. Checked: wait() rejects with the launcher's code, every callback comes, and each
// successful byte is in the error's receipt (details.receipt.bytes, when there is one) or in protocolDroppedBytes,
// exactly once. Usage: node remote-failed-launch.js [reps] [tls|nobody|control]  (control: openFiles 64: the run works)
const { startHost, sleep, PKG, descendants, counter } = require('./common');
const { connectRemote } = require(PKG + '/lib/remote');
const REPS = +(process.argv[2] || 10);
const mode = process.argv[3] || '';
const control = mode === 'control';
(async () => {
  const h = await startHost({ tls: mode === 'tls', asNobody: mode === 'nobody', config: { ceilings: { openFiles: 1e12 } } });
  const c = connectRemote(h.target);
  let bad = 0;
  try {
    for (let i = 0; i < REPS; i++) {
      const ex = c.spawnIsolated(['cat'], { policy: { ...c.readOnly(), resources: { openFiles: control ? 64 : 1e10 } } });
      ex.stderr.resume(); ex.protocol.resume();
      const { st, w, p } = counter(ex);
      for (let k = 0; k < 10; k++) w(100000);
      if (control) p.end();
      const r = await ex.wait().then((x) => x, (e) => ({ e }));
      for (let k = 0; k < 200 && st.pending; k++) await sleep(5);
      const b = r.e ? (r.e.details?.receipt?.bytes ?? { protocolIn: 0, protocolInDiscarded: 0 }) : r.receipt.bytes;
      const m = st.ok - b.protocolIn - b.protocolInDiscarded - ex.protocolDroppedBytes;
      const wrong = (control ? !!r.e : r.e?.code !== 'ERR_CORDON_SPAWN_FAILED') || m !== 0 || st.pending;
      if (wrong) bad++;
      console.log(wrong ? 'BAD' : 'ok ', JSON.stringify({ i, result: r.e ? r.e.code : 'resolved', ok: st.ok, err: st.err, pending: st.pending, in: b.protocolIn, disc: b.protocolInDiscarded, dropped: ex.protocolDroppedBytes, missing: m }));
    }
  } finally { await sleep(200); console.log('processes left', descendants(h.pid).length); await c.close(); await h.stop(); }
  console.log(bad ? `FINDING: ${bad}/${REPS} failed launches broke the accounting` : 'held');
})();
