'use strict';
// R18b: docs/errors.md: "protocol.destroy() half-closes fd 3 as end() does: the program reads EOF after what the
// writer already holds" (R16r-1: before, a program reading to EOF ran to its deadline). docs/remote.md: a remote
// run has the "same semantics as a local run". Here a program reads fd 3 to EOF (`cat <&3`), the client writes
// 10 bytes, waits for them to be read, then calls protocol.destroy(). Local: the run ends at once. Remote: ?
// Usage: node remote-destroy-eof.js [reps] [control|tls|nobody|endwrite] [endwrite]   (control: protocol.end() instead
// of destroy(); endwrite: end() with 4 MiB still buffered, then a write after end, which destroys the stream;
// `node remote-destroy-eof.js 1 [control] slot`: a host with maxSessions 1 and a deadline ceiling of 8 s)
const { startHost, PKG, sleep, descendants } = require('./common');
const cordon = require(PKG);
const { connectRemote } = require(PKG + '/lib/remote');
const REPS = +(process.argv[2] || 3);
const mode = process.argv[3] || '';
const control = mode === 'control';
const variant = process.argv[4] || (mode === 'endwrite' ? 'endwrite' : 'destroy');
const DEADLINE = 6000;
async function one(spawn, readOnly, label) {
  const ex = spawn(['sh', '-c', 'exec cat <&3 >/dev/null'], { policy: readOnly(), deadlineMs: DEADLINE });
  ex.stderr.resume(); ex.protocol.on('error', () => {}); ex.protocol.resume();
  await new Promise((r) => ex.protocol.write(Buffer.from('0123456789'), r));
  await sleep(300);
  const t0 = Date.now();
  if (control) ex.protocol.end();
  else if (variant === 'endwrite') {
    // end() while a write is still buffered, then one more write: Node destroys the stream with
    // ERR_STREAM_WRITE_AFTER_END before the end is flushed (autoDestroy)
    ex.protocol.write(Buffer.alloc(4 << 20, 1), () => {}); ex.protocol.end(); ex.protocol.write(Buffer.from('x'), () => {});
  } else ex.protocol.destroy();
  const r = await ex.wait();
  return { label, ms: Date.now() - t0, stop: r.receipt.stop?.reason ?? null, in: r.receipt.bytes.protocolIn, rc: r.returncode };
}
async function slot() {
  // the consequence on a host with admission.maxSessions 1 and no client deadline: the destroyed run keeps the slot
  const h = await startHost({ config: { admission: { maxSessions: 1, retryAfterMs: 100 }, ceilings: { deadlineMs: 8000 } } });
  const c = connectRemote(h.target);
  try {
    const ex = c.spawnIsolated(['sh', '-c', 'exec cat <&3 >/dev/null'], { policy: c.readOnly() });
    ex.stderr.resume(); ex.protocol.on('error', () => {}); ex.protocol.resume();
    await new Promise((r) => ex.protocol.write(Buffer.from('x'), r));
    await sleep(200);
    const t0 = Date.now();
    if (control) ex.protocol.end(); else ex.protocol.destroy();
    await sleep(1000);
    const next = c.spawnIsolated(['true'], { policy: c.readOnly() }); next.stderr.resume(); next.protocol.resume();
    const n = await next.wait().then(() => 'ran', (e) => e.code);
    const r = await ex.wait();
    console.log(JSON.stringify({ nextRunOneSecondLater: n, destroyedRunSettledAfterMs: Date.now() - t0, stop: r.receipt.stop?.reason ?? null }));
    return n !== 'ran';
  } finally { await c.close(); await h.stop(); }
}
(async () => {
  if (process.argv.includes('slot')) { const b = await slot(); console.log(b ? 'FINDING: after protocol.destroy() the run kept the host\'s only session slot until the 8000 ms deadline ceiling: the next run was refused' : 'held'); return; }
  const h = await startHost({ tls: [mode, variant].includes('tls'), asNobody: [mode, variant].includes('nobody') });
  const c = connectRemote(h.target);
  const local = (cmd, o) => cordon.spawnIsolated(['/bin/sh', ...cmd.slice(1)], o);
  let bad = 0;
  try {
    for (let i = 0; i < REPS; i++) {
      const l = await one(local, cordon.readOnly, 'local');
      const r = await one((cmd, o) => c.spawnIsolated(cmd, o), c.readOnly, 'remote');
      console.log(JSON.stringify(l), JSON.stringify(r));
      if (r.ms > 2000 && l.ms < 2000) bad++;
    }
    await sleep(200);
    console.log('processes left below host', descendants(h.pid).length);
  } finally { await c.close(); await h.stop(); }
  console.log(bad ? `FINDING: ${bad}/${REPS} remote runs: protocol.destroy() did not half-close fd 3; a program reading to EOF ran until the ${DEADLINE} ms deadline (local ends at once)` : 'held');
})();
