'use strict';
// R12-8 re-test: other fields of a remote spawn a tenant sizes — policy.environment.allow (≤ 256 names, but of what
// length?), options.env values, an upload of many long paths — and the bytes each kept receipt takes on disk.
// Control: a plain readOnly() run. Usage (root): node host-receipt-other-bytes.js [runs=3]
const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs'); const os = require('node:os'); const path = require('node:path');
const PKG = process.env.R13_PKG || path.join(__dirname, '../../../..');
const { connectRemote } = require(PKG + '/lib/remote');
const RUNS = Number(process.argv[2] || 3);
const du = (p) => Number(execFileSync('du', ['-sb', p]).toString().split('\t')[0]);
(async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'r13-host-'));
  fs.chmodSync(dir, 0o755); fs.mkdirSync(path.join(dir, 'run'), { mode: 0o700 });
  const sock = path.join(dir, 'run', 'host.sock');
  fs.writeFileSync(path.join(dir, 'host.json'), JSON.stringify({ listen: { unix: sock }, stateDir: path.join(dir, 'state'), allowUids: [process.getuid()], programs: { true: '/bin/true' } }));
  const host = spawn(process.execPath, [PKG + '/bin/cordon.js', 'host', '--config', path.join(dir, 'host.json')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = ''; host.stderr.on('data', (d) => { log += d; });
  const res = {};
  try {
    for (let i = 0; i < 100 && !fs.existsSync(sock); i++) await new Promise((r) => setTimeout(r, 100));
    const remote = connectRemote({ socket: sock });
    const base = remote.readOnly();
    const receipts = path.join(dir, 'state', 'receipts');
    const measure = async (name, mk) => {
      fs.mkdirSync(receipts, { recursive: true });
      const before = du(receipts); let err = null; const t0 = Date.now();
      for (let i = 0; i < RUNS; i++) {
        try { const [argv, o] = mk(); await remote.spawnIsolated(argv, o).wait(); } catch (e) { err = e.code + ' ' + String(e.message).slice(0, 160); }
      }
      const per = Math.round((du(receipts) - before) / RUNS);
      console.log(`${name}: ${RUNS} runs in ${Date.now() - t0} ms; ${per} B of receipt per run${err ? '; error ' + err : ''}`);
      res[name] = err ? null : per; return per;
    };
    await measure('control', () => [['true'], { policy: base }]);
    const names = Array.from({ length: 256 }, (_, i) => ('E' + i + '_').padEnd(3000, 'X'));
    await measure('env allow 256 × 3000 B names', () => [['true'], { policy: { ...base, environment: { allow: names } } }]);
    await measure('env allow + env values 256 × (3000 + 900) B', () => [['true'], { policy: { ...base, environment: { allow: names } }, env: Object.fromEntries(names.map((n) => [n, 'v'.repeat(900)])) }]);
    const files = {}; for (let i = 0; i < 2000; i++) files[('d' + i).padEnd(200, 'y') + '/' + 'f'.repeat(200)] = 'x';
    await measure('uploads 2000 files, 400-byte paths', () => [['true'], { policy: base, workspace: { files } }]);
    await measure('invocationId 128 chars', () => [['true'], { policy: base, invocationId: 'i'.repeat(100) + Math.random().toString(36).slice(2, 14) }]);
    await remote.close();
  } finally { host.kill('SIGTERM'); await new Promise((r) => host.once('exit', r)); fs.rmSync(dir, { recursive: true, force: true }); }
  const c = res.control; const big = Object.entries(res).filter(([k, v]) => k !== 'control' && v && v > 20 * c);
  console.log(!c ? 'control failed' : big.length ? `FINDING: kept receipts sized by the tenant: ${big.map(([k, v]) => k + ' ' + v + ' B').join('; ')}` : 'held');
})().catch((e) => { console.error(e); process.exitCode = 1; });
