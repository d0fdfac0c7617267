'use strict';
// R15r: a write whose rest is kept in JS (fd 3 full: _writeSome + awaitWritable)
// when the sandbox half-closes its side (shutdown(3, SHUT_WR)) before it starts
// reading. The reader sees fd 3's end and closes its poll handle
// (src/loop_reader.rs read(): ReadStep::Ended -> close) — the writable watch
// with it. Does the rest ever reach the sandbox (it does read everything
// afterwards), and is the write's callback called before the run ends?
// Control: the same program, no half-close (the sandbox only sleeps).
// Also: the receipt must account for every byte write() accepted:
// protocolIn + protocolInDiscarded == 8 MiB (docs/receipts.md: bytes written
// after the program closed fd 3 are dropped and counted as discarded).
const path = require('node:path');
const PKG = process.env.R14_PKG || path.resolve(__dirname, '../../../..');
const cordon = require(PKG);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const SIZE = 8 << 20;
const PROG = `
import os, socket, sys, time
half = sys.argv[1] == '1'
os.write(3, b'hello')
time.sleep(0.5)
if half:
    s = socket.socket(fileno=3); s.shutdown(socket.SHUT_WR); s.detach()
time.sleep(0.5)
got = 0
import select
blocking = sys.argv[2] == '1'
while True:
    if not blocking:
        r, _, _ = select.select([3], [], [], 3.0)
        if not r:
            break
    b = os.read(3, 1 << 20)
    if not b:
        break
    got += len(b)
sys.stderr.write('sandbox got %d\\n' % got)
`;
async function one(half, blocking = false) {
  const ex = cordon.spawnIsolated(['/usr/bin/python3', '-c', PROG, half ? '1' : '0', blocking ? '1' : '0'], { policy: cordon.readOnly(), deadlineMs: 8000 });
  let err = ''; ex.stderr.on('data', (d) => { err += d; });
  let cbAt = null; const t0 = Date.now();
  ex.protocol.once('data', () => { ex.protocol.write(Buffer.alloc(SIZE, 0x61), () => { cbAt = Date.now() - t0; }); ex.protocol.end(); });
  ex.protocol.resume();
  const r = await ex.wait().then((v) => v, (e) => ({ err: e.code, receipt: e.details?.receipt }));
  await sleep(100);
  const got = Number((err.match(/sandbox got (\d+)/) || [])[1]);
  if (!got) console.error(err);
  return { half, blocking, sandboxGot: got, protocolIn: r.receipt?.bytes?.protocolIn, discarded: r.receipt?.bytes?.protocolInDiscarded, writeCbMs: cbAt, runMs: Date.now() - t0, rc: r.returncode ?? r.err };
}
(async () => {
  const control = await one(false);
  const c = await one(true);
  // The sandbox blocks reading until EOF (as a tool loop waiting for its answer): the run lasts until its deadline (8 s).
  const b = await one(true, true);
  const s = `control (no half-close): ${JSON.stringify(control)}; half-closed: ${JSON.stringify(c)}; half-closed, blocking reader: ${JSON.stringify(b)}`;
  const unaccounted = [c, b].some((x) => x.protocolIn + x.discarded !== SIZE);
  console.log(control.sandboxGot === SIZE && (c.sandboxGot !== SIZE || unaccounted) ? `FINDING: ${s}` : `held (${s})`);
})();
