'use strict';
// R16r: protocol.destroy() (or any error that destroys the Duplex, e.g. a
// write after end()) tells the native side nothing: ProtocolStream has no
// _destroy (lib/isolated-execution.js; the same on main). fd 3 is neither
// shut down nor closed, so a sandbox waiting for its input's EOF waits until
// its deadline, and a rest kept for fd 3's writability (or queued for the
// writer) is still written after the destroy. Control: end() instead.
// A net.Socket's destroy() closes the descriptor (the peer sees EOF/EPIPE).
const path = require('node:path');
const PKG = process.env.R14_PKG || path.resolve(__dirname, '../../../..');
const cordon = require(PKG);
const PROG = 'import os,time\nos.write(3,b"x")\nt=time.time();n=0\nwhile True:\n b=os.read(3,65536)\n if not b: break\n n+=len(b)\n time.sleep(0.002)\nos.write(2,b"got %d eof after %.2f s" % (n, time.time()-t))\n';
async function one(how) {
  const e = cordon.spawnIsolated(['/usr/bin/python3', '-c', PROG], { policy: cordon.readOnly(), deadlineMs: 6000 });
  let err = ''; e.stderr.on('data', (d) => { err += d; });
  e.protocol.on('error', () => {});
  let entered = 0; const o = e.protocol._write;
  e.protocol._write = function (c, enc, k) { entered += c.length; return o.call(this, c, enc, k); };
  let atDestroy = null;
  e.protocol.once('data', () => {
    e.protocol.write(Buffer.alloc(2 << 20, 0x61));
    if (how === 'end') e.protocol.end();
    else setTimeout(() => { atDestroy = entered; e.protocol.destroy(); }, 30);
  });
  e.protocol.resume();
  const t0 = Date.now();
  const r = await e.wait().then((v) => v, (x) => ({ err: x.code, receipt: x.details?.receipt }));
  return { how, runMs: Date.now() - t0, rc: r.returncode ?? r.err, sandbox: err.trim() || '(no EOF: killed)', enteredAtDestroy: atDestroy, protocolIn: r.receipt?.bytes?.protocolIn };
}
(async () => {
  const c = await one('end');
  const d = await one('destroy');
  const s = `control end(): ${JSON.stringify(c)}; destroy(): ${JSON.stringify(d)}`;
  console.log(c.runMs < 3000 && d.runMs > 5000 ? `FINDING: ${s}` : `held (${s})`);
})();
