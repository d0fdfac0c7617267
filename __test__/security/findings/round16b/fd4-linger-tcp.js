'use strict';
// TCP sockets (made on the sandbox's own lo: mediated mode allows AF_INET) with SO_LINGER 30 s and unsent bytes whose
// peer never reads, passed in fd-4 records (1 per record and 253 per record). A close that honours the linger blocks
// its thread up to 30 s: count cordon-fd-closer threads and their wchan, provider descriptors, wait() settle time.
// Control: the same sockets without SO_LINGER.
const { cordon, tcpServer, policyFor, collect, PY_PRELUDE, nthreads, nfds, closerWchans } = require('./common');
const MODE = process.argv[2] || 'linger';
const K = +(process.env.K || 40);
(async () => {
  const srv = await tcpServer();
  const py = PY_PRELUDE + `
mode = ${JSON.stringify(MODE)}
L = socket.socket(); L.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); L.bind(('127.0.0.1', 9999)); L.listen(1000)
peers = []; clients = []
for i in range(${K}):
    c = socket.socket(); c.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 20)
    c.connect(('127.0.0.1', 9999)); p, _ = L.accept(); p.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096); peers.append(p)
    c.setblocking(False)
    try:
        while True: c.send(b'u' * 65536)
    except BlockingIOError: pass
    if mode != 'control': c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, 30))
    clients.append(c)
t0 = time.time()
for c in clients:
    req(1, raw=b'junk', anc=rights([c.fileno()] * (253 if mode == 'many' else 1))); reply()
    c.close()
print('passed in', round(time.time() - t0, 2), flush=True)
time.sleep(3)
`;
  const th0 = nthreads(), fd0 = nfds();
  const run = cordon.spawnIsolated(['/usr/bin/python3', '-c', py], { policy: policyFor(srv.port), deadlineMs: 60000 });
  const out = collect(run.stderr); run.protocol.resume();
  let peakTh = 0, peakFds = 0, w = [];
  const iv = setInterval(() => { peakTh = Math.max(peakTh, nthreads()); peakFds = Math.max(peakFds, nfds()); const c = closerWchans(); if (c.length > w.length) w = c; }, 50);
  const t = Date.now(); const r = await run.wait(); const settle = Date.now() - t - r.receipt.durationMs;
  await new Promise((res) => setTimeout(res, 500)); clearInterval(iv); srv.close();
  const after = { th: nthreads(), fds: nfds(), closers: closerWchans() };
  console.log(JSON.stringify({ mode: MODE, rc: r.returncode, out: out().trim().split('\n').slice(-2), threads: [th0, peakTh, after.th], fds: [fd0, peakFds, after.fds], closersPeak: w.length, closerSample: w.slice(0, 3), closersAfter: after.closers.length, runMs: r.receipt.durationMs, settleMs: settle, receipts: r.networkReceipts.length }));
  const bad = [];
  if (w.length > 4) bad.push(`${w.length} closer threads at once`);
  if (after.closers.length) bad.push('closer threads outlive the run');
  if (settle > 2000) bad.push('wait() settled late');
  if (/passed in (\d+)/.test(out()) && +RegExp.$1 > 5) bad.push('fd-4 replies delayed by lingering closes');
  console.log(bad.length ? 'FINDING: ' + bad.join('; ') : 'held');
})();
