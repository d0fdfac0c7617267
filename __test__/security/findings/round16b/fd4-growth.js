'use strict';
// 100+ mediated runs doing fd 4 games (allowed stream kept open at exit, fds with records, zero-length record,
// SHUT_WR with a request in flight): provider threads / descriptors / RSS after vs. after the first 10 runs.
// Control: the same number of runs with network mode none.
const { cordon, tcpServer, policyFor, PY_PRELUDE, nthreads, nfds } = require('./common');
const RUNS = +(process.env.RUNS || 100);
(async () => {
  const srv = await tcpServer();
  const py = PY_PRELUDE + `
req(${srv.port}); msg, fds = reply()
s = socket.socket(fileno=fds[0]); s.send(b'x' * 1000)
a, b = socket.socketpair()
b.sendmsg([b'q'], rights([b.fileno(), fds[0], 4]))
req(1, raw=b'junk', anc=rights([a.fileno(), b.fileno(), fds[0], 4] * 20)); reply()
fd4.send(b'')
req(${srv.port})
fd4.shutdown(socket.SHUT_WR)
`;
  let base = null; let settleMax = 0; let recBad = 0;
  for (let i = 0; i < RUNS; i++) {
    const t = Date.now();
    const run = cordon.spawnIsolated(['/usr/bin/python3', '-c', py], { policy: policyFor(srv.port), deadlineMs: 10000 });
    run.stderr.resume(); run.protocol.resume();
    const r = await run.wait();
    settleMax = Math.max(settleMax, Date.now() - t - r.receipt.durationMs);
    if (r.networkReceipts.length !== 4) { recBad++; if (recBad < 3) console.log('receipts', r.networkReceipts.map((x) => x.result)); }
    if (i === 9) { await new Promise((res) => setTimeout(res, 500)); base = { th: nthreads(), fds: nfds(), rss: process.memoryUsage().rss }; }
  }
  await new Promise((res) => setTimeout(res, 1000));
  const end = { th: nthreads(), fds: nfds(), rss: process.memoryUsage().rss };
  srv.close();
  console.log(JSON.stringify({ RUNS, base, end, settleMaxMs: settleMax, runsWithUnexpectedReceiptCount: recBad }));
  const bad = [];
  if (end.th > base.th + 2) bad.push('threads grew');
  if (end.fds > base.fds + 5) bad.push('descriptors grew');
  if (settleMax > 2000) bad.push('wait() settled late');
  console.log(bad.length ? 'FINDING: ' + bad.join('; ') : 'held');
})();
