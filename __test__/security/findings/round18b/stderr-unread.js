'use strict';
// R18b: docs/remote.md: "an unread `stderr` keeps its first 64 KiB and counts the rest in `stderrDroppedBytes`" (as
// locally). The program writes N bytes to stderr and exits; the client never reads stderr (no listener, not resumed),
// reads fd 3 normally. Checked: the run settles promptly (< 5 s), stderr kept (read after wait) ≤ 64 KiB and
// kept + stderrDroppedBytes = receipt.bytes.stderr. Usage: node stderr-unread.js [reps] [local|remote|remote-tls|remote-nobody] [control]
// (control: stderr is read from the start: nothing dropped).
const { startHost, sleep, PKG, descendants } = require('./common');
const cordon = require(PKG);
const { connectRemote } = require(PKG + '/lib/remote');
const REPS = +(process.argv[2] || 5);
const where = process.argv[3] || 'remote';
const control = process.argv[4] === 'control';
(async () => {
  let h = null, c = null;
  if (where !== 'local') { h = await startHost({ tls: where === 'remote-tls', asNobody: where === 'remote-nobody' }); c = connectRemote(h.target); }
  const spawn = (argv, o) => (c ? c.spawnIsolated(['py', ...argv], { policy: c.readOnly(), ...o }) : cordon.spawnIsolated(['/usr/bin/python3', ...argv], { policy: cordon.readOnly(), ...o }));
  let bad = 0;
  try {
    for (let i = 0; i < REPS; i++) {
      const N = [100, 65536, 65537, 1 << 20, 10 << 20][i % 5];
      const ex = spawn(['-c', `import sys,os\nos.write(3,b"x"*1000)\nb=b"e"*${N}\nv=memoryview(b)\nwhile len(v):\n  v=v[os.write(2,v):]`], { deadlineMs: 15000 });
      let kept = 0;
      if (control) ex.stderr.on('data', (d) => { kept += d.length; });
      ex.protocol.resume();
      const t0 = Date.now();
      const r = await ex.wait();
      const ms = Date.now() - t0;
      if (!control) { ex.stderr.on('data', (d) => { kept += d.length; }); }
      await new Promise((res) => (ex.stderr.readableEnded ? res() : ex.stderr.once('end', res)));
      const drop = ex.stderrDroppedBytes;
      const ok = ms < 5000 && kept + drop === r.receipt.bytes.stderr && r.receipt.bytes.stderr === N && (control ? drop === 0 : kept <= 65536);
      if (!ok) bad++;
      console.log(ok ? 'ok ' : 'BAD', JSON.stringify({ N, ms, stderr: r.receipt.bytes.stderr, kept, dropped: drop, stop: r.receipt.stop?.reason ?? null }));
    }
  } finally { if (h) { await sleep(200); console.log('processes left', descendants(h.pid).length); await c.close(); await h.stop(); } }
  console.log(bad ? `FINDING: ${bad}/${REPS} runs: unread stderr not kept/counted as documented` : 'held');
})();
