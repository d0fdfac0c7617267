'use strict';
// Probe: deadlineMs 1000 (stop ladder 500/500) against a program that ignores
// SIGTERM and keeps fd 3 busy: 1-byte sends, descriptor-carrying messages
// (253 pipe ends each), or never reading while the host writes. Expected:
// wait() settles by deadline + grace + force (+ slack), stop.reason
// "deadline". Control: a program that ignores SIGTERM and sleeps.
const { py, sleep, within, delayMonitor } = require('./h');
const CODE = String.raw`
import socket, os, array, time, signal, sys
signal.signal(signal.SIGTERM, signal.SIG_IGN)
ch = socket.socket(fileno=3); r, w = os.pipe(); mode = sys.argv[1]
while True:
    if mode == 'sleep': time.sleep(1)
    elif mode == 'tiny': ch.send(b'x')
    elif mode == 'fds':
        try: ch.sendmsg([b'x'], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', [r] * 126 + [w] * 127))])
        except OSError: pass
    elif mode == 'noread': time.sleep(1)
`;
(async () => {
  const res = [];
  for (const mode of ['sleep', 'tiny', 'fds', 'noread']) {
    const ex = py(CODE, [mode], { deadlineMs: 1000, stop: { graceMs: 500, forceMs: 500 } });
    ex.protocol.on('data', () => {}); ex.protocol.on('error', () => {});
    let iv = null;
    if (mode === 'noread') { const b = Buffer.alloc(65536); iv = setInterval(() => ex.protocol.write(b), 1); }
    const mon = delayMonitor(); const t0 = Date.now();
    const ok = await within(ex.wait(), 10000);
    const ms = Date.now() - t0; clearInterval(iv);
    if (!ok) await within(ex.stop(), 5000);
    const r = ok ? await ex.wait().catch((e) => null) : null;
    res.push({ mode, ms, settled: ok, reason: r && r.receipt.stop.reason, forced: r && r.receipt.stop.forcedStopAttempted, contained: r && r.receipt.stop.containmentConfirmed, delay: mon.stop() });
    console.log(JSON.stringify(res[res.length - 1]));
  }
  const c = res[0];
  const bad = res.filter((r) => !r.settled || r.ms > c.ms + 1000 || r.delay.maxMs > 200);
  console.log(bad.length ? 'FINDING: ' + bad.map((r) => `${r.mode}: ${r.ms} ms (control ${c.ms}), delay ${r.delay.maxMs}`).join('; ') : 'held');
  process.exit(0);
})();
