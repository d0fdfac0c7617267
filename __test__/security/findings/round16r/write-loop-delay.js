'use strict';
// R16r: event-loop delay on the write path. A write goes straight to fd 3 from
// the JS thread (DirectWrite::send loops MSG_DONTWAIT sends until EAGAIN), so
// a sandbox that drains fd 3 as fast as it can keeps the JS thread in one
// writeSome for as long as it keeps up. 4 sandboxes `cat <&3 >/dev/null`, each
// given 64 MiB in one write (+ end()); loop delay max/p99 and provider CPU vs
// the control: 4 child processes `cat >/dev/null` given the same writes on stdin.
const path = require('node:path');
const { spawn } = require('node:child_process');
const { monitorEventLoopDelay } = require('node:perf_hooks');
const PKG = process.env.R14_PKG || path.resolve(__dirname, '../../../..');
const cordon = require(PKG);
const SIZE = 64 << 20;
const buf = Buffer.alloc(SIZE, 0x61);
async function measure(kind) {
  const h = monitorEventLoopDelay({ resolution: 5 });
  const c0 = process.cpuUsage(); const t0 = Date.now();
  h.enable();
  const done = [];
  for (let i = 0; i < 4; i++) {
    if (kind === 'cordon') {
      const e = cordon.spawnIsolated(['/bin/sh', '-c', 'cat <&3 >/dev/null'], { policy: cordon.readOnly(), deadlineMs: 30000 });
      e.stderr.resume(); e.protocol.resume();
      e.protocol.write(buf); e.protocol.end();
      done.push(e.wait().then((r) => r.receipt.bytes.protocolIn));
    } else {
      const c = spawn('/bin/sh', ['-c', 'cat >/dev/null'], { stdio: ['pipe', 'ignore', 'ignore'] });
      c.stdin.write(buf); c.stdin.end();
      done.push(new Promise((r) => c.on('close', () => r(SIZE))));
    }
  }
  const got = await Promise.all(done);
  h.disable();
  const ms = Date.now() - t0; const cpu = process.cpuUsage(c0);
  return { kind, ms, cpuMs: Math.round((cpu.user + cpu.system) / 1000), loopMaxMs: Math.round(h.max / 1e6), loopP99Ms: Math.round(h.percentile(99) / 1e6), ok: got.every((g) => g === SIZE) };
}
(async () => {
  await measure('cordon');
  const ctl = await measure('pipe');
  const cor = await measure('cordon');
  const ctl2 = await measure('pipe');
  const s = `control ${JSON.stringify(ctl)} ${JSON.stringify(ctl2)}; cordon ${JSON.stringify(cor)}`;
  const worst = Math.max(ctl.loopMaxMs, ctl2.loopMaxMs);
  console.log(!cor.ok || cor.loopMaxMs > Math.max(100, worst * 4) ? `FINDING: ${s}` : `held (${s})`);
})();
