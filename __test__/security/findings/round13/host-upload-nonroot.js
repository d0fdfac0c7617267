'use strict';
// R12-1 re-test with a non-root host (`cordon host` as uid 65534, runs on its subordinate ids) and two tenants'
// runs at once: tenant A uploads secret.txt, tenant B (another run at the same time) too. While both live:
// the path of A's upload is found in /proc/*/mountinfo; then read as (1) uid 65533 (another local user),
// (2) B's run uid (read off B's sandbox processes), (3) the host's uid 65534 through A's directory path,
// (4) via /proc/<A's sandbox pid>/root/workspace/secret.txt as uid 65533 and B's uid, (5) A's own uid (control: must read).
// Usage (root): R13_PKG=/tmp/r13pkg node host-upload-nonroot.js   (the package copy world-readable)
const { spawn, spawnSync, execSync } = require('node:child_process');
const fs = require('node:fs'); const os = require('node:os'); const path = require('node:path');
const PKG = process.env.R13_PKG || '/tmp/r13pkg';
const { connectRemote } = require(PKG + '/lib/remote');
const as = (uid, cmd) => { const r = spawnSync('setpriv', [`--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', 'sh', '-c', cmd]); return r.status === 0 ? 'READ ' + r.stdout.toString().trim() : 'refused: ' + r.stderr.toString().trim().slice(0, 80); };
(async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'r13-nrhost-')); fs.chmodSync(dir, 0o755);
  const state = path.join(dir, 'state'); fs.mkdirSync(state); fs.chownSync(state, 65534, 65534);
  const sockdir = path.join(dir, 'run'); fs.mkdirSync(sockdir, { mode: 0o755 }); fs.chownSync(sockdir, 65534, 65534);
  const sock = path.join(sockdir, 'host.sock');
  fs.writeFileSync(path.join(dir, 'host.json'), JSON.stringify({ listen: { unix: sock }, stateDir: state, allowUids: [0, 65534], programs: { sh: '/bin/sh' } }));
  const host = spawn('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, PKG + '/bin/cordon.js', 'host', '--config', path.join(dir, 'host.json')], { stdio: ['ignore', 'ignore', 'pipe'], cwd: '/tmp' });
  let log = ''; host.stderr.on('data', (d) => { log += d; });
  const verdict = {};
  try {
    for (let i = 0; i < 100 && !fs.existsSync(sock); i++) await new Promise((r) => setTimeout(r, 100));
    const remote = connectRemote({ socket: sock });
    const mk = (t) => remote.spawnIsolated(['sh', '-c', 'sleep 5; cat /workspace/secret.txt >&2'], { policy: remote.readOnly(), workspace: { files: { 'secret.txt': `tenant-${t}-secret` } } });
    const A = mk('A'); await new Promise((r) => setTimeout(r, 300)); const B = mk('B');
    const errs = { A: '', B: '' }; A.stderr.on('data', (d) => { errs.A += d; }); B.stderr.on('data', (d) => { errs.B += d; });
    await new Promise((r) => setTimeout(r, 2500));
    const rows = execSync(`for p in /proc/[0-9]*; do d=$(grep -o '/[^ ]*ws-[0-9a-f]*' $p/mountinfo 2>/dev/null | head -1); [ -n "$d" ] && echo "$(basename $p) $(awk '/^Uid/{print $2}' $p/status) $d $(tr '\\0' ' ' < $p/cmdline | cut -c1-30)"; done; true`, { shell: '/bin/bash' }).toString().trim().split('\n').map((l) => l.split(' '));
    const dirs = [...new Set(rows.map((r) => r[2]))];
    console.log('mountinfo rows:', rows.length, 'dirs:', dirs);
    const sleepOf = (d) => rows.find((r) => r[2] === d && r.slice(3).join(' ').startsWith('sleep'));
    const a = sleepOf(dirs[0]), b = sleepOf(dirs[1]);
    console.log('A: pid', a[0], 'uid', a[1], 'dir', a[2], '| B: pid', b[0], 'uid', b[1]);
    console.log(execSync(`ls -la ${a[2]}; getfattr -d -m - ${a[2]} 2>/dev/null | head -3 || true`).toString());
    const f = a[2] + '/secret.txt';
    verdict.control = as(a[1], `cat ${f}`); console.log('(5) control, A\'s own uid reads by path:', verdict.control);
    verdict.other = as(65533, `cat ${f}`); console.log('(1) uid 65533 by path:', verdict.other);
    verdict.bUid = as(b[1], `cat ${f}`); console.log('(2) B\'s run uid by path:', verdict.bUid);
    verdict.procRoot = as(65533, `cat /proc/${a[0]}/root/workspace/secret.txt`); console.log('(4) uid 65533 via /proc/A/root:', verdict.procRoot);
    verdict.procRootB = as(b[1], `cat /proc/${a[0]}/root/workspace/secret.txt`); console.log('(4b) B\'s uid via /proc/A/root:', verdict.procRootB);
    verdict.procCwd = as(b[1], `cat /proc/${a[0]}/cwd/secret.txt`); console.log('(4c) B\'s uid via /proc/A/cwd:', verdict.procCwd);
    verdict.host = as(65534, `cat ${f}`); console.log('(3) the host uid 65534 by path (its own dir):', verdict.host);
    const ra = await A.wait(), rb = await B.wait();
    console.log('A rc', ra.returncode, JSON.stringify(errs.A.trim()), '| B rc', rb.returncode, JSON.stringify(errs.B.trim()), '| uidAllocation', ra.receipt?.confinement?.planned?.uidAllocation);
    await remote.close();
  } finally {
    host.kill('SIGTERM'); await new Promise((r) => host.once('exit', r));
    const left = fs.existsSync(state + '/workspaces') ? fs.readdirSync(state + '/workspaces') : [];
    console.log('workspaces left after host exit:', left.length);
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const leaked = ['other', 'bUid', 'procRoot', 'procRootB', 'procCwd'].filter((k) => /^READ/.test(verdict[k] || ''));
  console.log(!/^READ tenant-A/.test(verdict.control || '') ? 'control failed' : leaked.length ? `FINDING: tenant A's upload read by ${leaked.join(', ')}` : 'held');
})().catch((e) => { console.error(e); process.exitCode = 1; });
