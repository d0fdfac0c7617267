'use strict';
// R16b-1: 4 x 1 MiB written to a program that never reads fd 3 and exits after 0.3 s: intermittently 1-2 MiB are
// neither protocolIn nor protocolInDiscarded, while every write callback reports success. With and without end().
// Control: a program that reads fd 3 to EOF (every byte protocolIn).
const { cordon } = require('./common');
const MiB = 1 << 20;
const REPS = +(process.env.REPS || 5);
async function once(withEnd, sleepS, reads) {
  const prog = reads ? 'import os\nwhile os.read(3, 1<<20): pass' : `import time\ntime.sleep(${sleepS})`;
  const ex = cordon.spawnIsolated(['/usr/bin/python3', '-c', prog], { policy: cordon.readOnly(), deadlineMs: 10000 });
  ex.stderr.resume();
  const p = ex.protocol; p.on('error', () => {}); p.resume();
  let written = 0, ok = 0, err = 0;
  for (let i = 0; i < 4; i++) { written += MiB; p.write(Buffer.alloc(MiB, 97), (e) => (e ? err++ : ok++)); }
  let finished = false; if (withEnd) p.end(() => { finished = true; });
  const r = await ex.wait();
  const b = r.receipt.bytes;
  return { withEnd, written, in: b.protocolIn, discarded: b.protocolInDiscarded, missing: written - b.protocolIn - b.protocolInDiscarded - ex.protocolDroppedBytes, cbOk: ok, cbErr: err, finishEvent: finished };
}
(async () => {
  let bad = 0, badEnd = 0, ctlBad = 0;
  for (let i = 0; i < REPS; i++) {
    const c = await once(true, 0, true); if (c.missing) ctlBad++;
    const a = await once(false, 0.3); if (a.missing) { bad++; console.log('no end():', JSON.stringify(a)); }
    const t = await once(true, 0.3); if (t.missing) { badEnd++; console.log('end():   ', JSON.stringify(t)); }
  }
  console.log(`control (reader) missing in ${ctlBad}/${REPS}; non-reader without end() in ${bad}/${REPS}, with end() in ${badEnd}/${REPS}`);
  console.log((bad || badEnd) && !ctlBad ? 'FINDING: written bytes neither protocolIn nor protocolInDiscarded while their callbacks succeed' : 'held');
})();
