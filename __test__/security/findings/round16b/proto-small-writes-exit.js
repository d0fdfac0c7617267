'use strict';
// R16b-1 (second form): 500 two-byte writes, one per setImmediate, to a program that exits at once without reading
// fd 3. Every write callback succeeds; protocolIn + protocolInDiscarded should be 1000. Control: a program that
// reads fd 3 to EOF.
const { cordon } = require('./common');
const REPS = +(process.env.REPS || 5);
async function once(prog) {
  const ex = cordon.spawnIsolated(['/usr/bin/python3', '-c', prog], { policy: cordon.readOnly(), deadlineMs: 10000 });
  ex.stderr.resume(); const p = ex.protocol; p.on('error', () => {}); p.resume();
  let ok = 0, err = 0, settled = false, afterSettle = 0; ex.wait().then(() => { settled = true; });
  for (let i = 0; i < 500; i++) { if (settled) { afterSettle++; continue; } p.write(Buffer.from('ab'), (e) => (e ? err++ : ok++)); await new Promise((r) => setImmediate(r)); }
  p.end();
  const r = await ex.wait(); await new Promise((res) => setTimeout(res, 20));
  const b = r.receipt.bytes;
  const written = (500 - afterSettle) * 2;
  return { written, okBytes: ok * 2, errCallbacks: err, in: b.protocolIn, discarded: b.protocolInDiscarded, missing: written - b.protocolIn - b.protocolInDiscarded - ex.protocolDroppedBytes };
}
(async () => {
  let bad = 0, ctl = 0;
  for (let i = 0; i < REPS; i++) {
    const c = await once('import os\nwhile os.read(3, 65536): pass'); if (c.missing) ctl++;
    const t = await once('import sys\nsys.exit(0)'); if (t.missing) { bad++; console.log(JSON.stringify(t)); }
  }
  console.log(`control missing ${ctl}/${REPS}; exiting program missing ${bad}/${REPS}`);
  console.log(bad && !ctl ? 'FINDING: bytes of successful writes (made before wait() settled) are in neither protocolIn nor protocolInDiscarded' : 'held');
})();
