'use strict';
// A handed-out stream (whose relay an endless upstream keeps filling) passed back over fd 4 in a record:
// the engine's closer "receives a passed Unix socket's queue to its end" — does it spin, pile up threads or CPU?
// Control: the same streams, kept and not passed back (program just sleeps).
const net = require('net');
const { cordon, policyFor, collect, PY_PRELUDE, nthreads, nfds, cpuTicks, closerWchans } = require('./common');
const MODE = process.argv[2] || 'pass';
const K = +(process.env.K || 20);
(async () => {
  const conns = new Set();
  const chunk = Buffer.alloc(65536, 120);
  const s = net.createServer((c) => { conns.add(c); c.on('error', () => {}); c.on('close', () => conns.delete(c));
    const pump = () => { while (c.writable && c.write(chunk)); }; c.on('drain', pump); pump(); });
  await new Promise((r) => s.listen(0, '127.0.0.1', r));
  const port = s.address().port;
  const py = PY_PRELUDE + `
mode = ${JSON.stringify(MODE)}
streams = []
for i in range(${K}):
    req(${port}); msg, fds = reply()
    if not fds: print('no fd', msg.hex()); break
    streams.append(fds[0])
print('got', len(streams), flush=True)
if mode == 'pass':
    for fd in streams:
        req(1, raw=b'junk', anc=rights([fd] * 253)); reply()
if mode == 'passclose':
    for fd in streams:
        req(1, raw=b'junk', anc=rights([fd])); reply(); os.close(fd)
print('passed', flush=True)
time.sleep(5)
print('done', flush=True)
`;
  const t0 = { th: nthreads(), fds: nfds(), cpu: cpuTicks() };
  const run = cordon.spawnIsolated(['/usr/bin/python3', '-c', py], { policy: policyFor(port), deadlineMs: 30000 });
  const out = collect(run.stderr); run.protocol.resume();
  let peakTh = 0, peakFds = 0, w = [];
  const iv = setInterval(() => { peakTh = Math.max(peakTh, nthreads()); peakFds = Math.max(peakFds, nfds()); const c = closerWchans(); if (c.length > w.length) w = c; }, 50);
  const tStart = Date.now();
  const r = await run.wait();
  const settle = Date.now() - tStart - r.receipt.durationMs;
  await new Promise((res) => setTimeout(res, 500));
  clearInterval(iv); for (const c of conns) c.destroy(); s.close();
  const recs = r.networkReceipts;
  const bytesIn = recs.reduce((a, x) => a + x.bytesToClient, 0);
  console.log(JSON.stringify({ mode: MODE, rc: r.returncode, out: out().trim().split('\n').slice(-3), receipts: recs.length,
    results: recs.map((x) => x.result + '/' + x.end).reduce((m, k) => (m[k] = (m[k] || 0) + 1, m), {}), bytesToClientMiB: (bytesIn / 1048576).toFixed(1),
    threads: [t0.th, peakTh, nthreads()], fds: [t0.fds, peakFds, nfds()], cpuTicks: cpuTicks() - t0.cpu, closers: w.length, closerSample: w.slice(0, 3), durMs: r.receipt.durationMs, settleMs: settle }));
  const bad = [];
  if (bytesIn > 64 * 1048576) bad.push('the closer kept draining a passed-back stream (upstream bytes flowed on)');
  if (w.length > 4) bad.push(`${w.length} closer threads at once`);
  if (settle > 2000) bad.push('wait() settled late');
  if (nthreads() > t0.th + 4 || nfds() > t0.fds + 4) bad.push('threads/descriptors outlive the run');
  console.log(bad.length ? 'FINDING: ' + bad.join('; ') : 'held');
})();
