'use strict';
// 1000 short runs exercising the protocol stream (echo of 64 KiB + write after exit + destroy on half of them):
// provider threads, descriptors, RSS (after gc) vs. after run 50. Run with --expose-gc.
const { cordon, nthreads, nfds } = require('./common');
const RUNS = +(process.env.RUNS || 1000);
const prog = 'import os\nb = os.read(3, 65536)\nos.write(3, b)';
(async () => {
  let base = null; let bad = 0;
  for (let i = 0; i < RUNS; i++) {
    const ex = cordon.spawnIsolated(['/usr/bin/python3', '-c', prog], { policy: cordon.readOnly(), deadlineMs: 10000 });
    ex.stderr.resume(); ex.protocol.on('error', () => {});
    let got = 0; ex.protocol.on('data', (d) => { got += d.length; if (i % 2) ex.protocol.destroy(); });
    ex.protocol.write(Buffer.alloc(1000, 1));
    const r = await ex.wait();
    if (r.returncode !== 0 && !(i % 2)) bad++;
    if (i % 250 === 249 && base) { global.gc && global.gc(); console.log('run', i + 1, 'rssMiB', +(process.memoryUsage().rss / 1048576).toFixed(1), 'heapMiB', +(process.memoryUsage().heapUsed / 1048576).toFixed(1)); }
    if (i === 49) { global.gc && global.gc(); await new Promise((res) => setTimeout(res, 300)); base = { th: nthreads(), fds: nfds(), rss: process.memoryUsage().rss }; }
  }
  global.gc && global.gc(); await new Promise((res) => setTimeout(res, 1000)); global.gc && global.gc();
  const end = { th: nthreads(), fds: nfds(), rss: process.memoryUsage().rss };
  console.log(JSON.stringify({ RUNS, base, end, rssGrowthMiB: +((end.rss - base.rss) / 1048576).toFixed(1), badRuns: bad }));
  const f = [];
  if (end.th > base.th + 2) f.push('threads grew'); if (end.fds > base.fds + 5) f.push('descriptors grew'); if (end.rss - base.rss > 48 * 1048576) f.push('RSS grew');
  console.log(f.length ? 'FINDING: ' + f.join('; ') : 'held');
})();
