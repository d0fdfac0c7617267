'use strict';
// R18b: host leaks under concurrency (docs/remote.md: many sessions; § Flow control "constant amount of memory").
// ROUNDS rounds of CONC concurrent runs (writes to a reader, 10 ms programs); the host's threads, fds and RSS after
// each round, then after 15 s idle. FINDING when threads or fds grow with the rounds (not bounded) or stay high idle.
// Usage: node host-threads.js [rounds] [conc] [tls|nobody|control]  (control: conc 1)
const { startHost, counter, missing, sleep, PKG, descendants, nthreads, nfds, rssKiB } = require('./common');
const { connectRemote } = require(PKG + '/lib/remote');
const ROUNDS = +(process.argv[2] || 20);
const mode = process.argv[4] || '';
const CONC = mode === 'control' ? 1 : +(process.argv[3] || 8);
(async () => {
  const h = await startHost({ tls: mode === 'tls', asNobody: mode === 'nobody' });
  const c = connectRemote(h.target);
  const samples = [];
  let bad = 0;
  try {
    for (let r = 0; r < ROUNDS; r++) {
      await Promise.all(Array.from({ length: CONC }, async () => {
        const ex = c.spawnIsolated(['py', '-c', 'import os\nwhile os.read(3,65536): pass'], { policy: c.readOnly() });
        ex.stderr.resume(); ex.protocol.resume();
        const x = counter(ex); x.w(100000); x.w(3); x.p.end();
        const res = await ex.wait();
        for (let k = 0; k < 100 && x.st.pending; k++) await sleep(2);
        if (missing(ex, x.st, res) !== 0) bad++;
      }));
      samples.push({ thr: nthreads(h.pid), fds: nfds(h.pid), rss: rssKiB(h.pid) });
    }
    await sleep(15000);
    const idle = { thr: nthreads(h.pid), fds: nfds(h.pid), rss: rssKiB(h.pid) };
    const first = samples[Math.min(2, samples.length - 1)], last = samples[samples.length - 1];
    console.log(`after round 3 ${JSON.stringify(first)}, after round ${ROUNDS} ${JSON.stringify(last)}, max threads ${Math.max(...samples.map((s) => s.thr))}, after 15 s idle ${JSON.stringify(idle)}; processes left ${descendants(h.pid).length}; invariant bad ${bad}`);
    if (last.fds > first.fds + 4 || idle.thr > first.thr + 4 || last.rss > first.rss + 32768) bad++;
  } finally { await c.close(); await h.stop(); }
  console.log(bad ? `FINDING: host grew over ${ROUNDS} rounds of ${CONC} concurrent runs` : 'held');
})();
