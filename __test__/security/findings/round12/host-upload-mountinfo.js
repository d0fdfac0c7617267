'use strict';
// Remote host: a run's uploaded files live in stateDir/workspaces/ws-<96 random bits>/ (parent 0711, the
// directory 0755, files 0644), so only the directory's secret name keeps other local users out. That name is in
// every sandbox process's /proc/<pid>/mountinfo (the bind's root field), which any local user may read.
// Control: uid 65534 cannot list workspaces/ (0711). Probe: uid 65534 greps /proc/*/mountinfo for the name
// and reads tenant A's upload by its full path while A's run lives. (root; a real host on a Unix socket.)
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { connectRemote } = require('../../../../lib/remote');
async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'r12-host-'));
  fs.chmodSync(dir, 0o755);
  fs.mkdirSync(path.join(dir, 'run'), { mode: 0o700 });
  const sock = path.join(dir, 'run', 'host.sock');
  const state = path.join(dir, 'state');
  fs.writeFileSync(path.join(dir, 'host.json'), JSON.stringify({ listen: { unix: sock }, stateDir: state, allowUids: [0], programs: { sh: '/bin/sh' } }));
  const host = spawn(process.execPath, [path.join(__dirname, '../../../../bin/cordon.js'), 'host', '--config', path.join(dir, 'host.json')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = ''; host.stderr.on('data', (d) => { log += d; });
  try {
    for (let i = 0; i < 100 && !fs.existsSync(sock); i++) await new Promise((r) => setTimeout(r, 100));
    const remote = connectRemote({ socket: sock });
    let leak;
    const run = remote.spawnIsolated(['sh', '-c', 'sleep 3; cat /workspace/secret.txt'], { policy: remote.readOnly(), workspace: { files: { 'secret.txt': 'tenant-A-secret' } } });
    await new Promise((r) => setTimeout(r, 1500));
    const ws = path.join(state, 'workspaces');
    const st = (p) => { const s = fs.statSync(p); return `${(s.mode & 0o7777).toString(8)} ${s.uid}:${s.gid}`; };
    console.log('stateDir', st(state), 'workspaces', st(ws));
    const entries = fs.readdirSync(ws);
    let guess = null;
    for (const e of entries) {
      const p = path.join(ws, e);
      console.log(' ', e, st(p), fs.statSync(p).isDirectory() ? fs.readdirSync(p).map((f) => f + ' ' + st(path.join(p, f))).join(', ') : '');
      for (const f of ['secret.txt']) if (fs.existsSync(path.join(p, f))) guess = path.join(p, f);
      for (const sub of fs.statSync(p).isDirectory() ? fs.readdirSync(p) : []) { const q = path.join(p, sub, 'secret.txt'); if (fs.existsSync(q)) guess = q; }
    }
    // what any local user reads in the sandbox processes' /proc/<pid>/mountinfo (world-readable)
    leak = spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', 'sh', '-c', 'for p in /proc/[0-9]*; do grep -h -o "/[^ ]*ws-[0-9a-f]*[^ ]*" $p/mountinfo 2>/dev/null; done | sort -u']);
    console.log('uid 65534 finds in /proc/*/mountinfo:', JSON.stringify(leak.stdout.toString().trim()));
    const sessionIds = [...log.matchAll(/"session":"([0-9a-f]+)"/g)].map((m) => m[1]);
    console.log('session ids in the host log so far:', sessionIds.join(','));
    let other = 'n/a'; let listed = null;
    if (guess) {
      const r = spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', 'cat', guess]);
      other = r.status === 0 ? `READ: ${r.stdout}` : `refused: ${r.stderr.toString().trim()}`;
      const l = spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', 'ls', ws]);
      console.log('control: uid 65534 lists workspaces/:', l.status === 0 ? l.stdout.toString().trim() : l.stderr.toString().trim());
      listed = l.status === 0;
    }
    console.log('uid 65534 reads the upload by its full path:', other, '(path', guess, ')');
    const r = await run.wait();
    console.log('run rc', r.returncode);
    const found = leak.stdout.toString().includes(path.basename(path.dirname(guess || '/x/y')));
    console.log(listed === false && found && /^READ/.test(other) ? 'FINDING: any local user reads a tenant\'s uploads, the directory name taken from /proc/<pid>/mountinfo' : listed ? 'control failed (workspaces/ listable)' : 'held');
    await remote.close();
  } finally {
    host.kill('SIGTERM'); await new Promise((r) => host.once('exit', r));
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
main().catch((e) => { console.error(e); process.exitCode = 1; });
