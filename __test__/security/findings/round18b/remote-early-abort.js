'use strict';
// R18b: docs/remote.md: "`signal` and `deadlineMs` stop the run" and "No call can hang". An AbortSignal (or stop())
// fired early in a remote run (0-60 ms after spawnIsolated, around `started`) must stop the run: wait() settles
// within a few seconds, not at the host's deadline ceiling. The program reads fd 3 to EOF (never ends on its own);
// the client makes a few small writes. Usage: node remote-early-abort.js [reps] [abort|stop|control] [tls|nobody]
// (control: protocol.end() instead: the program ends on EOF). UPLOAD=1: see below.
const { startHost, sleep, PKG, descendants, counter, missing } = require('./common');
const { connectRemote } = require(PKG + '/lib/remote');
const REPS = +(process.argv[2] || 30);
const how = process.argv[3] || 'abort';
const mode = process.argv[4] || '';
const LIMIT = 6000;
const UPLOAD = !!process.env.UPLOAD; // UPLOAD=1: a 6 x 700 kB upload first, and 2.4 MB of writes queued behind it
(async () => {
  const h = await startHost({ tls: mode === 'tls', asNobody: mode === 'nobody' });
  const c = connectRemote(h.target);
  let hung = 0, bad = 0;
  const hist = {};
  try {
    for (let i = 0; i < REPS; i++) {
      const at = [0, 1, 2, 5, 10, 20, 40, 60][i % 8];
      const ac = new AbortController();
      const ws = UPLOAD ? { workspace: { files: Object.fromEntries(Array.from({ length: 6 }, (_, k) => [`big${k}.bin`, Buffer.alloc(700000, 66)])) } } : {};
      const ex = c.spawnIsolated(['sh', '-c', 'exec cat <&3 >/dev/null'], { policy: c.readOnly(), signal: ac.signal, ...ws });
      ex.stderr.resume(); ex.protocol.resume();
      const { st, w } = counter(ex);
      const t0 = Date.now();
      let settled = false;
      const waited = ex.wait().then((r) => { settled = true; return r; }, (e) => { settled = true; return { error: e }; });
      w(10); w(1000);
      if (UPLOAD) for (let k = 0; k < 8; k++) w(300000); // queued while the 4.2 MB upload is still going
      const fire = () => { if (how === 'abort') ac.abort(); else if (how === 'stop') ex.stop().catch(() => {}); else ex.protocol.end(); };
      if (at === 0) fire(); else setTimeout(fire, at);
      const timer = setTimeout(() => { if (!settled) { hung++; console.log('HUNG', JSON.stringify({ i, at, pid: ex.pid, ok: st.ok, err: st.err, pending: st.pending })); ex.stop({ graceMs: 0 }).catch(() => {}); } }, LIMIT);
      const r = await waited;
      clearTimeout(timer);
      const ms = Date.now() - t0;
      for (let k = 0; k < 100 && st.pending; k++) await sleep(5);
      const m = r.error ? null : missing(ex, st, r);
      if (m) bad++;
      const key = `${at}ms:${r.error ? r.error.code : r.receipt.stop?.reason ?? 'none'}`;
      hist[key] = (hist[key] || 0) + 1;
      if (process.env.V || ms > LIMIT) console.log(JSON.stringify({ i, at, ms, err: r.error?.code, reason: r.receipt?.stop?.reason, missing: m, pending: st.pending }));
    }
  } finally {
    await sleep(200);
    console.log('processes left', descendants(h.pid).length);
    await c.close(); await h.stop();
  }
  console.log(JSON.stringify(hist));
  console.log(hung || bad ? `FINDING: ${hung}/${REPS} remote runs did not settle within ${LIMIT} ms after an early ${how}; ${bad} broke the byte invariant` : 'held');
})();
