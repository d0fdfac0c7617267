'use strict';
// R15 probe: N runs (3 at a time), each passing a mix over fd 4 and its streams: the nested
// lingering TCP socket (R14-2) over the channel and over a stream, a Unix listener whose backlog
// holds it, 0.3 s of 1-byte messages with 250 descriptors over a stream, its own fd 4 back, then
// a real echo through a fresh stream. Provider descriptors, threads and RSS after a warm-up vs
// at the end, runs' wait() time (first vs last tenth), and any run that fails its echo or
// does not settle. Control: N/4 runs of the same program sending no descriptors.
// usage: node many-runs.js [N]
const h = require('./h');
const N = Number(process.argv[2] || 120);
const CODE = h.PY + String.raw`
mode, port = sys.argv[1], int(sys.argv[2])
c4 = socket.socket(fileno=4)
host = b'127.0.0.1'
req = struct.pack('>IBBHH', 0x4d454351, 1, 1, port, len(host)) + host
import errno as _e
_send = send
def send(s, data, fds, flags=0):
    # the program's own flood can leave its uid's in-flight count at its NOFILE for a moment
    for i in range(200):
        try: return _send(s, data, fds, flags)
        except OSError as e:
            if e.errno != _e.ETOOMANYREFS: raise
            time.sleep(0.01)
    return _send(s, data, fds, flags)
def wrap(fds):
    a, b = socket.socketpair(); send(a, b'z', fds); a.close(); return b
msg, fds = mecq(c4, '127.0.0.1', port); S = socket.socket(fileno=fds[0])
if mode == 'attack':
    X, P = linger_pair(); u = wrap([X.fileno(), P.fileno()]); X.close(); P.close()
    send(c4, req, [u.fileno()]); u.close(); c4.settimeout(3); c4.recv(64)
    X, P = linger_pair(); u = wrap([X.fileno(), P.fileno()]); X.close(); P.close()
    send(S, b'a', [u.fileno()]); u.close(); S.settimeout(3); S.recv(1)
    X, P = linger_pair()
    L = socket.socket(socket.AF_UNIX); L.bind(b'\0r15m-' + str(os.getpid()).encode()); L.listen(8)
    c = socket.socket(socket.AF_UNIX); c.connect(L.getsockname()); send(c, b'z', [X.fileno(), P.fileno()]); c.close(); X.close(); P.close()
    send(c4, req, [L.fileno()]); L.close(); c4.recv(64)
    p = os.pipe()[0]; t0 = time.time(); n = 0
    while time.time() - t0 < 0.3:
        try: _send(S, b'b', [p] * 250); n += 1
        except OSError: time.sleep(0.001)
    send(c4, req, [4]); c4.recv(64)
    S.settimeout(5); got = 0
    while got < n: got += len(S.recv(65536))
msg, fds = mecq(c4, '127.0.0.1', port); T = socket.socket(fileno=fds[0]); T.settimeout(5)
T.sendall(b'ping'); r = b''
while len(r) < 4: r += T.recv(10)
log('OK' if r == b'ping' else 'BAD')
`;
(async () => {
  const srv = await h.server('echo');
  const policy = h.policyFor(srv.port);
  async function batch(mode, n) {
    const times = []; const bad = [];
    let i = 0;
    async function worker() {
      while (i < n) {
        const k = i++;
        const ex = h.py(CODE, [mode, srv.port], { policy });
        const t0 = Date.now(); const ok = await h.within(ex.wait(), 20000);
        if (!ok) { bad.push(`${k}: unsettled`); await h.within(ex.stop(), 5000); continue; }
        times.push(Date.now() - t0);
        if (!/OK/.test(ex.text)) bad.push(`${k}: ${ex.text.slice(-200)}`);
      }
    }
    await Promise.all([worker(), worker(), worker()]);
    return { times, bad };
  }
  const c = await batch('control', Math.max(8, N >> 2));
  const cs = h.snap();
  const warm = await batch('attack', 10); await h.sleep(500);
  const w = h.snap();
  const a = await batch('attack', N); await h.sleep(1000);
  const e = h.snap();
  srv.shut();
  const med = (xs) => { const s = [...xs].sort((p, q) => p - q); return s[s.length >> 1]; };
  const tenth = Math.max(1, a.times.length / 10 | 0);
  const res = { control: { medianMs: med(c.times), bad: c.bad.length, snap: cs }, warm: w, end: e, attack: { n: a.times.length, bad: a.bad.slice(0, 3), badN: a.bad.length, firstTenthMs: med(a.times.slice(0, tenth)), lastTenthMs: med(a.times.slice(-tenth)) }, stuck: h.stuck() };
  console.log(JSON.stringify(res));
  const grow = e.fds - w.fds > 5 || e.threads - w.threads > 3 || e.rssMiB - w.rssMiB > 30;
  const slow = res.attack.lastTenthMs > 2 * res.attack.firstTenthMs + 200;
  console.log(grow || slow || a.bad.length || res.stuck.length ? `FINDING: after ${N} attacking runs: fds ${w.fds} → ${e.fds}, threads ${w.threads} → ${e.threads}, RSS ${w.rssMiB} → ${e.rssMiB} MiB, wait() median ${res.attack.firstTenthMs} → ${res.attack.lastTenthMs} ms, bad runs ${a.bad.length} (${a.bad[0] || '-'}), stuck [${res.stuck}]` : `held (${N} runs: fds ${w.fds} → ${e.fds}, threads ${w.threads} → ${e.threads}, RSS ${w.rssMiB} → ${e.rssMiB} MiB, wait() ${res.attack.firstTenthMs} → ${res.attack.lastTenthMs} ms; control ${res.control.medianMs} ms)`);
  process.exit(0);
})();
