'use strict';
// R14w: the writer thread's new EAGAIN wait (crates/launcher/src/run/pumps.rs
// send_all -> wait_writable, poll(POLLOUT) with no timeout). A program that
// never reads fd 3 while the host writes 16 MiB: does stop() settle, and does
// the cordon-fd3-in thread go? Also: the program exits with writes pending,
// and the host half-closes (end()) with writes pending.
// Control: a program that reads fd 3.
const path = require('node:path');
const fs = require('node:fs');
const PKG = process.env.R14W_PKG || path.resolve(__dirname, '../../../..');
const { spawnIsolated, readOnly } = require(PKG);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const writers = () => fs.readdirSync('/proc/self/task').filter((t) => { try { return fs.readFileSync(`/proc/self/task/${t}/comm`, 'utf8').startsWith('cordon-fd3-in'); } catch { return false; } }).length;

async function one(name, argv, how) {
  const e = spawnIsolated(argv, { policy: readOnly() });
  e.stderr.resume(); e.protocol.resume();
  e.protocol.on('error', () => {});
  const mib = Buffer.alloc(1 << 20, 0x61);
  (async () => { for (let i = 0; i < 16; i++) { if (!e.protocol.write(mib)) await new Promise((r) => e.protocol.once('drain', r).once('close', r)); } if (how === 'end') e.protocol.end(); })().catch(() => {});
  await sleep(1000);
  const t0 = Date.now();
  if (how === 'stop' || how === 'end') e.stop();
  const r = await Promise.race([e.wait(), sleep(15000).then(() => null)]);
  const ms = Date.now() - t0;
  await sleep(500);
  const out = { name, settled: !!r, ms, rc: r?.returncode, signal: r?.signal, protocolIn: r?.receipt.bytes.protocolIn, discarded: r?.receipt.bytes.protocolInDiscarded, writerThreadsAfter: writers() };
  console.log(JSON.stringify(out));
  return out;
}

(async () => {
  const before = writers();
  const ctl = await one('control: reads fd 3, stop', ['/bin/sh', '-c', 'cat <&3 >/dev/null; sleep 30'], 'stop');
  const a = await one('never reads, stop', ['/bin/sleep', '30'], 'stop');
  const b = await one('never reads, exits at 2 s', ['/bin/sleep', '2'], 'wait');
  const c = await one('never reads, host end() then stop', ['/bin/sleep', '30'], 'end');
  const bad = [a, b, c].filter((x) => !x.settled || x.ms > 6000 || x.writerThreadsAfter > before);
  if (!ctl.settled) console.log('control failed');
  else if (bad.length) console.log(`FINDING: ${bad.map((x) => `${x.name}: settled ${x.settled} in ${x.ms} ms, writer threads left ${x.writerThreadsAfter}`).join('; ')}`);
  else console.log(`held (each settled: ${[a, b, c].map((x) => x.name + ' ' + x.ms + ' ms').join(', ')}; no writer thread left)`);
  process.exit(0);
})();
