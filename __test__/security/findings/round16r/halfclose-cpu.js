'use strict';
// R16r: after 84dac55f a rest kept when the sandbox half-closes goes to the
// writer thread (blocking send_all + poll for POLLOUT). 4 sandboxes half-close
// fd 3 and never read, each with an 8 MiB write kept / handed on; and 4 that
// half-close then close fd 3 entirely (HUP) while still running. Provider CPU
// and event-loop delay over 3 s must match the idle control (sandboxes that
// only sleep): no spinning writer, poll or loop.
const path = require('node:path');
const { monitorEventLoopDelay } = require('node:perf_hooks');
const PKG = process.env.R14_PKG || path.resolve(__dirname, '../../../..');
const cordon = require(PKG);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const PROG = 'import os,socket,sys,time\nos.write(3,b"x")\nif sys.argv[1] != "idle":\n s=socket.socket(fileno=3);s.shutdown(socket.SHUT_WR);s.detach()\nif sys.argv[1] == "close":\n time.sleep(0.3); os.close(3)\ntime.sleep(5)\n';
async function measure(kind) {
  const runs = [];
  for (let i = 0; i < 4; i++) {
    const e = cordon.spawnIsolated(['/usr/bin/python3', '-c', PROG, kind], { policy: cordon.readOnly(), deadlineMs: 8000 });
    e.stderr.resume();
    e.protocol.on('error', () => {});
    let cb = false;
    e.protocol.once('data', () => { if (kind !== 'idle') { e.protocol.write(Buffer.alloc(8 << 20, 0x61), () => { cb = true; }); e.protocol.end(); } });
    e.protocol.resume();
    runs.push({ e, cb: () => cb });
  }
  await sleep(1000);
  const h = monitorEventLoopDelay({ resolution: 10 }); h.enable();
  const c0 = process.cpuUsage(); const t0 = Date.now();
  await sleep(3000);
  const c1 = process.cpuUsage(c0); const dt = (Date.now() - t0) / 1000; h.disable();
  const cbs = runs.filter((r) => r.cb()).length;
  await Promise.all(runs.map((r) => r.e.stop()));
  const rs = await Promise.all(runs.map((r) => r.e.wait().then((v) => v, (x) => ({ receipt: x.details?.receipt }))));
  const acct = rs.map((r) => (r.receipt?.bytes?.protocolIn ?? 0) + (r.receipt?.bytes?.protocolInDiscarded ?? 0));
  return { kind, cpuMsPerS: Math.round((c1.user + c1.system) / 1000 / dt), loopMaxMs: Math.round(h.max / 1e6), cbsBeforeStop: cbs, accounted: acct };
}
(async () => {
  const idle = await measure('idle');
  const half = await measure('half');
  const close = await measure('close');
  const s = `idle ${JSON.stringify(idle)}; half-closed, never reading ${JSON.stringify(half)}; half-closed then closed ${JSON.stringify(close)}`;
  const spin = [half, close].some((x) => x.cpuMsPerS > idle.cpuMsPerS + 50 || x.loopMaxMs > 200);
  const acctBad = [half, close].some((x) => x.accounted.some((a) => a !== 8 << 20));
  console.log(spin || acctBad ? `FINDING: ${s}` : `held (${s})`);
})();
