'use strict';
// 500+ runs whose writes meet the closed writer (a kept rest, writes during the teardown and after wait()):
// threads, fds and RSS must level off as in the control (no late writes). node --expose-gc leak-late.js [control] [RUNS]
const { spawn, account, sleep, nthreads, nfds } = require('./common');
const control = process.argv[2] === 'control';
const RUNS = +(process.argv[3] || 500);
(async () => {
  const base = { th: nthreads(), fds: nfds(), rss: process.memoryUsage().rss };
  let bad = 0;
  for (let i = 1; i <= RUNS; i++) {
    const { ex, p, st, w } = spawn(control ? 'import os\nwhile os.read(3,1<<20): pass' : 'import time\ntime.sleep(0.01)');
    p.resume();
    if (control) { w(300000); p.end(); } else { w(1 << 20); for (let k = 0; k < 20; k++) { w(1000); await new Promise((r) => setImmediate(r)); } }
    const r = await ex.wait();
    if (!control) { w(65536); w(3); }
    for (let k = 0; k < 100 && st.pending > 0; k++) await sleep(2);
    const a = account(ex, st, r);
    if (a.missing !== 0) { bad++; console.log('BAD', i, JSON.stringify(a)); }
    if (i % 100 === 0) { global.gc?.(); console.log(`run ${i} threads ${nthreads()} fds ${nfds()} rssMiB ${(process.memoryUsage().rss / 2 ** 20).toFixed(1)}`); }
  }
  await sleep(300); global.gc?.();
  const end = { th: nthreads(), fds: nfds(), rss: process.memoryUsage().rss };
  console.log(JSON.stringify({ control, RUNS, base, end, rssGrowthMiB: +((end.rss - base.rss) / 2 ** 20).toFixed(1), bad }));
  const leak = end.th > base.th + 6 || end.fds > base.fds + 6;
  console.log(bad || leak ? `FINDING: bad ${bad}, threads ${base.th}->${end.th}, fds ${base.fds}->${end.fds}` : 'held');
})();
