'use strict';
// A command makes 200 000 entries in one directory (tiny files: the inode
// bound is "proportional" to the byte quota); the host's list() of it.
// Measures the provider's event-loop stall and RSS growth.
const { manager, withTimeout } = require('./session-common');
const { monitorEventLoopDelay } = require('node:perf_hooks');
async function main() {
  const N = Number(process.argv[2] || 200000);
  const m = manager();
  const s = await m.sessions.acquire({ tenant: 't', conversation: 'list' }, { id: 'a' });
  const mk = await s.exec(['/usr/bin/python3', '-c', `import os\nos.mkdir('big')\nn=0\ntry:\n  for i in range(${N}):\n    open('big/%07d' % i + 'x' * 200, 'w').close(); n += 1\nexcept OSError as e:\n  print('stopped:', e)\nprint(n)`], { timeoutMs: 600000 });
  console.log('entries made:', mk.stdout.trim(), mk.stderr.slice(0, 200));
  const h = monitorEventLoopDelay({ resolution: 5 });
  h.enable();
  const rss0 = process.memoryUsage().rss;
  const t0 = Date.now();
  let ticks = 0; let maxGap = 0; let last = Date.now();
  const iv = setInterval(() => { const n = Date.now(); maxGap = Math.max(maxGap, n - last); last = n; ticks++; }, 5);
  const r = await withTimeout(s.list('big'), 120000, 'list');
  clearInterval(iv);
  h.disable();
  console.log(`list: ${r.settled ? (r.value ? r.value.length + ' entries' : r.error.code) : 'no settle'} in ${Date.now() - t0} ms; max event-loop gap ${maxGap} ms; p100 delay ${(h.max / 1e6).toFixed(0)} ms; rss +${((process.memoryUsage().rss - rss0) / 2 ** 20).toFixed(0)} MiB`);
  const t1 = Date.now();
  await s.end();
  console.log('end in', Date.now() - t1, 'ms');
  m.cleanup();
}
main().catch((e) => { console.error(e); process.exit(1); });
