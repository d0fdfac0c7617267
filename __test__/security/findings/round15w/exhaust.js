'use strict';
// R15w-2 probe (run as uid 65534: `node nobody.js exhaust.js`; RLIMIT_NPROC
// does not bind root): when a closer thread cannot be started,
// cordon_passed_fds::neutralise drops the descriptors on the calling thread
// without settling them (crates/passed-fds/src/lib.rs, neutralise) — for fd 4
// that is a worker of the supervision runtime every run shares. The thread
// limit is met the way R15w-1 makes it cheap: closer threads that stay in
// tcp_close. Here the provider's RLIMIT_NPROC soft limit is lowered (by
// prlimit on its own pid) to what its uid runs now plus a few, for the
// flood only, and restored before every later run.
// Control: the same floods of plain (not nested) datagram sockets.
const fs = require('node:fs');
const { spawnSync } = require('node:child_process');
const { py, cordon, sleep, within, stuck } = require('./h');
const policy = { ...cordon.readOnly(), network: { mode: 'mediated', allow: ['example.com:443'] } };
const relay = process.env.R14_RELAY ? { networkRelayPath: process.env.R14_RELAY } : {};
const LINGER = Number(process.env.R15_LINGER || 30);
const CODE = String.raw`
import socket, struct, sys, array, os, time
nested, linger, n = sys.argv[1] == 'nested', int(sys.argv[2]), int(sys.argv[3])
c4 = socket.socket(fileno=4); c4.settimeout(2)
host = b'example.com'
req = struct.pack('>IBBHH', 0x4d454351, 1, 1, 443, len(host)) + host
def send(s, data, fds): s.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', fds))] if fds else [])
L = socket.socket(); L.bind(('127.0.0.1', 0)); L.listen(64)
Z = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); Z.bind(b'\0z')
print('ready', file=sys.stderr, flush=True)
time.sleep(1.0)   # the provider lowers its limit meanwhile
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
    if nested:
        W.send(b'')
        send(W, b'x', [X.fileno(), P.fileno()])
        X.close(); P.close()
        U.send(b'y'); W.connect(b'\0z')
    else:
        P.close(); X.close()   # P's close (unread bytes) resets X: nothing lingers
    W.close()
    fd = U.detach()
    send(c4, req, [fd]); os.close(fd)
    try: c4.recv(64); ok += 1
    except Exception as e: print('reply', i, e, file=sys.stderr); break
print('answered', ok, file=sys.stderr)
`;
function uidThreads() {
  let n = 0;
  for (const p of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try { if (/^Uid:\s+65534\b/m.test(fs.readFileSync(`/proc/${p}/status`, 'utf8'))) n += fs.readdirSync(`/proc/${p}/task`).length; } catch {}
  }
  return n;
}
const hard = () => fs.readFileSync('/proc/self/limits', 'utf8').match(/Max processes\s+\S+\s+(\S+)/)[1];
function setNproc(soft) { return spawnSync('prlimit', ['--pid', String(process.pid), `--nproc=${soft}:${hard()}`]).status; }
function workers() {
  const out = [];
  for (const t of fs.readdirSync('/proc/self/task')) {
    try { const c = fs.readFileSync(`/proc/self/task/${t}/comm`, 'utf8').trim(); if (c.startsWith('cordon-supervis')) out.push(fs.readFileSync(`/proc/self/task/${t}/wchan`, 'utf8').trim()); } catch {}
  }
  return out;
}
async function plainRun() { const ex = py('print(1)'); ex.stderr.resume(); const t0 = Date.now(); const ok = await within(ex.wait(), 8000); if (!ok) await within(ex.stop(), 3000); return ok ? Date.now() - t0 : 'UNSETTLED(8s)'; }
async function waitFor(ex, re, ms) { const t0 = Date.now(); while (!re.test(ex.text) && Date.now() - t0 < ms) await sleep(20); return re.test(ex.text); }
/** Two mediated runs flood at once (one fd-4 task each, on the runtime's workers), with the limit lowered. */
async function flood(kind) {
  const runs = [0, 1].map(() => { const ex = py(CODE, [kind, LINGER, 40], { policy, ...relay }); ex.protocol.resume(); return ex; });
  for (const ex of runs) await waitFor(ex, /ready/, 10000);
  const limit = uidThreads() + 6;
  setNproc(limit);
  const settled = await Promise.all(runs.map((ex) => within(ex.wait(), 12000)));
  await sleep(300);
  const w = workers();
  setNproc(hard());
  for (const [i, ex] of runs.entries()) if (!settled[i]) await within(ex.stop(), 5000);
  return { kind, settled, answered: runs.map((ex) => (ex.text.match(/answered \d+/) || [ex.text.slice(-100)])[0]), limit, closersWaiting: stuck().length, workers: w };
}
(async () => {
  if (process.getuid() === 0) { console.log('run as uid 65534 (node nobody.js exhaust.js): RLIMIT_NPROC does not bind root'); process.exit(0); }
  console.log('warm-up', await plainRun());
  const res = [];
  for (const kind of ['plain', 'nested']) {
    const r = await flood(kind);
    r.nextPlainRun = await plainRun();
    r.workersAfter = workers();
    res.push(r); console.log(JSON.stringify(r));
  }
  const t0 = Date.now();
  while ((stuck().length || workers().some((w) => /wait_woken|sk_stream/.test(w))) && Date.now() - t0 < (LINGER + 30) * 1000) await sleep(1000);
  console.log('after', JSON.stringify({ waitedS: Math.round((Date.now() - t0) / 1000), closers: stuck().length, workers: workers(), plainRun: await plainRun() }));
  const blocked = res.filter((r) => r.kind === 'nested' && (r.workers.some((w) => /wait_woken|sk_stream/.test(w)) || typeof r.nextPlainRun !== 'number'));
  const ctrl = res.filter((r) => r.kind === 'plain' && (r.workers.some((w) => /wait_woken|sk_stream/.test(w)) || typeof r.nextPlainRun !== 'number'));
  console.log(blocked.length > ctrl.length ? `FINDING: with the thread limit met, runtime workers wait in tcp_close: ${blocked.map((r) => `workers [${r.workers}], next plain run ${r.nextPlainRun}`).join('; ')} (control floods: ${ctrl.length} blocked)` : 'held');
  process.exit(0);
})();
