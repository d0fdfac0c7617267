'use strict';
// R18b: docs/remote.md: `exit` (now carrying `inbound`) "stays within the 1 MiB control-frame bound": past it the
// receipt's argv is cut (command.argvTruncated). The exit frame's size also grows with the counters' digits
// (protocolIn/Out, inbound.received/dropped). Here argv of ~1 MB (10 × 100 kB + a tail) is swept across the
// full/cut threshold found with no fd-3 traffic, then again with 200 MiB echoed through fd 3 (9-digit counters in
// the receipt and in inbound). Every run must resolve (full or cut, never ERR_CORDON_REMOTE_PROTOCOL / a frame
// error) with the byte invariant. Usage: node remote-exit-bound.js [tls|nobody|control]  (control: a short argv)
const { startHost, PKG, counter, missing, descendants } = require('./common');
const { connectRemote } = require(PKG + '/lib/remote');
const mode = process.argv[2] || '';
const control = mode === 'control';
(async () => {
  const h = await startHost({ tls: mode === 'tls', asNobody: mode === 'nobody' });
  const c = connectRemote(h.target);
  let bad = 0, runs = 0;
  const tally = {};
  const run = async (S, MB) => {
    const argv = control ? ['x'] : [...Array(10).fill('b'.repeat(100000)), 'a'.repeat(S - 1000000)];
    const ex = c.spawnIsolated(['sh', '-c', 'exec cat <&3 >&3', ...argv], { policy: c.readOnly() });
    ex.stderr.resume(); ex.protocol.resume();
    const x = counter(ex);
    for (let k = 0; k < MB; k++) x.w(1 << 20);
    x.p.end();
    runs++;
    return ex.wait().then((r) => { const m = missing(ex, x.st, r); if (m) { bad++; return 'missing ' + m; } return r.receipt.command?.argvTruncated ? 'cut' : 'full'; }, (e) => { bad++; return 'ERR ' + e.code + ' ' + e.message.slice(0, 120); });
  };
  try {
    let lo = 1000001, hi = 1048000;
    if (!control) {
      while (hi - lo > 1) { const m = (lo + hi) >> 1; const r = await run(m, 0); if (r === 'full') lo = m; else hi = m; if (r.startsWith('ERR')) console.log(m, r); }
      console.log('threshold with no fd-3 traffic: full up to', lo);
    }
    for (const MB of [0, 200]) for (let S = lo - 15; S <= lo + 2; S++) { const r = await run(S, control ? 1 : MB); const k = `${MB}MiB:${r.split(' ').slice(0, 2).join(' ')}`; tally[k] = (tally[k] || 0) + 1; if (r.startsWith('ERR') || r.startsWith('missing')) console.log(S, MB, r); }
  } finally { console.log('processes left', descendants(h.pid).length); await c.close(); await h.stop(); }
  console.log(JSON.stringify(tally), `runs ${runs}`);
  console.log(bad ? `FINDING: ${bad}/${runs} runs near the exit frame bound failed` : 'held');
})();
