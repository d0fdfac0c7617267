'use strict';
// fd 3 integrity and receipt accounting: echo program (python cat on fd 3), random write patterns and random
// destroy()/end()/stop() moments. Checks: echoed bytes are an exact prefix of what was written (no loss/dup/reorder),
// and okBytes <= protocolIn + protocolInDiscarded <= written, where okBytes are bytes whose write callback succeeded
// (bytes Node's Writable dropped on destroy() get an error callback: R16b-3); protocolOut === bytes read.
const { cordon } = require('./common');
const crypto = require('crypto');
const RUNS = +(process.env.RUNS || 60);
const py = `
import os, sys, random
mode = sys.argv[1]
if mode == 'noread':
    import time; time.sleep(0.3); sys.exit(0)
if mode == 'closefd3':
    os.read(3, 100); os.close(3); import time; time.sleep(0.3); sys.exit(0)
if mode == 'fork':
    if os.fork() == 0:
        import time; time.sleep(0.5); os._exit(0)
    sys.exit(0)
while True:
    b = os.read(3, random.choice([1, 100, 65536, 1 << 20]))
    if not b: break
    v = memoryview(b)
    while v: n = os.write(3, v); v = v[n:]
`;
function rnd(n) { return Math.floor(Math.random() * n); }
async function one(i) {
  const mode = ['echo', 'echo', 'echo', 'noread', 'closefd3', 'fork'][rnd(6)];
  const action = ['end', 'destroy', 'stop', 'none', 'destroyEarly'][rnd(5)];
  const run = cordon.spawnIsolated(['/usr/bin/python3', '-c', py, mode], { policy: cordon.readOnly(), deadlineMs: 8000 });
  run.stderr.resume();
  const p = run.protocol;
  let written = 0; let okBytes = 0; let ended = false; const wrote = []; const got = [];
  p.on('data', (d) => { got.push(d); if (rnd(4) === 0 && !ended && !p.destroyed && p.writable) { const b = crypto.randomBytes(rnd(3000)); wrote.push(b); p.write(b, (e) => { if (!e) okBytes += b.length; }); written += b.length; } });
  p.on('error', () => {});
  const total = [1, 1000, 200000, 3 << 20][rnd(4)];
  const pieces = rnd(3) === 0 ? 500 : rnd(5) + 1;
  let sent = 0;
  const writer = (async () => {
    for (let k = 0; k < pieces && !ended; k++) {
      const b = crypto.randomBytes(Math.max(1, Math.floor(total / pieces)));
      if (p.destroyed || !p.writable) break;
      wrote.push(b); written += b.length; sent++;
      if (!p.write(b, (e) => { if (!e) okBytes += b.length; })) await new Promise((r) => { p.once('drain', r); p.once('close', r); setTimeout(r, 300); });
      if (rnd(10) === 0) await new Promise((r) => setImmediate(r));
    }
  })();
  const delay = rnd(200);
  if (action === 'destroyEarly') { p.destroy(); }
  await new Promise((r) => setTimeout(r, delay));
  if (action === 'end') { await writer; if (!p.destroyed) p.end(); }
  if (action === 'destroy') p.destroy();
  if (action === 'stop') run.stop();
  if (action === 'none') { await writer; p.end(); }
  const res = await run.wait();
  ended = true;
  const b = res.receipt.bytes;
  const all = Buffer.concat(wrote); const echoed = Buffer.concat(got);
  const problems = [];
  // Bytes written before the run ended: all we wrote (writes after the end are not made, ended flag stops them)
  await new Promise((r) => setTimeout(r, 50));
  const acc = b.protocolIn + b.protocolInDiscarded + run.protocolDroppedBytes;
  if (acc < okBytes || acc > written) problems.push(`in ${b.protocolIn}+disc ${b.protocolInDiscarded} outside [ok ${okBytes}, written ${written}]`);
  if (b.protocolIn > written) problems.push('protocolIn > written');
  if (mode === 'echo') {
    if (!all.subarray(0, echoed.length).equals(echoed)) problems.push(`echo not a prefix (echoed ${echoed.length})`);
    if (echoed.length > b.protocolIn) problems.push('echoed more than protocolIn');
  }
  if (echoed.length > b.protocolOut) problems.push(`read ${echoed.length} > protocolOut ${b.protocolOut}`);
  if (action !== 'destroy' && action !== 'destroyEarly' && action !== 'stop' && mode === 'echo' && echoed.length !== b.protocolOut) problems.push(`read ${echoed.length} != protocolOut ${b.protocolOut}`);
  return { i, mode, action, total, pieces, written, okBytes, ...b, echoed: echoed.length, rc: res.returncode, problems };
}
(async () => {
  let bad = 0; const seen = {};
  for (let i = 0; i < RUNS; i++) {
    const r = await one(i);
    seen[r.mode + '/' + r.action] = (seen[r.mode + '/' + r.action] || 0) + 1;
    if (r.problems.length) { bad++; console.log('FINDING:', JSON.stringify(r)); }
  }
  console.log(bad ? `FINDING: ${bad}/${RUNS} runs broke the invariants` : `held (${RUNS} runs)`, JSON.stringify(seen));
})();
