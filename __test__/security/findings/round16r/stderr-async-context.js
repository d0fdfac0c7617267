'use strict';
// R16r: AsyncLocalStorage in the listeners of a run's streams. After
// 3d1bcab2 the pulled protocol listener runs in the spawner's context (R15r-3
// held). `stderr` (and the other events: WriteDone callbacks, 'end', wait())
// come through the run's threadsafe function. Which store does a stderr
// 'data' listener see? Control: a child process's stderr pipe.
const path = require('node:path');
const { spawn } = require('node:child_process');
const { AsyncLocalStorage } = require('node:async_hooks');
const PKG = process.env.R14_PKG || path.resolve(__dirname, '../../../..');
const cordon = require(PKG);
const als = new AsyncLocalStorage();
function cordonRun() {
  return new Promise((resolve) => {
    als.run('r1', () => {
      const e = cordon.spawnIsolated(['/bin/sh', '-c', 'echo p >&3; echo e >&2; sleep 0.1'], { policy: cordon.readOnly() });
      const seen = {};
      e.protocol.once('data', () => { seen.protocolData = als.getStore() ?? null; });
      e.stderr.once('data', () => { seen.stderrData = als.getStore() ?? null; });
      e.protocol.on('end', () => { seen.protocolEnd = als.getStore() ?? null; });
      e.stderr.on('end', () => { seen.stderrEnd = als.getStore() ?? null; });
      e.protocol.write(Buffer.alloc(10), () => { seen.writeCb = als.getStore() ?? null; });
      e.protocol.resume(); e.stderr.resume();
      e.wait().then(() => { seen.wait = als.getStore() ?? null; setTimeout(() => resolve(seen), 50); });
    });
  });
}
function childRun() {
  return new Promise((resolve) => {
    als.run('r1', () => {
      const c = spawn('/bin/sh', ['-c', 'echo e >&2']);
      const seen = {};
      c.stderr.once('data', () => { seen.stderrData = als.getStore() ?? null; });
      c.on('close', () => { seen.close = als.getStore() ?? null; resolve(seen); });
    });
  });
}
(async () => {
  const child = await childRun();
  const run = await cordonRun();
  const lost = Object.entries(run).filter(([, v]) => v !== 'r1').map(([k]) => k);
  const s = `node ${process.version}: child pipe ${JSON.stringify(child)}; cordon ${JSON.stringify(run)}`;
  console.log(child.stderrData === 'r1' && lost.length ? `FINDING: store lost in ${lost.join(', ')}: ${s}` : `held (${s})`);
})();
