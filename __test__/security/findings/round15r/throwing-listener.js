'use strict';
// R15r: a 'data' listener on the pulled protocol stream throws once (the provider
// has an uncaughtException handler, as servers do). Does the stream keep
// delivering the sandbox's later frames (as net.Socket does), or stall with the
// sandbox blocked and the run unsettled? Control: the same listener on a
// net.Socket over a socketpair-like pipe (a child process's stdio).
const path = require('node:path');
const { spawn } = require('node:child_process');
const PKG = process.env.R14_PKG || path.resolve(__dirname, '../../../..');
const cordon = require(PKG);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const within = (p, ms) => Promise.race([p.then(() => true, () => true), sleep(ms).then(() => false)]);
const thrown = [];
process.on('uncaughtException', (e) => { thrown.push(e.message); if (!/boom/.test(e.message)) console.error(e); });

const PROG = 'import os,time\nfor i in range(20):\n  os.write(FD, b"frame%02d;" % i); time.sleep(0.05)\n';

async function cordonCase() {
  const ex = cordon.spawnIsolated(['/usr/bin/python3', '-c', PROG.replace('FD', '3')], { policy: cordon.readOnly(), deadlineMs: 8000 });
  ex.stderr.resume();
  let got = ''; let first = true;
  ex.protocol.on('data', (c) => { got += c; if (first) { first = false; throw new Error('listener boom'); } });
  const settled = await within(ex.wait(), 5000);
  if (!settled) await ex.stop();
  const r = await ex.wait().catch((e) => ({ err: e.code }));
  return { frames: (got.match(/frame/g) || []).length, settledIn5s: settled, protocolOut: r.receipt?.bytes?.protocolOut, stopReason: r.receipt?.stopReason ?? r.err };
}
async function controlCase() {
  const ch = spawn('/usr/bin/python3', ['-c', PROG.replace('FD', '1')], { stdio: ['ignore', 'pipe', 'inherit'] });
  let got = ''; let first = true;
  ch.stdout.on('data', (c) => { got += c; if (first) { first = false; throw new Error('control boom'); } });
  const done = new Promise((r) => ch.on('close', r));
  const settled = await within(done, 5000);
  if (!settled) ch.kill('SIGKILL');
  return { frames: (got.match(/frame/g) || []).length, settledIn5s: settled };
}
(async () => {
  const control = await controlCase();
  const c = await cordonCase();
  const s = `control (child stdout, net.Socket-like pipe): ${JSON.stringify(control)}; cordon protocol: ${JSON.stringify(c)}; uncaught: ${JSON.stringify(thrown)}`;
  console.log(c.frames < 20 || !c.settledIn5s ? `FINDING: ${s}` : `held (${s})`);
})();
