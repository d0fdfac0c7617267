'use strict';
// R15 probe: floods of descriptors sent over an fd-4 STREAM (the AF_UNIX stream socket an MECQ
// reply hands out) for SECS seconds — each 1-byte message carrying 250 descriptors. Unlike the
// fd-4 channel, a stream's messages do not count against networkStreams. Measures the
// provider's peak threads (and closer threads), peak descriptors, its CPU over the flood
// (all threads, /proc/self/stat) and JS event-loop delay, against a control that floods
// 1-byte messages without descriptors. Kinds: pipes (250 pipe ends), same (one pipe end 250 times), unix (125 socketpairs,
// each with a byte queued), nested (each message's sockets hold 2 more sockets each).
// usage: node flood.js [secs] [kinds…]
const fs = require('node:fs');
const h = require('./h');
const SECS = Number(process.argv[2] || 8);
const KINDS = process.argv.slice(3).length ? process.argv.slice(3) : ['control', 'pipes', 'unix', 'nested'];
const CODE = h.PY + String.raw`
kind, port, secs = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
c4 = socket.socket(fileno=4)
msg, fds = mecq(c4, '127.0.0.1', port)
S = socket.socket(fileno=fds[0])
n = 0; nfds = 0; errs = {}
same = os.pipe()[0]
mine = []
t0 = time.time()
while time.time() - t0 < secs:
    try:
        if kind == 'control':
            S.send(b'a'); n += 1; continue
        mine = []
        if kind == 'same':
            send(S, b'a', [same] * 250); n += 1; nfds += 250; continue
        if kind == 'pipes':
            for i in range(125): mine += list(os.pipe())
        elif kind == 'unix':
            for i in range(125):
                a, b = socket.socketpair(); a.send(b'q'); mine += [a.detach(), b.detach()]
        elif kind == 'nested':
            for i in range(60):
                a, b = socket.socketpair(); c, d = socket.socketpair()
                send(a, b'q', [c.fileno(), d.fileno()]); c.close(); d.close()
                mine += [a.detach(), b.detach()]
        send(S, b'a', mine); n += 1; nfds += len(mine)
        for f in mine: os.close(f)
    except OSError as e:
        errs[e.errno] = errs.get(e.errno, 0) + 1
        for f in mine: os.close(f)
        time.sleep(0.001)
log('SENT', n, 'messages', nfds, 'fds', 'errors', errs)
time.sleep(1)
`;
function cpuTicks() { const f = fs.readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' '); return Number(f[11]) + Number(f[12]); }
function closers() { let n = 0; for (const t of fs.readdirSync('/proc/self/task')) { try { if (/fd-close|passed|closer/.test(fs.readFileSync(`/proc/self/task/${t}/comm`, 'utf8'))) n++; } catch {} } return n; }
(async () => {
  const srv = await h.server('sink');
  const policy = h.policyFor(srv.port);
  const base = h.snap();
  const out = [];
  for (const kind of KINDS) {
    const mon = h.delayMonitor();
    const c0 = cpuTicks();
    const ex = h.py(CODE, [kind, srv.port, SECS], { policy });
    let peak = { threads: 0, fds: 0, closers: 0, rssMiB: 0 };
    let done = false; const w = ex.wait().then((r) => { done = true; return r; });
    while (!done) { const s = h.snap(); peak = { threads: Math.max(peak.threads, s.threads), fds: Math.max(peak.fds, s.fds), closers: Math.max(peak.closers, closers()), rssMiB: Math.max(peak.rssMiB, s.rssMiB) }; await h.sleep(20); if (!(await h.within(Promise.resolve(), 0))) break; }
    const r = await w;
    const cpuMs = (cpuTicks() - c0) * 10;
    await h.sleep(1000);
    const res = { kind, peak, providerCpuMs: cpuMs, loop: mon.stop(), sent: (ex.text.match(/SENT.*/) || [ex.text.slice(-300)])[0], returncode: r.returncode, bytesFromClient: (r.networkReceipts[0] || {}).bytesFromClient, after: h.snap(), stuckAfter: h.stuck(), nextPlainMs: await h.next(0) };
    out.push(res); console.log(JSON.stringify(res));
  }
  srv.shut();
  const c = out.find((r) => r.kind === 'control');
  const bad = out.filter((r) => r.kind !== 'control' && (r.loop.maxMs > 200 || r.peak.threads > base.threads + 40 || r.peak.fds > 2000 || r.after.fds > base.fds + 5 || r.stuckAfter.length || r.nextPlainMs === 'UNSETTLED'));
  console.log(bad.length ? `FINDING: descriptor floods over an fd-4 stream (${SECS} s): ${bad.map((r) => `${r.kind}: peak threads ${r.peak.threads} (closers ${r.peak.closers}), peak fds ${r.peak.fds}, provider CPU ${r.providerCpuMs} ms, loop max ${r.loop.maxMs} ms, after ${JSON.stringify(r.after)}`).join('; ')} (control: threads ${c && c.peak.threads}, fds ${c && c.peak.fds}, CPU ${c && c.providerCpuMs} ms, loop max ${c && c.loop.maxMs} ms)` : `held (base ${JSON.stringify(base)}; ${out.map((r) => `${r.kind}: peak threads ${r.peak.threads}, fds ${r.peak.fds}, CPU ${r.providerCpuMs} ms, loop max ${r.loop.maxMs} ms`).join('; ')})`);
  process.exit(0);
})();
