'use strict';
// Remote host: one tenant starts 4 runs at once with the SAME invocationId (a client-chosen field), each with
// its own upload. Do all run with their own files, does the host keep 4 receipts (receipts(id) → 4, newest first),
// and is runs/ empty after? Control: 4 runs with distinct ids. Usage (root): node host-same-invocation.js
const { spawn } = require('node:child_process');
const fs = require('node:fs'); const os = require('node:os'); const path = require('node:path');
const PKG = process.env.R13_PKG || path.join(__dirname, '../../../..');
const { connectRemote } = require(PKG + '/lib/remote');
(async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'r13-hostid-')); fs.chmodSync(dir, 0o755);
  fs.mkdirSync(path.join(dir, 'run'), { mode: 0o700 });
  const sock = path.join(dir, 'run', 'host.sock'); const state = path.join(dir, 'state');
  fs.writeFileSync(path.join(dir, 'host.json'), JSON.stringify({ listen: { unix: sock }, stateDir: state, allowUids: [0], programs: { sh: '/bin/sh' } }));
  const host = spawn(process.execPath, [PKG + '/bin/cordon.js', 'host', '--config', path.join(dir, 'host.json')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = ''; host.stderr.on('data', (d) => { log += d; });
  const res = {};
  try {
    for (let i = 0; i < 100 && !fs.existsSync(sock); i++) await new Promise((r) => setTimeout(r, 100));
    const remote = connectRemote({ socket: sock });
    for (const [k, same] of [['control', false], ['probe', true]]) {
      const ids = [0, 1, 2, 3].map((i) => same ? `r13-same-${k}` : `r13-${k}-${i}`);
      const outs = await Promise.all(ids.map((id, i) => { const x = remote.spawnIsolated(['sh', '-c', 'sleep 0.5; cat /workspace/f'], { policy: remote.readOnly(), invocationId: id, workspace: { files: { f: `run-${i}` } } }); let e = ''; x.stderr.on('data', (d) => { e += d; }); return x.wait().then((r) => `rc ${r.returncode} ${e.trim()} receipt ${r.receipt?.invocationId}`, (er) => er.code + ' ' + String(er.message).slice(0, 100)); }));
      let got = 0; for (const id of new Set(ids)) { try { got += (await remote.receipts(id)).length; } catch (e) { got = e.code; } }
      const runsLeft = fs.existsSync(state + '/runs') ? fs.readdirSync(state + '/runs').length : 0;
      res[k] = { outs, got, runsLeft };
      console.log(`${k}: ${outs.join(' | ')}; receipts found ${got}; runs/ left ${runsLeft}`);
    }
    await remote.close();
  } finally { host.kill('SIGTERM'); await new Promise((r) => host.once('exit', r)); fs.rmSync(dir, { recursive: true, force: true }); }
  const ok = (r) => r.outs.every((o, i) => o.startsWith('rc 0 run-' + i)) && r.got === 4 && r.runsLeft === 0;
  console.log(!ok(res.control) ? 'control failed' : ok(res.probe) ? 'held' : 'FINDING: runs sharing an invocationId interfere (outputs, receipts or markers above)');
})().catch((e) => { console.error(e); process.exitCode = 1; });
