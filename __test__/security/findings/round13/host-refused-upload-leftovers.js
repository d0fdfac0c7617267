'use strict';
// Remote host: does a session refused after its uploads (unknown program, invalid policy, admission full, an upload
// refused midway, the client closing before spawn) leave its ws-* directory (and files) in stateDir/workspaces?
// docs/remote.md: the session's directory is "removed at its end". Control: a run that ran.
// Usage (root): node host-refused-upload-leftovers.js
const { spawn } = require('node:child_process');
const fs = require('node:fs'); const os = require('node:os'); const path = require('node:path'); const net = require('node:net');
const PKG = process.env.R13_PKG || path.join(__dirname, '../../../..');
const { connectRemote } = require(PKG + '/lib/remote');
const du = (d) => { let n = 0, b = 0; const walk = (p) => { for (const e of fs.readdirSync(p, { withFileTypes: true })) { const q = path.join(p, e.name); n++; if (e.isDirectory()) walk(q); else b += fs.statSync(q).size; } }; if (fs.existsSync(d)) walk(d); return `${n} entries, ${b} B`; };
(async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'r13-hostrf-')); fs.chmodSync(dir, 0o755);
  fs.mkdirSync(path.join(dir, 'run'), { mode: 0o700 });
  const sock = path.join(dir, 'run', 'host.sock'); const state = path.join(dir, 'state'); const ws = path.join(state, 'workspaces');
  fs.writeFileSync(path.join(dir, 'host.json'), JSON.stringify({ listen: { unix: sock }, stateDir: state, allowUids: [0], programs: { sh: '/bin/sh' }, admission: { maxSessions: 1 } }));
  const host = spawn(process.execPath, [PKG + '/bin/cordon.js', 'host', '--config', path.join(dir, 'host.json')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = ''; host.stderr.on('data', (d) => { log += d; });
  const res = {};
  try {
    for (let i = 0; i < 100 && !fs.existsSync(sock); i++) await new Promise((r) => setTimeout(r, 100));
    const remote = connectRemote({ socket: sock });
    const files = {}; for (let i = 0; i < 200; i++) files[`d/f${i}`] = 'x'.repeat(10000);
    const tryRun = async (name, argv, opts) => {
      let out;
      try { const r = await remote.spawnIsolated(argv, { policy: remote.readOnly(), workspace: { files }, ...opts }).wait(); out = 'rc ' + r.returncode; } catch (e) { out = e.code; }
      await new Promise((r) => setTimeout(r, 300));
      res[name] = du(ws); console.log(`${name}: ${out}; workspaces/: ${res[name]}`);
    };
    await tryRun('control (ran)', ['sh', '-c', 'ls /workspace/d | wc -l']);
    await tryRun('unknown program', ['nosuch'], {});
    await tryRun('policy invalid (fileSizeBytes 0)', ['sh', '-c', 'true'], { policy: { ...remote.readOnly(), resources: { ...(remote.readOnly().resources || {}), fileSizeBytes: 0 } } });
    await tryRun('unknown option', ['sh', '-c', 'true'], { bogusOption: 1 });
    // admission: hold the only slot with a sleeping run, then try another with uploads
    const hold = remote.spawnIsolated(['sh', '-c', 'sleep 3'], { policy: remote.readOnly() });
    await new Promise((r) => setTimeout(r, 700));
    await tryRun('admission full', ['sh', '-c', 'true']);
    await hold.wait().catch(() => {});
    // abort while uploading
    const ac = new AbortController(); const big = {}; for (let i = 0; i < 3000; i++) big[`e/g${i}`] = 'y'.repeat(5000);
    const p = remote.spawnIsolated(['sh', '-c', 'sleep 5'], { policy: remote.readOnly(), workspace: { files: big }, signal: ac.signal });
    setTimeout(() => ac.abort(), 60);
    let o; try { o = 'rc ' + (await p.wait()).returncode; } catch (e) { o = e.code; }
    await new Promise((r) => setTimeout(r, 1500));
    res.abort = du(ws); console.log(`aborted during uploads: ${o}; workspaces/: ${res.abort}`);
    await remote.close();
  } finally {
    host.kill('SIGTERM'); await new Promise((r) => host.once('exit', r));
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const left = Object.entries(res).filter(([k, v]) => !/^0 entries/.test(v));
  console.log(!/^0 entries/.test(res['control (ran)'] || '') ? 'control failed' : left.length ? `FINDING: uploads left after: ${left.map(([k, v]) => k + ' (' + v + ')').join('; ')}` : 'held');
})().catch((e) => { console.error(e); process.exitCode = 1; });
