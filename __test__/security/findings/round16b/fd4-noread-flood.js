'use strict';
// fd 4 games: records sent without ever reading replies (tiny SO_RCVBUF), zero-length records (zerobig: with SO_SNDBUF
// raised to the maximum and replies never read), SHUT_RD. Measures provider CPU ticks over the run, threads, descriptors, wait() settle time,
// and whether receipts account for every record the engine took (<= records sent; quota 256).
// Control: the program sleeps 3 s and sends nothing.
const { cordon, tcpServer, policyFor, collect, PY_PRELUDE, nthreads, nfds, cpuTicks } = require('./common');
const MODE = process.argv[2] || 'noread';
(async () => {
  const srv = await tcpServer();
  const py = PY_PRELUDE + `
mode = ${JSON.stringify(MODE)}
sent = 0
fd4.setblocking(False)
if mode == 'noread':
    fd4.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1)
if mode == 'zerobig':
    fd4.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 30)
    fd4.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1)
    print('sndbuf', fd4.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF), flush=True)
if mode == 'shutrd':
    fd4.shutdown(socket.SHUT_RD)
t = time.time()
while mode != 'control' and time.time() - t < 3:
    try:
        if mode in ('zero', 'zerobig'): fd4.send(b'')
        else: req(${srv.port})
        sent += 1
    except BlockingIOError: time.sleep(0.001)
    except OSError as e: print('err', e.errno); break
if mode == 'shutwr':
    pass
if mode == 'control': time.sleep(3)
print('sent', sent, flush=True)
if mode == 'shutwr_after':
    fd4.shutdown(socket.SHUT_WR)
time.sleep(1)
`;
  const t0 = { th: nthreads(), fds: nfds(), cpu: cpuTicks() };
  const run = cordon.spawnIsolated(['/usr/bin/python3', '-c', py], { policy: policyFor(srv.port), deadlineMs: 20000 });
  const out = collect(run.stderr); run.protocol.resume();
  let peakTh = 0, peakFds = 0;
  const iv = setInterval(() => { peakTh = Math.max(peakTh, nthreads()); peakFds = Math.max(peakFds, nfds()); }, 50);
  const t = Date.now();
  const r = await run.wait();
  const total = Date.now() - t;
  clearInterval(iv); srv.close();
  const recs = r.networkReceipts;
  const res = recs.map((x) => x.result).reduce((m, k) => (m[k] = (m[k] || 0) + 1, m), {});
  const sent = +((out().match(/sent (\d+)/) || [])[1] || 0);
  const cpu = cpuTicks() - t0.cpu;
  console.log(JSON.stringify({ mode: MODE, rc: r.returncode, out: out().trim().split('\n').slice(-2), sent, receipts: recs.length, res, threads: [t0.th, peakTh, nthreads()], fds: [t0.fds, peakFds, nfds()], cpuTicks: cpu, runMs: r.receipt.durationMs, waitMs: total }));
  const bad = [];
  if (cpu > 150) bad.push(`provider CPU ${cpu} ticks`);
  if (total - r.receipt.durationMs > 2000) bad.push('wait() settled late');
  if (recs.length > Math.min(sent, 257) && MODE !== 'control') bad.push('more receipts than records (256 + the one that found the quota spent)');
  console.log(bad.length ? 'FINDING: ' + bad.join('; ') : 'held');
})();
