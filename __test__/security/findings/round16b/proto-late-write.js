'use strict';
// Receipt accounting (docs/receipts.md: "protocolIn + protocolInDiscarded is every byte written to `protocol`
// before the run ended"; docs/errors.md: writes after the program closed fd 3 are dropped and counted).
// Each case writes to `protocol` at a precise moment and compares written bytes with the receipt.
// After the fix (main): in + discarded + protocolDroppedBytes is every byte whose write callback succeeded (R16b-1/3).
const { cordon } = require('./common');
const MiB = 1 << 20;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function run(prog, drive) {
  const ex = cordon.spawnIsolated(['/usr/bin/python3', '-c', prog], { policy: cordon.readOnly(), deadlineMs: 10000 });
  ex.stderr.resume();
  const p = ex.protocol; p.on('error', () => {}); p.resume();
  const st = { written: 0, okBytes: 0, cbErrors: 0, cbOk: 0 };
  const w = (n) => { st.written += n; p.write(Buffer.alloc(n, 97), (e) => { if (e) st.cbErrors++; else { st.cbOk++; st.okBytes += n; } }); };
  await drive(ex, p, w);
  const r = await ex.wait();
  const b = r.receipt.bytes;
  return { written: st.written, in: b.protocolIn, discarded: b.protocolInDiscarded, missing: st.okBytes - b.protocolIn - b.protocolInDiscarded - ex.protocolDroppedBytes, cbOk: st.cbOk, cbErrors: st.cbErrors };
}
const cases = {
  // control: the program reads everything
  control_reads_all: ['import os\nwhile os.read(3, 1<<20): pass', async (ex, p, w) => { for (let i = 0; i < 4; i++) w(MiB); p.end(); }],
  // program closed fd 3, still alive: 4 MiB written back to back (most wait in the Writable's buffer)
  closed_fd3_alive: ['import os,time\nos.close(3)\ntime.sleep(1.5)', async (ex, p, w) => { await sleep(300); for (let i = 0; i < 4; i++) w(MiB); await sleep(200); p.end(); }],
  // program never reads and exits after 0.5 s: 4 MiB back to back at t=0
  noread_exit: ['import time\ntime.sleep(0.5)', async (ex, p, w) => { for (let i = 0; i < 4; i++) w(MiB); }],
  // same with end() right after the writes
  noread_exit_end: ['import time\ntime.sleep(0.5)', async (ex, p, w) => { for (let i = 0; i < 4; i++) w(MiB); p.end(); }],
  // program exits at once; provider writes after it saw fd 3's EOF, before wait() settles
  after_eof: ['import sys\nsys.exit(0)', async (ex, p, w) => { let settled = false; ex.wait().then(() => { settled = true; }); await new Promise((r) => p.once('end', r)); if (settled) console.log('  (wait() had already settled)'); w(MiB); w(10); }],
  // program closes fd 3 but stays alive 1 s; provider writes on fd 3's EOF
  after_eof_alive: ['import os,time\nos.close(3)\ntime.sleep(1)', async (ex, p, w) => { await new Promise((r) => p.once('end', r)); w(MiB); w(10); }],
  // destroy() with writes still in the Writable's buffer
  destroy_buffered: ['import os,time\ntime.sleep(0.3)\nwhile os.read(3, 1<<20): pass', async (ex, p, w) => { for (let i = 0; i < 4; i++) w(MiB); await sleep(50); p.destroy(); }],
  // stop() with writes buffered
  stop_buffered: ['import time\ntime.sleep(5)', async (ex, p, w) => { for (let i = 0; i < 4; i++) w(MiB); await sleep(100); await ex.stop(); }],
};
(async () => {
  let bad = 0;
  for (const [name, [prog, drive]] of Object.entries(cases)) {
    const r = await run(prog, drive);
    const ok = r.missing === 0;
    if (!ok) bad++;
    console.log(ok ? 'held' : 'FINDING:', name, JSON.stringify(r));
  }
  console.log(bad ? `FINDING: ${bad} case(s) lost bytes from the receipt` : 'held (all cases)');
})();
