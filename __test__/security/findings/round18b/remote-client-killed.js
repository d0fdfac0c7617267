'use strict';
// R18b: docs/remote.md § Liveness and disconnects: a client whose connection closes has its sandbox stopped through
// the ladder, stop.reason "disconnect"; the host keeps the receipt (receipts(invocationId)). Here a separate client
// process spawns a run (program reading slowly / not reading / sleeping), writes fire-and-forget, and is SIGKILLed
// at 30-400 ms. Checked: the sandbox is gone within 3 s, the kept receipt says "disconnect", protocolIn +
// protocolInDiscarded <= bytes the client wrote, and the host's threads/fds come back to their level after ROUNDS kills.
// Usage: node remote-client-killed.js [rounds] [control|tls|nobody]  (control: the client is not killed; it ends normally)
const { startHost, sleep, PKG, descendants, nthreads, nfds, rssKiB } = require('./common');
const { connectRemote } = require(PKG + '/lib/remote');
const { spawn } = require('child_process');
const ROUNDS = +(process.argv[2] || 20);
const mode = process.argv[3] || '';
const control = mode === 'control';
const progs = ['import os,time\nwhile True:\n  if not os.read(3,4096): break\n  time.sleep(0.002)', 'import time\ntime.sleep(20)', 'import os\nwhile os.read(3,1<<20): pass'];
const clientSrc = (target, id, prog) => `
const { connectRemote } = require(${JSON.stringify(PKG + '/lib/remote')});
const c = connectRemote(${JSON.stringify(target)});
const ex = c.spawnIsolated(['py', '-c', ${JSON.stringify(prog)}], { policy: c.readOnly(), invocationId: ${JSON.stringify(id)}, deadlineMs: 20000 });
ex.stderr.resume(); ex.protocol.resume(); ex.protocol.on('error', () => {});
let sent = 0, live = true;
ex.wait().then(() => { live = false; console.log('SETTLED'); process.exit(0); }, (e) => { console.log('ERR', e.code); process.exit(1); });
ex.on?.('spawn', () => {});
(async () => { let n = 0; while (live && n++ < 2000) { ex.protocol.write(Buffer.alloc(65536, 1)); sent += 65536; if (n === 3) console.log('WRITING'); await new Promise((r) => setImmediate(r)); } if (${control}) ex.protocol.end(); })();
setInterval(() => console.log('SENT', sent), 20);
`;
(async () => {
  const h = await startHost({ tls: mode === 'tls', asNobody: mode === 'nobody' });
  const c = connectRemote(h.target);
  let bad = 0, slowGone = 0, noReceipt = 0, wrongReason = 0;
  // warm up: one ordinary run so the host's threads are up
  { const ex = c.spawnIsolated(['true'], { policy: c.readOnly() }); ex.stderr.resume(); ex.protocol.resume(); await ex.wait(); }
  await sleep(300);
  const b0 = { thr: nthreads(h.pid), fds: nfds(h.pid), rss: rssKiB(h.pid) };
  try {
    for (let i = 0; i < ROUNDS; i++) {
      const id = `r18b-kill-${process.pid}-${i}`;
      const prog = control ? progs[2] : progs[i % 3];
      const child = spawn(process.execPath, ['-e', clientSrc(h.target, id, prog)], { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      child.stdout.on('data', (d) => { out += d; });
      while (!/WRITING/.test(out) && child.exitCode === null) await sleep(5);
      await sleep(30 + Math.floor(Math.random() * 370));
      const sentAtKill = +((/SENT (\d+)\n(?![\s\S]*SENT)/.exec(out) || [0, 0])[1]);
      if (!control) child.kill('SIGKILL');
      await new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r() : child.once('exit', r)));
      const t0 = Date.now();
      while (descendants(h.pid).length && Date.now() - t0 < 10000) await sleep(20);
      const goneMs = Date.now() - t0;
      if (goneMs > 3000) slowGone++;
      let rec = null;
      for (let k = 0; k < 50 && !rec; k++) { const rs = await c.receipts(id).catch(() => []); rec = rs[0] || null; if (!rec) await sleep(100); }
      if (!rec) { noReceipt++; bad++; console.log('no receipt', i); continue; }
      const reason = rec.stop?.reason ?? null;
      const inb = rec.bytes.protocolIn + rec.bytes.protocolInDiscarded;
      const sentTotal = +((/SENT (\d+)\n(?![\s\S]*SENT)/.exec(out) || [0, 0])[1]);
      if (!control && reason !== 'disconnect') { wrongReason++; bad++; }
      console.log(JSON.stringify({ i, goneMs, reason, in: rec.bytes.protocolIn, disc: rec.bytes.protocolInDiscarded, sentAtKill, sentTotal, status: rec.outcome?.status }));
    }
  } finally {
    await sleep(500);
    const b1 = { thr: nthreads(h.pid), fds: nfds(h.pid), rss: rssKiB(h.pid) };
    console.log(`host threads ${b0.thr}->${b1.thr}, fds ${b0.fds}->${b1.fds}, rss ${b0.rss}->${b1.rss} KiB, processes left ${descendants(h.pid).length}`);
    if (b1.fds > b0.fds + 2 || b1.thr > b0.thr + 2) bad++;
    await c.close(); await h.stop();
  }
  console.log(`rounds ${ROUNDS}: bad ${bad}, no receipt ${noReceipt}, reason != disconnect ${wrongReason}, sandbox gone after > 3 s ${slowGone}`);
  console.log(bad || slowGone ? `FINDING: client killed mid-run: ${bad} bad, ${slowGone} slow` : 'held');
})();
