'use strict';
// Probe: a provider that never reads `protocol` while the program writes as
// fast as it can (256 MiB over 8 s at most). Expected (docs: backpressure;
// "512 MiB floods ... RSS growth under 128 MiB"): the program blocks once a
// bounded amount is buffered, the provider's RSS stays bounded; after stop()
// the run settles. Control: the same with the provider reading (resume()).
const { py, sleep, within, rssMiB } = require('./h');
const CODE = String.raw`
import os, sys, time
buf = b'.' * (1 << 20); n = 0; end = time.time() + 8
while n < 256 and time.time() < end:
    os.write(3, buf) if False else None
    m = 0
    while m < len(buf): m += os.write(3, buf[m:])
    n += 1
    if n % 16 == 0: sys.stderr.write('MiB %d\n' % n); sys.stderr.flush()
sys.stderr.write('done %d\n' % n); sys.stderr.flush()
time.sleep(600)
`;
async function one(read) {
  global.gc && global.gc();
  const r0 = rssMiB();
  const ex = py(CODE);
  ex.stderr.resume();
  if (read) ex.protocol.resume();
  let peak = r0; const iv = setInterval(() => { peak = Math.max(peak, rssMiB()); }, 50);
  await sleep(9000);
  const progress = (ex.text.match(/MiB (\d+)/g) || []).pop() || 'MiB 0';
  await within(ex.stop(), 5000);
  const settled = await within(ex.wait(), 10000);
  clearInterval(iv);
  const r = settled ? await ex.wait() : null;
  return { read, programWrote: progress, rssBefore: r0, rssPeak: peak, settled, protocolOut: r && r.receipt.bytes.protocolOut };
}
(async () => {
  const c = await one(true); console.log(JSON.stringify(c));
  const p = await one(false); console.log(JSON.stringify(p));
  if (!p.settled || p.rssPeak - p.rssBefore > 128) console.log(`FINDING: unread protocol: RSS +${p.rssPeak - p.rssBefore} MiB, settled ${p.settled}`);
  else console.log('held');
  process.exit(0);
})();
