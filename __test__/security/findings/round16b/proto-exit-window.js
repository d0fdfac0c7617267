'use strict';
// R16b-1 (third form, the largest): the provider writes 2-byte chunks (one per setImmediate, no backpressure wait)
// from spawn until wait() settles; the program exits at once without reading fd 3. Once fd 3's socket buffer is
// full, the writes wait in `protocol`; when the program exits they should be counted as protocolInDiscarded.
// Control: a program that reads fd 3 to EOF (then exits on EOF after end()).
const { cordon } = require('./common');
async function once(prog, endAfter) {
  const ex = cordon.spawnIsolated(['/usr/bin/python3', '-c', prog], { policy: cordon.readOnly(), deadlineMs: 10000 });
  ex.stderr.resume(); const p = ex.protocol; p.on('error', () => {}); p.resume();
  const t0 = Date.now(); let tEnd = null, tSettle = null, n = 0, ok = 0, err = 0;
  p.on('end', () => { tEnd = Date.now() - t0; });
  ex.wait().then(() => { tSettle = Date.now() - t0; });
  while (tSettle === null && !(endAfter && n >= endAfter)) { p.write(Buffer.from('ab'), (e) => (e ? err++ : ok++)); n++; await new Promise((r) => setImmediate(r)); }
  if (endAfter) p.end();
  const b = (await ex.wait()).receipt.bytes; await new Promise((r) => setTimeout(r, 50));
  return { writes: n, bytes: n * 2, okCallbacks: ok, errCallbacks: err, eofAtMs: tEnd, settleAtMs: tSettle, in: b.protocolIn, discarded: b.protocolInDiscarded, missing: n * 2 - b.protocolIn - b.protocolInDiscarded - (ex.protocolDroppedBytes ?? 0), dropped: ex.protocolDroppedBytes };
}
(async () => {
  const c = await once('import os\nwhile os.read(3, 65536): pass', 5000);
  console.log('control', JSON.stringify(c));
  let bad = 0;
  for (let i = 0; i < 3; i++) { const t = await once('import sys\nsys.exit(0)', 0); console.log('exit   ', JSON.stringify(t)); if (t.missing) bad++; }
  console.log(bad && !c.missing ? `FINDING: ${bad}/3 runs: bytes of writes made before wait() settled are in neither protocolIn nor protocolInDiscarded` : 'held');
})();
