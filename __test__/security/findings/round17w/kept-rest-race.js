'use strict';
// LateWrites::rest_counted (crates/launcher/src/run/late_writes.rs): a rest kept in JS for fd 3's room when the
// writer closes is counted at the close and subtracted once from the next write that meets the closed writer.
// Each run keeps a rest (1 MiB to a program that does not read), the program exits (or is stopped) at a random
// moment, the provider writes small chunks around the end and X bytes after wait(): protocolDroppedBytes must grow by
// exactly X and the invariant must hold. node kept-rest-race.js [RUNS] [control]
const { spawn, account, sleep } = require('./common');
const RUNS = +(process.argv[2] || 150);
const control = process.argv[3] === 'control';
(async () => {
  let bad = 0;
  for (let i = 0; i < RUNS; i++) {
    const d = ((i * 7) % 40) / 1000;
    const how = control ? 'read' : ['exit', 'stop', 'closefd3'][i % 3];
    const prog = how === 'read' ? 'import os\nwhile os.read(3,1<<20): pass'
      : how === 'closefd3' ? `import os,time\ntime.sleep(${d})\nos.close(3)\ntime.sleep(0.05)` : `import time\ntime.sleep(${how === 'stop' ? 5 : d})`;
    const { ex, p, st, w } = spawn(prog);
    p.resume();
    w(1 << 20);
    if (how === 'stop') setTimeout(() => ex.stop(), d * 1000);
    let settled = false;
    ex.wait().then(() => { settled = true; }, () => { settled = true; });
    for (let k = 0; !settled && k < 200; k++) { w(1 + (k % 5)); await new Promise((r) => setImmediate(r)); }
    if (control) p.end();
    const r = await ex.wait();
    for (let k = 0; k < 100 && st.pending > 0; k++) await sleep(2);
    const before = ex.protocolDroppedBytes;
    const X = control ? 0 : 777;
    if (!control) await w(X);
    const grew = ex.protocolDroppedBytes - before;
    const a = account(ex, st, r);
    if (a.missing !== 0 || grew !== X || a.pending) { bad++; console.log('BAD', JSON.stringify({ i, how, d, grew, X, ...a })); }
  }
  console.log(bad ? `FINDING: ${bad}/${RUNS} runs miscounted a kept rest` : `held (${RUNS} runs)`);
})();
