'use strict';
// R15w-7 probe: R15w-4 (one message pins the provider's descriptor table
// full) + the R14w-1 mechanism on fd 4: with no free slot, recvmsg cannot
// install a passed descriptor and the kernel drops it on the *reading*
// thread — for fd 4 a worker of the supervision runtime (fd4_server.rs →
// scm_rights.rs recv_datagram). Two runs B start first and wait; run A then
// sends deepfds.js's trap (depth 6); each B sends [/dev/null, X] over fd 4
// with X lingering and its peer kept in B (8 s). Looks at the runtime's
// workers.
// Control: A sends the same chain without the trap (the table fills only
// for a moment), B does the same.
const fs = require('node:fs');
const path = require('node:path');
const { py, cordon, sleep, within, fds, stuck, endIfFd4Refuses } = require('./h');
const policy = { ...cordon.readOnly(), network: { mode: 'mediated', allow: ['example.com:443'] } };
const relay = process.env.R14_RELAY ? { networkRelayPath: process.env.R14_RELAY } : {};
const LINGER = Number(process.env.R15_LINGER || 30);
const A_CODE = fs.readFileSync(path.join(__dirname, 'deepfds.js'), 'utf8').match(/const CODE = String\.raw`([\s\S]*?)`;/)[1];
const B_CODE = String.raw`
import socket, struct, sys, array, os, time
linger, wait = int(sys.argv[1]), float(sys.argv[2])
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
print('ready', file=sys.stderr, flush=True)
time.sleep(wait)
host = b'example.com'
req = struct.pack('>IBBHH', 0x4d454351, 1, 1, 443, len(host)) + host
n = os.open('/dev/null', os.O_RDONLY)
c4.sendmsg([req], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', [n, X.fileno()]))])
X.close(); os.close(n)
print('sent', file=sys.stderr, flush=True)
time.sleep(8)   # P stays open: X's peer
`;
function workers() {
  const out = [];
  for (const t of fs.readdirSync('/proc/self/task')) {
    try { const c = fs.readFileSync(`/proc/self/task/${t}/comm`, 'utf8').trim(); if (c.startsWith('cordon-supervis')) out.push(fs.readFileSync(`/proc/self/task/${t}/wchan`, 'utf8').trim()); } catch {}
  }
  return out;
}
(async () => {
  await endIfFd4Refuses();
  const res = [];
  for (const mode of ['control', 'trap']) {
    // two B runs: one fd-4 task each, so each can hold one of the runtime's two workers
    const bs = [0, 1].map(() => { const b = py(B_CODE, [LINGER, 4], { policy, ...relay }); b.protocol.resume(); return b; });
    const t0 = Date.now(); while (!bs.every((b) => /ready/.test(b.text)) && Date.now() - t0 < 10000) await sleep(20);
    const a = py(A_CODE, [mode, LINGER, 6], { policy, ...relay }); a.protocol.resume();
    let peak = 0; const iv = setInterval(() => { peak = Math.max(peak, fds()); }, 2);
    while (!bs.every((b) => /sent/.test(b.text)) && Date.now() - t0 < 15000) await sleep(20);
    await sleep(1000);
    clearInterval(iv);
    const w = workers();
    const fdsNow = fds();
    const r = { mode, peakFds: peak, fdsNow, bSent: bs.map((b) => /sent/.test(b.text)), workers: w, closersWaiting: stuck().length };
    await within(a.wait(), 20000);
    await Promise.all(bs.map((b) => within(b.wait(), 20000)));
    res.push(r); console.log(JSON.stringify(r));
    const t1 = Date.now(); while ((stuck().length || workers().some((x) => x === 'wait_woken')) && Date.now() - t1 < (LINGER + 15) * 1000) await sleep(1000);
  }
  const [c, t] = res;
  const blocked = (r) => r.workers.filter((w) => w === 'wait_woken').length;
  console.log(blocked(t) > blocked(c) ? `FINDING: with the table pinned full by one message of run A, run B's descriptors were dropped on the runtime: ${blocked(t)} supervision worker(s) in wait_woken [${t.workers}] (control [${c.workers}])` : 'held');
  process.exit(0);
})();
