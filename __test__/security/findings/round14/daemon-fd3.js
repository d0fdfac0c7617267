'use strict';
// Probe: the main program exits at once while a double-forked, setsid'd child
// that ignores SIGTERM/SIGHUP keeps fd 3 open and keeps writing to it (mode
// "write") or only holds it (mode "hold"), or a child blocks in close() of a
// lingering socket (mode "linger", mediated policy). Expected: wait() settles
// soon after the main program exits, nothing more is read after it, stop()
// is not needed. Control: the main program exits without a child.
const { py, cordon, sleep, within } = require('./h');
const CODE = String.raw`
import os, sys, time, signal, socket
mode = sys.argv[1]
if mode != 'none' and os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        signal.signal(signal.SIGTERM, signal.SIG_IGN); signal.signal(signal.SIGHUP, signal.SIG_IGN)
        ch = socket.socket(fileno=3)
        for i in range(600):
            if mode == 'write': ch.send(b'tick %d\n' % i)
            time.sleep(0.05)
        os._exit(0)
    os._exit(0)
time.sleep(0.2)
os.write(3, b'main-exit\n')
`;
(async () => {
  const res = [];
  for (const mode of ['none', 'write', 'hold']) {
    const ex = py(CODE, [mode]);
    let got = ''; let afterExit = 0; ex.protocol.on('data', (d) => { got += d; });
    const t0 = Date.now();
    const ok = await within(ex.wait(), 8000);
    const ms = Date.now() - t0;
    if (!ok) await within(ex.stop(), 5000);
    const r = ok ? await ex.wait() : null;
    res.push({ mode, settled: ok, ms, rc: r && r.returncode, ticks: (got.match(/tick/g) || []).length, containment: r && r.receipt.stop.containmentConfirmed, err: ex.text.slice(-200) });
  }
  console.log(JSON.stringify(res));
  const bad = res.filter((r) => !r.settled || r.ms > 3000);
  console.log(bad.length ? `FINDING: ${bad.map((r) => r.mode + ' ' + r.ms + ' ms').join(', ')}` : 'held');
  process.exit(0);
})();
