'use strict';
// R15w-1, scale: one run sends N fd-4 requests, each carrying one datagram
// socket prepared as in dgram-err.js (pending ECONNRESET, a zero-length
// datagram, then a lingering TCP socket and its never-reading peer). Counts
// the provider's closer threads waiting in tcp_close, its threads and
// descriptors during and after the run, against a control run (the same
// without the pending error). The linger is R15_LINGER s (default 20) so the
// probe cleans up after itself; a sandbox can set up to 2^31-1 s.
const { py, cordon, sleep, within, snap, stuck } = require('./h');
const policy = { ...cordon.readOnly(), network: { mode: 'mediated', allow: ['example.com:443'] } };
const relay = process.env.R14_RELAY ? { networkRelayPath: process.env.R14_RELAY } : {};
const LINGER = Number(process.env.R15_LINGER || 20);
const N = Number(process.env.R15_N || 30);
const CODE = String.raw`
import socket, struct, sys, array, os
err, linger, n = sys.argv[1] == 'err', int(sys.argv[2]), int(sys.argv[3])
c4 = socket.socket(fileno=4); c4.settimeout(3)
host = b'example.com'
req = struct.pack('>IBBHH', 0x4d454351, 1, 1, 443, len(host)) + host
_dn = [0]
def delay(n=2000):
    # a listener with n connections in its backlog (clients closed): passed
    # after U in the same message, the closer thread empties it first, so the
    # program's own close of U comes before the closer's (no race)
    _dn[0] += 1
    name = b'\0delay%d' % _dn[0]
    D = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); D.bind(name); D.listen(n)
    for _ in range(n):
        c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); c.setblocking(False)
        try: c.connect(name)
        except OSError: c.close(); break
        c.close()
    return D
def send(s, data, fds): s.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', fds))] if fds else [])
L = socket.socket(); L.bind(('127.0.0.1', 0)); L.listen(64)
Z = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); Z.bind(b'\0z')
ok = 0
for i in range(n):
    X = socket.socket(); X.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    X.connect(L.getsockname()); P, _ = L.accept()
    P.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    X.setblocking(False)
    try:
        while True: X.send(b'x' * 65536)
    except BlockingIOError: pass
    X.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, linger))
    U, W = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    W.send(b'')
    send(W, b'x', [X.fileno(), P.fileno()])
    X.close(); P.close()
    if err:
        U.send(b'y'); W.connect(b'\0z')
    W.close()
    D = delay()
    fd = U.detach()
    send(c4, req, [fd, D.fileno()]); os.close(fd); D.close()
    try: c4.recv(64); ok += 1
    except Exception as e: print('reply', i, e, file=sys.stderr); break
print('sent', ok, file=sys.stderr)
`;
(async () => {
  const res = {};
  for (const mode of ['control', 'err']) {
    const was = stuck().length;
    const before = snap();
    const ex = py(CODE, [mode, LINGER, N], { policy, ...relay });
    ex.protocol.resume();
    const ok = await within(ex.wait(), 30000);
    if (!ok) await within(ex.stop(), 5000);
    await sleep(1000);
    const during = { ...snap(), waiting: stuck().length - was };
    res[mode] = { settled: ok, sent: (ex.text.match(/sent \d+/) || [ex.text.slice(-200)])[0], before, during };
    console.log(mode, JSON.stringify(res[mode]));
  }
  const t0 = Date.now();
  while (stuck().length > 0 && Date.now() - t0 < (LINGER + 15) * 1000) await sleep(1000);
  const after = { ...snap(), waiting: stuck().length, waitedS: Math.round((Date.now() - t0) / 1000) };
  console.log('after', JSON.stringify(after));
  const e = res.err.during.waiting; const c = res.control.during.waiting;
  console.log(e > c ? `FINDING: one run, ${res.err.sent} requests: +${e} closer threads waiting in tcp_close after the run (control +${c}); threads ${res.err.before.threads} -> ${res.err.during.threads}, fds ${res.err.before.fds} -> ${res.err.during.fds}; they went only with the linger (${after.waitedS} s later: ${after.waiting} waiting)` : 'held');
  process.exit(0);
})();
