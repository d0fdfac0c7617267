'use strict';
// fd 4 records carrying Unix sockets whose queue the program keeps feeding (and self-nesting sockets):
// do closer threads / provider descriptors / CPU / wait() settle time grow? Control: records without descriptors.
const { cordon, tcpServer, policyFor, collect, PY_PRELUDE, nthreads, nfds, cpuTicks, closerWchans } = require('./common');
const MODE = process.argv[2] || 'feed';
const N = +(process.env.N || 200);
const py = (mode) => PY_PRELUDE + `
import fcntl
mode = ${JSON.stringify(mode)}
keep = []
import threading
stop = [False]
def feeder():
    while not stop[0]:
        for b in list(keep):
            try: b.send(b'y' * 65536)
            except OSError: pass
if mode in ('feedthread', 'nestfeed'):
    threading.Thread(target=feeder, daemon=True).start()
for i in range(${N}):
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    if mode in ('nest', 'nestfeed'):
        # a's queue holds copies of a itself, many deep
        for k in range(50):
            try: b.sendmsg([b'x'], rights([a.fileno()]))
            except OSError as e: break
    b.setblocking(False)
    keep.append(b)
    if mode in ('feedthread', 'nestfeed'): time.sleep(0.01)
    anc = None if mode == 'control' else rights([a.fileno()] * (253 if mode == 'many' else 1))
    try: req(1, raw=b'junk', anc=anc)
    except OSError as e: print('send', i, e); break
    a.close()
    try: reply()
    except OSError as e: print('reply', i, e); break
print('sent', len(keep), flush=True)
t = time.time()
while time.time() - t < 4:
    for b in keep:
        try: b.send(b'y' * 65536)
        except OSError: pass
print('done', flush=True)
`;
(async () => {
  const srv = await tcpServer();
  const t0 = { th: nthreads(), fds: nfds(), cpu: cpuTicks() };
  const run = cordon.spawnIsolated(['/usr/bin/python3', '-c', py(MODE)], { policy: policyFor(srv.port), deadlineMs: 20000 });
  const out = collect(run.stderr); run.protocol.resume();
  let peakTh = 0, peakFds = 0, w = [];
  const iv = setInterval(() => { peakTh = Math.max(peakTh, nthreads()); peakFds = Math.max(peakFds, nfds()); const c = closerWchans(); if (c.length > w.length) w = c; }, 50);
  const r = await run.wait();
  const tEnd = Date.now();
  await new Promise((res) => setTimeout(res, 1000));
  clearInterval(iv); srv.close();
  const cpu = cpuTicks() - t0.cpu;
  const recs = r.networkReceipts;
  const summary = { mode: MODE, rc: r.returncode, out: out().trim().split('\n').slice(-3), receipts: recs.length, results: [...new Set(recs.map((x) => x.result))],
    threads: [t0.th, peakTh, nthreads()], fds: [t0.fds, peakFds, nfds()], cpuTicks: cpu, closerThreadsSeen: w.length, closerSample: w.slice(0, 3), durMs: r.receipt.durationMs };
  console.log(JSON.stringify(summary));
  const bad = [];
  if (summary.threads[2] > t0.th + 4) bad.push('provider threads outlive the run');
  if (summary.fds[2] > t0.fds + 4) bad.push('provider descriptors outlive the run');
  if (w.length > 4) bad.push(`${w.length} closer threads at once`);
  if (cpu > 150) bad.push(`provider CPU ${cpu} ticks`);
  if (recs.length !== Math.min(N, 257) && !/send|reply/.test(out())) bad.push('receipts do not match records');
  console.log(bad.length ? 'FINDING: ' + bad.join('; ') : 'held');
})();
