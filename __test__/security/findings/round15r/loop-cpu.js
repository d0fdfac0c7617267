'use strict';
// R15r: can a sandbox make the provider's loop spin or stall through the pulled
// reader? Each case runs 4 sandboxes for 4 s and measures the provider's CPU
// (user+sys ms per wall second), event-loop delay (p99/max) and RSS growth.
//  idle-control: 4 sandboxes that only sleep (the baseline).
//  paused: sandboxes flood fd 3, the provider never reads (stream paused after
//          the first chunk) -> expected ~0 CPU (poll stopped, backpressure).
//  kept-rest: the provider writes 16 MiB each, the sandbox never reads fd 3 and
//          keeps writing -> a writable watch waits; expected ~0 CPU.
//  flowing: floods, provider consumes -> the cost of a flood (bounded delay).
//  oob: 64 KiB writes each followed by a MSG_OOB byte (the OOB mark stops a
//          read short of what FIONREAD counted). Passing descriptors to make
//          reads stop at every message is refused in the sandbox (sendmsg with
//          SCM_RIGHTS: EPERM), so this is the only boundary game left.
//  pipe-control: 4 child processes flooding stdout pipes (net.Socket-like).
const path = require('node:path');
const { monitorEventLoopDelay } = require('node:perf_hooks');
const { spawn } = require('node:child_process');
const PKG = process.env.R14_PKG || path.resolve(__dirname, '../../../..');
const cordon = require(PKG);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const OOB_FLOOD = `
import socket
s = socket.socket(fileno=3)
big = b'z' * 65536
while True:
    s.sendall(big)
    s.send(b'!', socket.MSG_OOB)
`;
const cases = {
  'idle-control': () => ['/bin/sleep', '30'],
  paused: () => ['/bin/sh', '-c', 'exec cat /dev/zero >&3'],
  'kept-rest': () => ['/bin/sh', '-c', 'exec cat /dev/zero >&3'],
  flowing: () => ['/bin/sh', '-c', 'exec cat /dev/zero >&3'],
  'oob': () => ['/usr/bin/python3', '-c', OOB_FLOOD],
};
async function measure(name) {
  const exs = []; const kids = []; let bytes = 0;
  if (name === 'pipe-control') {
    for (let i = 0; i < 4; i++) { const k = spawn('/bin/sh', ['-c', 'exec cat /dev/zero'], { stdio: ['ignore', 'pipe', 'ignore'] }); k.stdout.on('data', (c) => { bytes += c.length; }); kids.push(k); }
  } else {
    for (let i = 0; i < 4; i++) {
      const e = cordon.spawnIsolated(cases[name](), { policy: cordon.readOnly(), deadlineMs: 30000 });
      e.stderr.resume();
      if (name === 'paused') e.protocol.once('data', () => e.protocol.pause());
      else if (name === 'kept-rest') { e.protocol.once('data', () => { e.protocol.pause(); e.protocol.write(Buffer.alloc(16 << 20)); }); }
      else e.protocol.on('data', (c) => { bytes += c.length; });
      exs.push(e);
    }
  }
  await sleep(800);
  global.gc?.();
  const rss0 = process.memoryUsage().rss;
  const h = monitorEventLoopDelay({ resolution: 5 }); h.enable();
  const c0 = process.cpuUsage(); const t0 = Date.now(); const b0 = bytes;
  await sleep(4000);
  const cpu = process.cpuUsage(c0); const wall = Date.now() - t0; h.disable();
  const row = { name, cpuMsPerS: Math.round((cpu.user + cpu.system) / 1000 / (wall / 1000)), p99: Math.round(h.percentile(99) / 1e6), max: Math.round(h.max / 1e6), MiBps: Math.round((bytes - b0) / 1048576 / (wall / 1000)), rssMiB: Math.round((process.memoryUsage().rss - rss0) / 1048576) };
  for (const e of exs) e.stop();
  for (const e of exs) await e.wait().catch(() => {});
  for (const k of kids) k.kill('SIGKILL');
  await sleep(300);
  return row;
}
(async () => {
  const rows = [];
  for (const name of ['idle-control', 'paused', 'kept-rest', 'flowing', 'oob', 'pipe-control']) rows.push(await measure(name));
  const by = Object.fromEntries(rows.map((r) => [r.name, r]));
  const spin = ['paused', 'kept-rest'].filter((n) => by[n].cpuMsPerS > by['idle-control'].cpuMsPerS + 100);
  const stall = rows.filter((r) => r.max > 200);
  const s = rows.map((r) => JSON.stringify(r)).join('; ');
  console.log(spin.length || stall.length ? `FINDING: spin ${spin} stall ${stall.map((r) => r.name)}: ${s}` : `held (${s})`);
})();
