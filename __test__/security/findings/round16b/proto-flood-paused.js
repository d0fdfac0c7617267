'use strict';
// The program floods fd 3 (and a forked child keeps flooding through its copy of fd 3). The provider keeps
// `protocol` paused for 3 s (RSS must stay bounded), then reads for 4 s while measuring event-loop delay,
// then stop(). Control: same program, flowing from the start, no child.
const { monitorEventLoopDelay } = require('perf_hooks');
const { cordon, cpuTicks } = require('./common');
const MODE = process.argv[2] || 'paused';
const py = `
import os, sys
if sys.argv[1] == 'paused' and os.fork() == 0:
    pass
b = b'z' * 65536
while True: os.write(3, b)
`;
(async () => {
  const rss0 = process.memoryUsage().rss;
  const run = cordon.spawnIsolated(['/usr/bin/python3', '-c', py, MODE], { policy: cordon.readOnly(), deadlineMs: 20000 });
  run.stderr.resume();
  let got = 0; let peakRss = 0;
  const mem = setInterval(() => { peakRss = Math.max(peakRss, process.memoryUsage().rss); }, 50);
  const onData = (d) => { got += d.length; };
  if (MODE === 'paused') { run.protocol.pause(); await new Promise((r) => setTimeout(r, 3000)); }
  const rssPaused = process.memoryUsage().rss;
  const h = monitorEventLoopDelay({ resolution: 10 }); h.enable();
  const c0 = cpuTicks();
  run.protocol.on('data', onData); run.protocol.resume();
  await new Promise((r) => setTimeout(r, 4000));
  h.disable();
  const cpu = cpuTicks() - c0;
  const t = Date.now(); await run.stop(); const r = await run.wait(); clearInterval(mem);
  const res = { mode: MODE, gotMiB: +(got / 1048576).toFixed(0), protocolOutMiB: +(r.receipt.bytes.protocolOut / 1048576).toFixed(0), rssGrowthPausedMiB: +((rssPaused - rss0) / 1048576).toFixed(1),
    peakRssGrowthMiB: +((peakRss - rss0) / 1048576).toFixed(1), loopDelayP99ms: +(h.percentile(99) / 1e6).toFixed(1), loopDelayMaxMs: +(h.max / 1e6).toFixed(1), cpuTicks4s: cpu, stopMs: Date.now() - t };
  console.log(JSON.stringify(res));
  const bad = [];
  if (res.rssGrowthPausedMiB > 64) bad.push('memory grew while paused');
  if (res.loopDelayMaxMs > 200) bad.push('event-loop delay');
  if (r.receipt.bytes.protocolOut < got) bad.push('protocolOut < bytes read');
  console.log(bad.length ? 'FINDING: ' + bad.join('; ') : 'held');
})();
