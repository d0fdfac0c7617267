'use strict';
// destroy() while a write's rest is kept for fd 3's room (program not reading): what does the write's
// callback get, and is the rest counted? Invariant (docs/errors.md): callback ok <=> in exactly one counter.
const { spawn, account, sleep } = require('./common');
const mode = process.argv[2] || 'destroy';
(async () => {
  const prog = 'import time\ntime.sleep(0.6)';
  const { ex, p, st, w } = spawn(prog);
  p.resume();
  const cb = w(4 << 20);
  await sleep(150);
  if (mode === 'destroy') p.destroy();
  else if (mode === 'control') { /* let the program exit */ }
  const r = await ex.wait();
  await sleep(50);
  if (mode === 'after') { await w(1000); await w(1000); }
  const a = account(ex, st, r);
  console.log(mode, JSON.stringify(a), st.errs);
  console.log(a.missing === 0 ? 'held' : `FINDING: ${mode}: ${a.missing} bytes ${a.missing > 0 ? 'with ok callbacks counted nowhere' : 'counted beyond ok callbacks'}`);
})();
