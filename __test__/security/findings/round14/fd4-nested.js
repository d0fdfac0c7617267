'use strict';
// Probe: R14-1's nested lingering TCP socket sent over the fd-4 egress
// channel (AF_UNIX SOCK_DGRAM) with a MECQ request instead of fd 3. Docs
// (network.md): descriptors a request carries are "closed at once in the
// engine", every passed socket "made abortive and closed on a detached
// thread". Which provider thread waits in tcp_close, and do later runs (a
// mediated run, a plain run) still settle? Control: the same socket passed
// directly over fd 4.
const fs = require('node:fs');
const { py, cordon, sleep, within, endIfFd4Refuses } = require('./h');
const policy = { ...cordon.readOnly(), network: { mode: 'mediated', allow: ['example.com:443'] } };
const relay = process.env.R14_RELAY ? { networkRelayPath: process.env.R14_RELAY } : {};
const CODE = String.raw`
import socket, struct, sys, array, os, time
mode = sys.argv[1]
c4 = socket.socket(fileno=4)
L = socket.socket(); L.bind(('127.0.0.1', 0)); L.listen(1)
X = socket.socket(); X.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
X.connect(L.getsockname()); P, _ = L.accept(); L.close()
P.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
X.setblocking(False)
try:
    while True: X.send(b'x' * 65536)
except BlockingIOError: pass
X.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, 3600))
host = b'example.com'
req = struct.pack('>IBBHH', 0x4d454351, 1, 1, 443, len(host)) + host
def send(s, data, fds): s.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', fds))])
if mode == 'direct':
    send(c4, req, [X.fileno(), P.fileno()]); X.close(); P.close()
else:
    U1, U2 = socket.socketpair()
    send(U1, b'z', [X.fileno(), P.fileno()]); U1.close(); X.close(); P.close()
    fd = U2.detach()
    send(c4, req, [fd]); os.close(fd)
try:
    c4.settimeout(3); print('reply', c4.recv(64).hex(), file=sys.stderr)
except Exception as e: print('reply', e, file=sys.stderr)
`;
function stuck() { const out = []; for (const t of fs.readdirSync('/proc/self/task')) { try { const w = fs.readFileSync(`/proc/self/task/${t}/wchan`, 'utf8'); if (/wait_woken|sk_stream_wait_close/.test(w)) out.push(fs.readFileSync(`/proc/self/task/${t}/comm`, 'utf8').trim()); } catch {} } return out; }
async function next(p) { const ex = py('import time; time.sleep(0.2)', [], p ? { policy, ...relay } : {}); ex.stderr.resume(); const t0 = Date.now(); const ok = await within(ex.wait(), 10000); if (!ok) await within(ex.stop(), 5000); return ok ? Date.now() - t0 : 'UNSETTLED'; }
(async () => {
  await endIfFd4Refuses();
  const res = [];
  for (const mode of ['direct', 'nested', 'nested']) {
    const ex = py(CODE, [mode], { policy, ...relay });
    ex.protocol.resume();
    const t0 = Date.now(); const ok = await within(ex.wait(), 15000); const ms = Date.now() - t0;
    if (!ok) await within(ex.stop(), 5000);
    await sleep(300);
    res.push({ mode, settled: ok, ms, reply: (ex.text.match(/reply.*/) || [ex.text.slice(-200)])[0], stuck: stuck(), nextMediatedMs: await next(true), nextPlainMs: await next(false) });
    console.log(JSON.stringify(res[res.length - 1]));
  }
  const n = res.filter((r) => r.mode === 'nested');
  const bad = n.filter((r) => !r.settled || r.nextMediatedMs === 'UNSETTLED' || r.nextPlainMs === 'UNSETTLED' || r.stuck.length > res[0].stuck.length);
  console.log(bad.length ? `FINDING: over fd 4: ${bad.map((r) => `settled ${r.settled}, next runs ${r.nextMediatedMs}/${r.nextPlainMs}, stuck threads [${r.stuck}]`).join('; ')}` : 'held');
  process.exit(0);
})();
