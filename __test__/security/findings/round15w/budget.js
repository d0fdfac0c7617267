'use strict';
// R15w-3 probe: the closer thread's budget (MAX_EMPTIED = 65 536 sockets
// emptied per thread, crates/passed-fds/src/settle.rs:37) is spent by
// listeners' backlogs (each accepted connection counts); a socket popped
// after that is "only made abortive and closed", so its queue — a lingering
// TCP socket and its never-reading peer — is purged by the closer thread's
// own close. One message: U (a datagram socketpair end) whose queue holds
// [V] then [L1..L16]; each Li a listener with a full backlog (clients closed);
// V's queue holds [X, P]. Control: the same with V alone (no listeners).
const { py, cordon, sleep, within, snap, stuck, endIfFd4Refuses } = require('./h');
const policy = { ...cordon.readOnly(), network: { mode: 'mediated', allow: ['example.com:443'] } };
const relay = process.env.R14_RELAY ? { networkRelayPath: process.env.R14_RELAY } : {};
const LINGER = Number(process.env.R15_LINGER || 30);
const CODE = String.raw`
import socket, struct, sys, array, os, time
mode, linger, nl = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
c4 = socket.socket(fileno=4)
def send(s, data, fds): s.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', fds))] if fds else [])
L = socket.socket(); L.bind(('127.0.0.1', 0)); L.listen(1)
X = socket.socket(); X.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
X.connect(L.getsockname()); P, _ = L.accept(); L.close()
P.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
X.setblocking(False)
try:
    while True: X.send(b'x' * 65536)
except BlockingIOError: pass
X.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, linger))
V, V2 = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
send(V2, b'x', [X.fileno(), P.fileno()]); X.close(); P.close(); V2.close()
U, U2 = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
send(U2, b'v', [V.fileno()]); V.close()
t0 = time.time(); conns = 0
if mode == 'budget':
    ls = []
    for i in range(nl):
        Li = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); Li.bind(b'\0l%d' % i); Li.listen(65535)
        while True:
            c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); c.setblocking(False)
            try: c.connect(b'\0l%d' % i)
            except (BlockingIOError, OSError): c.close(); break
            c.close(); conns += 1
        ls.append(Li)
    send(U2, b'l', [l.fileno() for l in ls])
    for l in ls: l.close()
print('backlog connections', conns, 'in', round(time.time() - t0, 1), 's', file=sys.stderr)
U2.close()
host = b'example.com'
req = struct.pack('>IBBHH', 0x4d454351, 1, 1, 443, len(host)) + host
fd = U.detach()
send(c4, req, [fd]); os.close(fd)
try:
    c4.settimeout(5); print('reply', c4.recv(64).hex(), file=sys.stderr)
except Exception as e: print('reply', e, file=sys.stderr)
`;
(async () => {
  await endIfFd4Refuses();
  const res = [];
  for (const mode of ['control', 'budget']) {
    const was = stuck().length;
    const ex = py(CODE, [mode, LINGER, Number(process.env.R15_LISTENERS || 17)], { policy, ...relay });
    ex.protocol.resume();
    const ok = await within(ex.wait(), 40000);
    if (!ok) await within(ex.stop(), 5000);
    let added = 0;
    for (let i = 0; i < 10; i++) { await sleep(500); added = stuck().length - was; if (added > 0) break; }
    const r = { mode, settled: ok, text: ex.text.trim().split('\n').slice(-2).join(' | '), added, ...snap() };
    res.push(r); console.log(JSON.stringify(r));
  }
  const t0 = Date.now(); while (stuck().length && Date.now() - t0 < (LINGER + 10) * 1000) await sleep(1000);
  const [c, b] = res;
  console.log(b.added > c.added ? `FINDING: past the budget the nested lingering socket was purged on the closer thread: +${b.added} waiting (control +${c.added}); gone ${Math.round((Date.now() - t0) / 1000)} s later` : 'held');
  process.exit(0);
})();
