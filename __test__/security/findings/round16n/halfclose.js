'use strict';
// R16n probe: the program shuts its fd 4 down (SHUT_WR, SHUT_RD, both) and
// holds it for HOLD s. Expected: no provider CPU beyond a control run that
// only sleeps (the engine must not spin on zero-length reads or EPIPE), a
// bounded number of receipts, the run settling within ~1 s of the program's
// exit. Also: a zero-length record sent just before SHUT_WR.
const { py, cordon, sleep, within } = require('./h');
const policy = { ...cordon.readOnly(), network: { mode: 'mediated', allow: ['example.com:443'] } };
const relay = process.env.R14_RELAY ? { networkRelayPath: process.env.R14_RELAY } : {};
const HOLD = Number(process.env.R16_HOLD || 10);
const CODE = String.raw`
import socket, sys, time, os
mode, hold = sys.argv[1], float(sys.argv[2])
c4 = socket.socket(fileno=4)
out = []
if mode == 'zero-then-wr':
    c4.send(b''); c4.send(b'junk'); c4.shutdown(socket.SHUT_WR)
elif mode == 'wr': c4.shutdown(socket.SHUT_WR)
elif mode == 'rd':
    c4.shutdown(socket.SHUT_RD)
    for i in range(5):
        try: c4.send(b'junk'); out.append('sent')
        except OSError as e: out.append(str(e.errno))
elif mode == 'rdwr': c4.shutdown(socket.SHUT_RDWR)
try:
    c4.setblocking(False); out.append('recv:%r' % (c4.recv(64),))
except OSError as e: out.append('recv:' + str(e.errno))
# Writes after the shutdown: EPIPE expected, no SIGPIPE death (MSG_NOSIGNAL)
try: c4.send(b'x', socket.MSG_NOSIGNAL); out.append('late:sent')
except OSError as e: out.append('late:' + str(e.errno))
print(mode, ' '.join(out), file=sys.stderr, flush=True)
time.sleep(hold)
`;
function cpuMs() { const u = process.cpuUsage(); return (u.user + u.system) / 1000; }
(async () => {
  const rows = [];
  for (const mode of ['control', 'wr', 'rd', 'rdwr', 'zero-then-wr']) {
    const c0 = cpuMs(); const t0 = Date.now();
    const ex = py(CODE, [mode, HOLD], { policy, ...relay });
    ex.protocol.resume();
    let result; let exitedAt = 0;
    ex.on?.('exit', () => { exitedAt = Date.now(); });
    const ok = await within(ex.wait().then((r) => { result = r; }), (HOLD + 20) * 1000);
    if (!ok) await within(ex.stop(), 5000);
    const receipts = (result && result.networkReceipts) || [];
    rows.push({ mode, ok, ms: Date.now() - t0, cpuMs: Math.round(cpuMs() - c0), receipts: receipts.length, results: [...new Set(receipts.map((r) => r.result))], text: ex.text.trim() });
    console.log(JSON.stringify(rows[rows.length - 1]));
  }
  const ctl = rows[0];
  const bad = rows.slice(1).filter((r) => !r.ok || r.cpuMs > ctl.cpuMs * 3 + 200 || r.receipts > 10 || r.ms > ctl.ms + 2000);
  console.log(bad.length ? `FINDING: ${bad.map((r) => `${r.mode}: cpu ${r.cpuMs} ms, ${r.receipts} receipts, ${r.ms} ms`).join('; ')} (control: cpu ${ctl.cpuMs} ms, ${ctl.receipts} receipts, ${ctl.ms} ms)` : 'held');
  process.exit(0);
})();
