'use strict';
// R18b: docs/remote.md: (a) "The sandbox's session slot is released before `exit` is written, so a client that starts
// its next run on `exit` is never refused for the previous one" (maxSessions 1, each run started in the previous
// wait()'s continuation); (b) admission: past maxSessions a run is refused ERR_CORDON_HOST_BUSY with retryAfterMs,
// never queued, and the admitted runs keep the byte invariant (CONC concurrent runs writing to a slow reader);
// (c) leaks: the host's threads, fds and RSS over RUNS runs with protocol writes.
// Usage: node remote-slots-leaks.js [RUNS] [tls|nobody|control]   (control: maxSessions 64, so (a) and (b) refuse nothing)
const { startHost, sleep, PKG, descendants, nthreads, nfds, rssKiB, counter, missing } = require('./common');
const { connectRemote } = require(PKG + '/lib/remote');
const RUNS = +(process.argv[2] || 200);
const mode = process.argv[3] || '';
const control = mode === 'control';
const CONC = 10;
(async () => {
  const h = await startHost({ tls: mode === 'tls', asNobody: mode === 'nobody', config: { admission: { maxSessions: control ? 64 : 1, retryAfterMs: 250 } } });
  const c = connectRemote(h.target);
  let refusedSeq = 0, bad = 0, other = 0;
  const sample = () => ({ thr: nthreads(h.pid), fds: nfds(h.pid), rss: rssKiB(h.pid) });
  let s0, s1;
  try {
    // (a) + (c): RUNS sequential runs, each started on the previous exit
    for (let i = 0; i < RUNS; i++) {
      if (i === 20) { await sleep(300); s0 = sample(); }
      const ex = c.spawnIsolated(['py', '-c', i % 2 ? 'import os\nwhile os.read(3,65536): pass' : 'import time\ntime.sleep(0.01)'], { policy: c.readOnly() });
      ex.stderr.resume(); ex.protocol.resume();
      const { st, w, p } = counter(ex);
      w(100000); w(3); w(70000); p.end();
      let r;
      try { r = await ex.wait(); } catch (e) { if (e.code === 'ERR_CORDON_HOST_BUSY') refusedSeq++; else { other++; console.log('error', i, e.code, e.message); } continue; }
      for (let k = 0; k < 100 && st.pending; k++) await sleep(2);
      if (missing(ex, st, r) !== 0) { bad++; console.log('BAD seq', i, st.ok, r.receipt.bytes, ex.protocolDroppedBytes); }
    }
    await sleep(500);
    s1 = sample();
    // (b): CONC at once
    const runs = [];
    for (let k = 0; k < CONC; k++) {
      const ex = c.spawnIsolated(['py', '-c', 'import os,time\nwhile True:\n  if not os.read(3,8192): break\n  time.sleep(0.001)'], { policy: c.readOnly(), deadlineMs: 3000 });
      ex.stderr.resume(); ex.protocol.resume();
      const x = counter(ex);
      for (let j = 0; j < 20; j++) x.w(65536 + j);
      x.p.end();
      runs.push(ex.wait().then((r) => ({ r, ex, x }), (e) => ({ e, ex, x })));
    }
    const res = await Promise.all(runs);
    let admitted = 0, busy = 0, noRetry = 0;
    for (const { r, e, ex, x } of res) {
      for (let k = 0; k < 100 && x.st.pending; k++) await sleep(2);
      if (e) { if (e.code === 'ERR_CORDON_HOST_BUSY') { busy++; if (!(e.retryAfterMs > 0)) noRetry++; } else { other++; console.log('conc error', e.code, e.message); } continue; }
      admitted++;
      if (missing(ex, x.st, r) !== 0) { bad++; console.log('BAD conc', x.st.ok, r.receipt.bytes, ex.protocolDroppedBytes); }
    }
    console.log(`concurrent ${CONC}: admitted ${admitted}, refused busy ${busy} (without retryAfterMs ${noRetry})`);
    if (!control && admitted !== 1) other++;
    if (noRetry) other++;
  } finally {
    await sleep(300);
    console.log(`sequential ${RUNS} runs started on the previous exit: refused ${refusedSeq}; host after 20 runs ${JSON.stringify(s0)} after ${RUNS} ${JSON.stringify(s1)}; processes left ${descendants(h.pid).length}`);
    await c.close(); await h.stop();
  }
  const leak = s0 && s1 && (s1.fds > s0.fds + 2 || s1.thr > s0.thr + 2 || s1.rss > s0.rss + 16384);
  console.log(refusedSeq || bad || other || leak ? `FINDING: refused on exit ${refusedSeq}, invariant broken ${bad}, other ${other}, leak ${!!leak}` : 'held');
})();
