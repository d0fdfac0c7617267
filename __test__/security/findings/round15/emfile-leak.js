'use strict';
// R15 probe: a provider close to its descriptor limit receives a message whose descriptors do
// not all fit (the kernel installs what fits and truncates the rest: MSG_CTRUNC). Are the
// descriptors it did install closed? The provider fills its own table up to HEADROOM free
// descriptors (opening /dev/null; a busy provider), then one run sends MSGS messages of 250
// pipe ends each — over the fd-4 channel (with a MECQ request), over an fd-4 stream, or over
// a direct engine-socket connection (on its CONNECT bytes). Then the provider closes its
// filler and counts its descriptors once they settle (at most 3 s later), against the count before. Control:
// the same with the table not filled (every descriptor fits).
// usage: node emfile-leak.js [headroom] [paths…]
const fs = require('node:fs');
const h = require('./h');
const HEADROOM = Number(process.argv[2] || 150);
const PATHS = process.argv.slice(3).length ? process.argv.slice(3) : ['channel', 'stream', 'engine'];
const MSGS = 4;
const CODE = h.PY + String.raw`
path, port, msgs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
c4 = socket.socket(fileno=4)
host = b'127.0.0.1'
req = struct.pack('>IBBHH', 0x4d454351, 1, 1, port, len(host)) + host
p = os.pipe()[0]
if path == 'stream':
    msg, fds = mecq(c4, '127.0.0.1', port); S = socket.socket(fileno=fds[0])
time.sleep(1.5)  # the provider fills its table meanwhile
for i in range(msgs):
    if path == 'channel':
        send(c4, req, [p] * 250); c4.settimeout(5)
        try: log('reply', c4.recv(64).hex())
        except Exception as e: log('reply', type(e).__name__)
    elif path == 'stream':
        send(S, b'a', [p] * 250)
    elif path == 'engine':
        E = socket.socket(socket.AF_UNIX); E.connect('/.cordon/egress/engine.sock')
        send(E, b'CONNECT 127.0.0.1:%d HTTP/1.1\r\nHost: x\r\n\r\n' % port, [p] * 250); E.settimeout(5)
        try: log('reply', E.recv(100))
        except Exception as e: log('reply', type(e).__name__)
        E.close()
    time.sleep(0.2)
log('SENT')
time.sleep(1)
`;
const limit = () => Number(fs.readFileSync('/proc/self/limits', 'utf8').match(/Max open files\s+(\d+)/)[1]);
(async () => {
  const srv = await h.server('sink');
  const policy = h.policyFor(srv.port);
  const res = [];
  // One mediated run first: what the first one creates for the process's
  // life (the supervision runtime, the egress runtime's shards) is not a
  // per-message leak.
  await h.next(srv.port);
  for (const fill of [false, true]) {
    for (const path of PATHS) {
      await h.sleep(300);
      const before = h.fds();
      const ex = h.py(CODE, [path, srv.port, MSGS], { policy });
      await h.sleep(600); // let the run start with room to spare
      const filler = [];
      if (fill) { const n = limit() - h.fds() - HEADROOM; for (let i = 0; i < n; i++) { try { filler.push(fs.openSync('/dev/null', 'r')); } catch { break; } } }
      const ok = await h.within(ex.wait(), 20000); if (!ok) await h.within(ex.stop(), 5000);
      for (const f of filler) fs.closeSync(f);
      // Up to 3 s for the count to come back within the finding's margin
      // (a leak keeps it up the whole time; a clean run is back at once).
      for (const end = Date.now() + 3000; h.fds() - before > 5 && Date.now() < end;) await h.sleep(100);
      const after = h.fds();
      const r = { path, filled: fill, headroom: fill ? HEADROOM : null, before, after, leaked: after - before, settled: ok, replies: (ex.text.match(/reply \S+/g) || []).slice(0, 4).join(' ') };
      res.push(r); console.log(JSON.stringify(r));
    }
  }
  srv.shut();
  const bad = res.filter((r) => r.leaked > 5);
  console.log(bad.length ? `FINDING: descriptors of a truncated message stay open in the provider: ${bad.map((r) => `${r.path}${r.filled ? ' (provider filled to ' + r.headroom + ' free)' : ''}: ${r.before} → ${r.after} fds 3 s after the run`).join('; ')}` : 'held');
  process.exit(0);
})();
