'use strict';
// R15w-1 probe: a passed AF_UNIX datagram (or seqpacket) socket whose pending
// error (sk_err = ECONNRESET) ends drain_into's pre-shutdown loop at once, and
// whose queue then starts with a zero-length datagram, which ends the
// post-shutdown loop: the rest of its queue (a lingering TCP socket X with
// unsent bytes and its never-reading peer P) is purged by the closer thread's
// own close of the socket, so that thread waits in tcp_close for X's linger.
// Control: the same socket without the pending error (the drain reads it all).
const { py, cordon, sleep, within, snap, stuck, closers, endIfFd4Refuses } = require('./h');
const policy = { ...cordon.readOnly(), network: { mode: 'mediated', allow: ['example.com:443'] } };
const relay = process.env.R14_RELAY ? { networkRelayPath: process.env.R14_RELAY } : {};
const LINGER = Number(process.env.R15_LINGER || 3600);
const CODE = String.raw`
import socket, struct, sys, array, os, ctypes
mode, linger = sys.argv[1], int(sys.argv[2])
c4 = socket.socket(fileno=4)
L = socket.socket(); L.bind(('127.0.0.1', 0)); L.listen(1)
X = socket.socket(); X.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
X.connect(L.getsockname()); P, _ = L.accept(); L.close()
P.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
X.setblocking(False)
try:
    while True: X.send(b'x' * 65536)
except BlockingIOError: pass
X.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, linger))
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
kind = socket.SOCK_SEQPACKET if mode.startswith('seqpacket') else socket.SOCK_DGRAM
U, W = socket.socketpair(socket.AF_UNIX, kind)
W.send(b'')                        # ends drain_into's loop after the shutdown
send(W, b'x', [X.fileno(), P.fileno()])
X.close(); P.close()
if mode.endswith('err'):
    U.send(b'y')                   # W has unread data ...
    if kind == socket.SOCK_DGRAM:
        Z = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); Z.bind(b'\0z')
        W.connect(b'\0z')          # ... so W's reconnect sets U's sk_err = ECONNRESET
    else:
        W.close()                  # ... so W's close sets U's sk_err = ECONNRESET
host = b'example.com'
req = struct.pack('>IBBHH', 0x4d454351, 1, 1, 443, len(host)) + host
D = delay()
fd = U.detach()
send(c4, req, [fd, D.fileno()]); os.close(fd); D.close()
try:
    c4.settimeout(3); print('reply', c4.recv(64).hex(), file=sys.stderr)
except Exception as e: print('reply', e, file=sys.stderr)
`;
async function next(p) { const ex = py('import time; time.sleep(0.2)', [], p ? { policy, ...relay } : {}); ex.stderr.resume(); const t0 = Date.now(); const ok = await within(ex.wait(), 10000); if (!ok) await within(ex.stop(), 5000); return ok ? Date.now() - t0 : 'UNSETTLED'; }
(async () => {
  await endIfFd4Refuses();
  const before = snap();
  const res = [];
  const modes = (process.env.R15_MODES || 'dgram,dgram-err,seqpacket,seqpacket-err').split(',');
  for (const mode of modes) {
    const was = stuck().length;
    const ex = py(CODE, [mode, LINGER], { policy, ...relay });
    ex.protocol.resume();
    const t0 = Date.now(); const ok = await within(ex.wait(), 15000); const ms = Date.now() - t0;
    if (!ok) await within(ex.stop(), 5000);
    await sleep(500);
    const r = { mode, settled: ok, ms, reply: (ex.text.match(/reply.*/) || [ex.text.slice(-300)])[0], added: stuck().length - was, next: await next(true) };
    res.push(r);
    console.log(JSON.stringify(r));
  }
  await sleep(2000);
  const after = { ...snap(), closers: closers() };
  console.log(JSON.stringify({ before, after }));
  const base = res.filter((r) => !r.mode.endsWith('err')).reduce((m, r) => Math.max(m, r.added), 0);
  const bad = res.filter((r) => r.mode.endsWith('err') && r.added > base);
  console.log(bad.length ? `FINDING: ${bad.map((r) => `${r.mode}: +${r.added} closer thread(s) waiting in tcp_close`).join('; ')} (controls: +${base}); 2 s after the runs: [${after.closers}]` : 'held');
  process.exit(0);
})();
