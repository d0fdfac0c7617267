'use strict';
// R18b: settle times, local vs remote (docs/remote.md "same semantics"; stop ladder graceMs/forceMs): (1) a program
// that ignores SIGTERM, stop({graceMs: 200, forceMs: 500}) with protocol writes in flight: wait() must settle within
// grace + force + 1500 ms; (2) deadlineMs 300 on the same program: settle within 300 + grace + force + 1500 ms;
// (3) `true` with 1 MiB written: spawn-to-settle. Every run keeps the byte invariant. Median and max printed.
// Usage: node settle-times.js [reps] [local|remote|remote-tls|remote-nobody] [control]  (control: a program that obeys SIGTERM)
const { startHost, sleep, PKG, descendants, counter, missing } = require('./common');
const cordon = require(PKG);
const { connectRemote } = require(PKG + '/lib/remote');
const REPS = +(process.argv[2] || 10);
const where = process.argv[3] || 'remote';
const control = process.argv[4] === 'control';
const G = 200, F = 500;
(async () => {
  let h = null, c = null;
  if (where !== 'local') { h = await startHost({ tls: where === 'remote-tls', asNobody: where === 'remote-nobody' }); c = connectRemote(h.target); }
  const spawn = (argv, o) => (c ? c.spawnIsolated(['sh', ...argv], { policy: c.readOnly(), ...o }) : cordon.spawnIsolated(['/bin/sh', ...argv], { policy: cordon.readOnly(), ...o }));
  const prog = control ? 'exec sleep 30' : "trap '' TERM; while :; do sleep 0.05; done";
  const times = { stop: [], deadline: [], true: [] };
  let bad = 0, slow = 0;
  try {
    for (let i = 0; i < REPS; i++) {
      for (const kind of ['stop', 'deadline', 'true']) {
        const ex = spawn(kind === 'true' ? ['-c', 'exit 0'] : ['-c', prog], { stop: { graceMs: G, forceMs: F }, ...(kind === 'deadline' ? { deadlineMs: 300 } : {}) });
        ex.stderr.resume(); ex.protocol.resume();
        const x = counter(ex);
        const t0 = Date.now();
        for (let k = 0; k < 16; k++) x.w(65536);
        let t1 = t0;
        if (kind === 'stop') { await sleep(200); t1 = Date.now(); ex.stop(); }
        const r = await ex.wait();
        const ms = Date.now() - t1;
        times[kind].push(ms);
        const limit = kind === 'stop' ? G + F + 1500 : kind === 'deadline' ? 300 + G + F + 1500 : 3000;
        if (ms > limit) { slow++; console.log('SLOW', kind, ms, r.receipt.stop); }
        for (let k = 0; k < 200 && x.st.pending; k++) await sleep(5);
        if (missing(ex, x.st, r) !== 0 || x.st.pending) { bad++; console.log('BAD', kind, x.st, r.receipt.bytes, ex.protocolDroppedBytes); }
      }
    }
  } finally { if (h) { await sleep(200); console.log('processes left', descendants(h.pid).length); await c.close(); await h.stop(); } }
  const st = (a) => { const s = [...a].sort((p, q) => p - q); return `median ${s[s.length >> 1]} max ${s[s.length - 1]}`; };
  console.log(`${where}${control ? ' control' : ''}: stop→settle ${st(times.stop)} ms; deadline 300→settle ${st(times.deadline)}; true spawn→settle ${st(times.true)}`);
  console.log(slow || bad ? `FINDING: ${slow} slow settles, ${bad} invariant breaks of ${REPS * 3}` : 'held');
})();
