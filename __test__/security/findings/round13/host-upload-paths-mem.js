'use strict';
// Remote host: `ceilings.uploadBytes` counts file content; an upload's path is bounded by 32 parts (each a file
// name, up to 255 bytes) and the session by 10 000 files and directories. So one session may send ~10 000 paths
// of ~8 KiB (80 MB of names, empty files, under a 31-level directory of 255-byte names: a path past PATH_MAX).
// What does that cost the host (RSS, time, and the tree's removal)? Control: 9 969 files with short names.
// Usage (root): node host-upload-paths-mem.js [concurrent=1]
const { spawn } = require('node:child_process');
const fs = require('node:fs'); const os = require('node:os'); const path = require('node:path');
const PKG = process.env.R13_PKG || path.join(__dirname, '../../../..');
const { connectRemote } = require(PKG + '/lib/remote');
const C = Number(process.argv[2] || 1);
const rssOf = (pid) => { try { return Number(fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/)[1]) >> 10; } catch { return 0; } };
(async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'r13-hostp-')); fs.chmodSync(dir, 0o755);
  fs.mkdirSync(path.join(dir, 'run'), { mode: 0o700 });
  const sock = path.join(dir, 'run', 'host.sock'); const state = path.join(dir, 'state');
  fs.writeFileSync(path.join(dir, 'host.json'), JSON.stringify({ listen: { unix: sock }, stateDir: state, allowUids: [0], programs: { sh: '/bin/sh' } }));
  const host = spawn(process.execPath, [PKG + '/bin/cordon.js', 'host', '--config', path.join(dir, 'host.json')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = ''; host.stderr.on('data', (d) => { log += d; });
  const res = {};
  try {
    for (let i = 0; i < 100 && !fs.existsSync(sock); i++) await new Promise((r) => setTimeout(r, 100));
    const hostPid = Number(require('node:child_process').execSync(`pgrep -P ${host.pid} | head -1 || true`).toString().trim()) || host.pid;
    const remote = connectRemote({ socket: sock });
    const deep = Array.from({ length: 15 }, (_, i) => (String(i) + '_').padEnd(255, 'd')).join('/');
    const sets = {
      control: () => { const f = {}; for (let i = 0; i < 9969; i++) f[`d/f${i}`] = ''; return f; },
      probe: () => { const f = {}; for (let i = 0; i < 9969; i++) f[deep + '/' + (String(i) + '_').padEnd(255, 'f')] = ''; return f; },
    };
    for (const [k, mk] of Object.entries(sets)) {
      const files = mk(); const names = Object.keys(files).reduce((a, p) => a + p.length, 0);
      const base = rssOf(hostPid); let peak = base; const iv = setInterval(() => { peak = Math.max(peak, rssOf(hostPid)); }, 20);
      const t = Date.now();
      const outs = await Promise.all(Array.from({ length: C }, () => remote.spawnIsolated(['sh', '-c', 'ls /workspace | head -1 >&2'], { policy: remote.readOnly(), workspace: { files } }).wait().then((r) => 'rc ' + r.returncode, (e) => e.code + ' ' + String(e.message).replace(/[a-z0-9_]{40,}/g, '…').slice(0, 200))));
      const ms = Date.now() - t; await new Promise((r) => setTimeout(r, 500)); clearInterval(iv);
      const left = fs.existsSync(state + '/workspaces') ? fs.readdirSync(state + '/workspaces').length : 0;
      res[k] = { peak: peak - base, ms, outs, left };
      console.log(`${k}: ${C} session(s) of 9969 files, ${(names / 1e6).toFixed(1)} MB of path names each: ${ms} ms, host (pid ${hostPid}) RSS ${base} → peak ${peak} MiB (+${peak - base}); ${outs.join(' | ')}; workspaces left ${left}`);
    }
    await remote.close();
  } finally { host.kill('SIGTERM'); await new Promise((r) => host.once('exit', r)); fs.rmSync(dir, { recursive: true, force: true }); }
  const c = res.control, p = res.probe;
  console.log(!/rc 0/.test(c.outs[0]) ? 'control failed' : (p.left || p.peak > 10 * Math.max(c.peak, 20) || p.ms > 20 * c.ms) ? `FINDING: long upload paths: host +${p.peak} MiB (control +${c.peak}), ${p.ms} ms (control ${c.ms}), workspaces left ${p.left}` : 'held');
})().catch((e) => { console.error(e); process.exitCode = 1; });
