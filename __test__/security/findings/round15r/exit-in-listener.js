'use strict';
// R15r: process.exit(7) called synchronously inside a pulled protocol 'data'
// listener (i.e. inside napi_make_callback from the poll callback), while 3
// sandboxes flood fd 3 and one has a write rest kept; also inside the
// Writable-driven write callback. 10 tries each: exit status must be 7 (no
// crash/abort at exit), no sandbox may outlive the provider. Also in a worker
// (process.exit there ends the worker): the parent must survive. Control: the
// same provider calling process.exit(7) from a timer.
const path = require('node:path');
const fs = require('node:fs');
const { spawnSync } = require('node:child_process');
const PKG = process.env.R14_PKG || path.resolve(__dirname, '../../../..');
const body = (where) => `
const cordon = require(${JSON.stringify(PKG)});
const exs = [];
for (let i = 0; i < 3; i++) { const e = cordon.spawnIsolated(['/bin/sh', '-c', 'exec cat /dev/zero >&3'], { policy: cordon.readOnly() }); e.stderr.resume(); exs.push(e); }
let n = 0;
if (${JSON.stringify(where)} === 'timer') { exs[0].protocol.resume(); setTimeout(() => process.exit(7), 300); }
else if (${JSON.stringify(where)} === 'data') exs[0].protocol.on('data', () => { if (++n === 40) process.exit(7); });
else if (${JSON.stringify(where)} === 'write-cb') {
  const w = cordon.spawnIsolated(['/bin/sh', '-c', 'sleep 0.3; exec cat <&3 >/dev/null'], { policy: cordon.readOnly() });
  w.stderr.resume(); w.protocol.resume();
  w.protocol.write(Buffer.alloc(4 << 20), () => process.exit(7));
  exs[0].protocol.resume();
}
else if (${JSON.stringify(where)} === 'worker') {
  const { Worker } = require('node:worker_threads');
  const wk = new Worker(\`const cordon = require(${JSON.stringify(PKG)}); const e = cordon.spawnIsolated(['/bin/sh', '-c', 'exec cat /dev/zero >&3'], { policy: cordon.readOnly() }); e.stderr.resume(); let n = 0; e.protocol.on('data', () => { if (++n === 40) process.exit(3); });\`, { eval: true });
  wk.on('exit', (c) => { console.log('worker exit ' + c); for (const e of exs) e.stop(); Promise.all(exs.map((e) => e.wait().catch(() => {}))).then(() => process.exit(7)); });
  exs[0].protocol.resume();
}
`;
function bwraps() { let n = 0; for (const p of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) { try { if (fs.readFileSync(`/proc/${p}/comm`, 'utf8').trim() === 'bwrap') n++; } catch {} } return n; }
const before = bwraps();
const rows = []; let bad = false;
for (const where of ['timer', 'data', 'write-cb', 'worker']) {
  const codes = {};
  for (let i = 0; i < 10; i++) {
    const r = spawnSync(process.execPath, ['-e', body(where)], { encoding: 'utf8', timeout: 30000 });
    const k = r.signal ? `sig ${r.signal}` : String(r.status);
    codes[k] = (codes[k] || 0) + 1;
    if (r.status !== 7) { bad = true; rows.push(`${where} stderr: ${r.stderr.slice(-300)}`); }
  }
  spawnSync('sleep', ['1']);
  rows.push(`${where}: exits ${JSON.stringify(codes)} bwraps(all on host) ${bwraps() - before}`);
}
spawnSync('sleep', ['2']);
const left = bwraps() - before;
if (left > 0) bad = true;
console.log(bad ? `FINDING: ${rows.join('; ')}; bwraps left ${left}` : `held (${rows.join('; ')}; bwraps left ${left})`);
