'use strict';
// R15r: libuv stops a uv_poll handle by itself when the descriptor reports
// POLLERR (uv__poll_io: uv__io_stop + poll_cb(UV_EBADF)), but src/uv.rs `Poll`
// still records its events as watched, so `watch(true)` / `grant()` never
// restart it. A unix socket reports POLLERR (sk_err = ECONNRESET) when the
// peer closed it with unread data in its own queue. The sandbox: the host
// sends it 1 KB it never reads; it writes 200 KB to fd 3, closes fd 3 and keeps
// running 5 s (stopped once the verdict is in). The provider starts reading 300 ms later in 'readable' mode
// (64 KiB chunks). Expected: all 200 KB (then End) at once, as in the
// control (same, but the sandbox reads the 1 KB before closing: no POLLERR).
const path = require('node:path');
const PKG = process.env.R14_PKG || path.resolve(__dirname, '../../../..');
const cordon = require(PKG);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const PROG = `
import os, sys, time
readfirst = sys.argv[1] == '1'
time.sleep(0.2)
if readfirst:
    os.read(3, 65536)
data = b'q' * 200000
mv = memoryview(data)
while mv:
    mv = mv[os.write(3, mv):]
os.close(3)
time.sleep(5)
`;
async function one(readFirst, mode) {
  const ex = cordon.spawnIsolated(['/usr/bin/python3', '-c', PROG, readFirst ? '1' : '0'], { policy: cordon.readOnly(), deadlineMs: 20000 });
  ex.stderr.resume();
  const t0 = Date.now();
  ex.protocol.write(Buffer.alloc(1024, 0x41));
  let got = 0; let allAt = null; let endAt = null;
  // The verdict is in once all 200 KB came, or at 3 s (late: a finding): the
  // run is stopped then rather than left its 5 s.
  const verdict = setTimeout(() => ex.stop(), 3000);
  const take = (n) => { got += n; if (got >= 200000 && allAt === null) { allAt = Date.now() - t0; clearTimeout(verdict); ex.stop(); } };
  ex.protocol.on('end', () => { endAt = Date.now() - t0; });
  await sleep(600);
  if (mode === 'readable') ex.protocol.on('readable', () => { let c; while ((c = ex.protocol.read()) !== null) take(c.length); });
  else ex.protocol.on('data', (c) => take(c.length));
  const r = await ex.wait().then((v) => v, (e) => ({ err: e.code }));
  await sleep(50);
  return { readFirst, mode, got, allAtMs: allAt, endAtMs: endAt, runMs: Date.now() - t0, out: r.receipt?.bytes?.protocolOut };
}
(async () => {
  const rows = [];
  for (const mode of ['readable', 'flowing']) { rows.push(await one(true, mode)); rows.push(await one(false, mode)); }
  const control = rows.filter((r) => r.readFirst); const test = rows.filter((r) => !r.readFirst);
  const late = test.filter((r) => r.allAtMs === null || r.allAtMs > 3000);
  const s = rows.map((r) => JSON.stringify(r)).join('; ');
  console.log(late.length && control.every((r) => r.allAtMs < 3000) ? `FINDING: ${s}` : `held (${s})`);
})();
