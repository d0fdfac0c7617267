'use strict';
// R15w-4 probe: one fd-4 message makes the closer thread hold the provider's
// descriptor table full for the linger time. settle_and_close accepts a
// passed listener's whole backlog into its work list before emptying any of
// it (crates/passed-fds/src/drain.rs accept_all; settle.rs:50-66, depth-first
// along the last connection): a chain of R15_DEPTH listeners, each with a
// full backlog (4097 connections whose clients are gone: free for the
// sandbox), the last connection of each carrying the next listener, puts
// 4096 x depth descriptors in the provider's table at once; the chain ends
// in an R15w-1 socket, whose purge then holds the thread — and every
// descriptor in its work list — in tcp_close. Measures the provider's open
// descriptors and whether a plain run can start meanwhile.
// Control: the same chain ending in a plain socket (nothing to wait for).
const { py, cordon, sleep, within, fds, stuck, endIfFd4Refuses } = require('./h');
const policy = { ...cordon.readOnly(), network: { mode: 'mediated', allow: ['example.com:443'] } };
const relay = process.env.R14_RELAY ? { networkRelayPath: process.env.R14_RELAY } : {};
const LINGER = Number(process.env.R15_LINGER || 30);
const DEPTH = Number(process.env.R15_DEPTH || 6);
const CODE = String.raw`
import socket, struct, sys, array, os, time
trap, linger, depth = sys.argv[1] == 'trap', int(sys.argv[2]), int(sys.argv[3])
c4 = socket.socket(fileno=4)
def send(s, data, fds): s.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', fds))] if fds else [])
V, W = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
if trap:
    L = socket.socket(); L.bind(('127.0.0.1', 0)); L.listen(1)
    X = socket.socket(); X.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    X.connect(L.getsockname()); P, _ = L.accept(); L.close()
    P.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    X.setblocking(False)
    try:
        while True: X.send(b'x' * 65536)
    except BlockingIOError: pass
    X.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, linger))
    Z = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); Z.bind(b'\0z')
    W.send(b''); send(W, b'x', [X.fileno(), P.fileno()]); X.close(); P.close()
    V.send(b'y'); W.connect(b'\0z')
W.close()
nxt, total = V, 0
for i in range(depth, 0, -1):
    Li = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); Li.bind(b'\0l%d' % i); Li.listen(65535)
    prev = None
    while True:
        c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); c.setblocking(False)
        try: c.connect(b'\0l%d' % i)
        except OSError: c.close(); break
        total += 1
        if prev: prev.close()
        prev = c
    send(prev, b'n', [nxt.fileno()]); prev.close(); nxt.close()
    nxt = Li
host = b'example.com'
req = struct.pack('>IBBHH', 0x4d454351, 1, 1, 443, len(host)) + host
send(c4, req, [nxt.fileno()]); nxt.close()
print('backlog connections', total, file=sys.stderr)
try:
    c4.settimeout(5); print('reply', c4.recv(64).hex(), file=sys.stderr)
except Exception as e: print('reply', e, file=sys.stderr)
`;
async function plainRun() {
  try { const ex = py('print(1)'); ex.stderr.resume(); const ok = await within(ex.wait(), 8000); if (!ok) { await within(ex.stop(), 3000); return 'unsettled'; } const r = await ex.wait(); return `exit ${r && r.exitCode !== undefined ? r.exitCode : JSON.stringify(r).slice(0, 80)}`; } catch (e) { return `failed: ${e.code || ''} ${String(e.message).slice(0, 120)}`; }
}
(async () => {
  await endIfFd4Refuses();
  const res = [];
  for (const mode of ['control', 'trap']) {
    const base = fds(); const was = stuck().length;
    let peak = base;
    const iv = setInterval(() => { const n = fds(); if (n > peak) peak = n; }, 2);
    const ex = py(CODE, [mode, LINGER, DEPTH], { policy, ...relay });
    ex.protocol.resume();
    const ok = await within(ex.wait(), 30000);
    if (!ok) await within(ex.stop(), 5000);
    await sleep(1000);
    clearInterval(iv);
    const r = { mode, settled: ok, text: ex.text.trim().split('\n').slice(-2).join(' | '), baseFds: base, peakFds: peak, fds1sAfter: fds(), closersWaiting: stuck().length - was, plainRunMeanwhile: await plainRun(), fdsThen: fds() };
    res.push(r); console.log(JSON.stringify(r));
  }
  const t0 = Date.now(); while (stuck().length && Date.now() - t0 < (LINGER + 15) * 1000) await sleep(1000);
  console.log('after', JSON.stringify({ waitedS: Math.round((Date.now() - t0) / 1000), fds: fds(), plainRun: await plainRun() }));
  const [c, t] = res;
  console.log(t.fds1sAfter - t.baseFds > 1000 && t.fds1sAfter - t.baseFds > c.fds1sAfter - c.baseFds + 1000
    ? `FINDING: one message held ${t.fds1sAfter - t.baseFds} provider descriptors (peak ${t.peakFds}) on a waiting closer thread; a plain run meanwhile: ${t.plainRunMeanwhile} (control: ${c.fds1sAfter - c.baseFds} held, peak ${c.peakFds}, plain run ${c.plainRunMeanwhile})`
    : 'held');
  process.exit(0);
})();
