'use strict';
// Remote host with `tokens`: does a presented token (right or wrong) ever reach the host's log, the tenant's
// receipt or an error message? Control: the right token runs. Usage (root): node host-token-log.js
const { spawn } = require('node:child_process'); const crypto = require('node:crypto');
const fs = require('node:fs'); const os = require('node:os'); const path = require('node:path');
const PKG = process.env.R13_PKG || path.join(__dirname, '../../../..');
const { connectRemote } = require(PKG + '/lib/remote');
(async () => {
  const good = 'GoodTok-' + crypto.randomBytes(12).toString('hex'); const bad = 'BadTok-' + crypto.randomBytes(12).toString('hex');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'r13-hosttok-')); fs.chmodSync(dir, 0o755);
  fs.mkdirSync(path.join(dir, 'run'), { mode: 0o700 });
  const sock = path.join(dir, 'run', 'host.sock'); const state = path.join(dir, 'state');
  fs.writeFileSync(path.join(dir, 'host.json'), JSON.stringify({ listen: { unix: sock }, stateDir: state, allowUids: [0], programs: { sh: '/bin/sh' }, tokens: { [crypto.createHash('sha256').update(good).digest('hex')]: 'tenant-a' } }));
  const host = spawn(process.execPath, [PKG + '/bin/cordon.js', 'host', '--config', path.join(dir, 'host.json')], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = ''; host.stderr.on('data', (d) => { log += d; }); host.stdout.on('data', (d) => { log += d; });
  let ctl, errs = '', receipts = '';
  try {
    for (let i = 0; i < 100 && !fs.existsSync(sock); i++) await new Promise((r) => setTimeout(r, 100));
    const ra = connectRemote({ socket: sock, token: good });
    const r = await ra.spawnIsolated(['sh', '-c', 'true'], { policy: ra.readOnly() }).wait(); ctl = r.returncode; receipts += JSON.stringify(r.receipt);
    await ra.close();
    for (const t of [bad, 'x'.repeat(4096 - bad.length) + bad]) {
      const rb = connectRemote({ socket: sock, token: t });
      try { await rb.spawnIsolated(['sh', '-c', 'true'], { policy: rb.readOnly() }).wait(); } catch (e) { errs += e.code + ' ' + e.message + '\n'; }
      await rb.close().catch(() => {});
    }
    await new Promise((r) => setTimeout(r, 300));
  } finally { host.kill('SIGTERM'); await new Promise((r) => host.once('exit', r)); }
  const onDisk = require('node:child_process').execSync(`grep -rl -e ${good} -e ${bad} ${state} || true`).toString().trim();
  fs.rmSync(dir, { recursive: true, force: true });
  const where = [['log', log], ['errors', errs], ['receipt', receipts], ['stateDir', onDisk]].filter(([, v]) => v.includes(good) || v.includes(bad) || (v === onDisk && v)).map(([k]) => k);
  console.log(`control rc ${ctl}; errors: ${errs.split('\n')[0].slice(0, 120)}; log lines ${log.split('\n').length}`);
  console.log(ctl !== 0 ? 'control failed' : where.length ? `FINDING: a token appears in ${where.join(', ')}` : 'held');
})().catch((e) => { console.error(e); process.exitCode = 1; });
