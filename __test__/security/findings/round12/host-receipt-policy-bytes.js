'use strict';
// R11-1 variant: the kept receipt cuts argv to 4096 bytes, but other fields the tenant chooses are kept whole:
// policy.network.allow (up to 1024 entries of up to 253-byte names, each kept as an object).
// (policy.environment.allow is bounded: at most 256 names.) Bytes on disk per run under stateDir/receipts. Control: a short policy.
// Usage (root): node host-receipt-policy-bytes.js [runs=5]
const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { connectRemote } = require('../../../../lib/remote');
const RUNS = Number(process.argv[2] || 5);
const du = (p) => Number(execFileSync('du', ['-sb', p]).toString().split('\t')[0]);
(async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'r12-host-'));
  fs.mkdirSync(path.join(dir, 'run'), { mode: 0o700 });
  const sock = path.join(dir, 'run', 'host.sock');
  fs.writeFileSync(path.join(dir, 'host.json'), JSON.stringify({ listen: { unix: sock }, stateDir: path.join(dir, 'state'), allowUids: [0], programs: { true: '/bin/true' }, networkRelayPath: path.resolve(__dirname, '../../../../target/release/cordon-egress-relay') }));
  const host = spawn(process.execPath, [path.join(__dirname, '../../../../bin/cordon.js'), 'host', '--config', path.join(dir, 'host.json')], { stdio: ['ignore', 'ignore', 'pipe'] });
  host.stderr.resume();
  try {
    for (let i = 0; i < 100 && !fs.existsSync(sock); i++) await new Promise((r) => setTimeout(r, 100));
    const remote = connectRemote({ socket: sock });
    const base = remote.readOnly();
    const receipts = path.join(dir, 'state', 'receipts');
    const label = (i) => ('a' + i + '-').padEnd(62, 'x');
    const longName = (i) => [label(i), 'b'.repeat(62), 'c'.repeat(62), 'd'.repeat(61)].join('.'); // 250 bytes
    const measure = async (name, policy) => {
      fs.mkdirSync(receipts, { recursive: true });
      const before = du(receipts);
      let err = null, spawnBytes = 0; const t0 = Date.now();
      for (let i = 0; i < RUNS; i++) {
        try { await remote.spawnIsolated(['true'], { policy }).wait(); } catch (e) { err = e.code + ' ' + String(e.message).slice(0, 100); }
      }
      spawnBytes = JSON.stringify(policy).length;
      const per = Math.round((du(receipts) - before) / RUNS);
      console.log(`${name}: ${RUNS} runs in ${Date.now() - t0} ms; policy ${spawnBytes} B in the spawn frame; ${per} B of receipt per run on disk (× maxPerTenant 10000 = ${(per * 1e4 / 1e9).toFixed(2)} GB)${err ? '; error ' + err : ''}`);
      return per;
    };
    const ctl = await measure('control (readOnly, network none)', base);
    const net = await measure('probe (1024 allow entries of 250-byte names)', { ...base, network: { mode: 'mediated', allow: Array.from({ length: 1024 }, (_, i) => `${longName(i)}:443`) } });
    await remote.close();
    console.log(net > 20 * ctl ? 'FINDING: a tenant sets the size of every kept receipt through its policy' : 'held');
  } finally { host.kill('SIGTERM'); await new Promise((r) => host.once('exit', r)); fs.rmSync(dir, { recursive: true, force: true }); }
})().catch((e) => { console.error(e); process.exitCode = 1; });
