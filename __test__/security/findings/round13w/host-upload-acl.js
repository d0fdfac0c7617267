'use strict';
// Round 13w, R12-1's fix (crates/launcher/src/host/workspace_grant.rs): a remote host's upload directory is 0700
// with one ACL entry user:<run uid>:r-x. Checks, on a real host (root) on a Unix socket:
//  - while a readOnly run lives: the directory's mode, its access ACL (one named uid = the run's `id -u`),
//    no default ACL; uid 65534 (another local user) cannot read the upload by the mountinfo path;
//  - a workspaceWrite run (the tenant asks for a writable /workspace) cannot create, append, chmod, or
//    setfacl anything in its uploads (only read);
//  - after each run, workspaces/ is empty (no directory with a stale uid's entry left behind).
// Control: the readOnly run reads its upload (rc 0, content).
// R13W_NONROOT=1 (run as root from a world-readable package copy, e.g. /tmp/r13wpkg): the host runs as uid 65534
// (its runs are subordinate ids), the client as root, the "other local user" is uid 65533.
const NONROOT = process.env.R13W_NONROOT === '1';
const OTHER = NONROOT ? '65533' : '65534';
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { connectRemote } = require('../../../../lib/remote');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const py = (code, ...args) => spawnSync('python3', ['-c', code, ...args]).stdout.toString().trim();
const ACL = `
import os,sys,struct
p=sys.argv[1]
def dump(n):
    try: v=os.getxattr(p,n)
    except OSError as e: return 'none(%s)'%e.errno
    ents=[struct.unpack_from('<HHI',v,4+8*i) for i in range((len(v)-4)//8)]
    return ','.join('%x:%o:%s'%(t,pm,'' if i==0xffffffff else i) for t,pm,i in ents)
print(oct(os.stat(p).st_mode&0o7777), 'access=',dump('system.posix_acl_access'),'default=',dump('system.posix_acl_default'))
`;
async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'r13w-acl-'));
  fs.chmodSync(dir, 0o755);
  fs.mkdirSync(path.join(dir, 'run'), { mode: 0o700 });
  const sock = path.join(dir, 'run', 'host.sock');
  const state = path.join(dir, 'state');
  const ws = path.join(state, 'workspaces');
  fs.writeFileSync(path.join(dir, 'host.json'), JSON.stringify({ listen: { unix: sock }, stateDir: state, allowUids: [0], programs: { sh: '/bin/sh' } }));
  if (NONROOT) { fs.chmodSync(path.join(dir, 'run'), 0o755); spawnSync('chown', ['-R', '65534:65534', dir]); }
  const hostArgv = [process.execPath, path.join(__dirname, '../../../../bin/cordon.js'), 'host', '--config', path.join(dir, 'host.json')];
  const host = NONROOT ? spawn('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', ...hostArgv], { stdio: ['ignore', 'ignore', 'pipe'] }) : spawn(hostArgv[0], hostArgv.slice(1), { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = ''; host.stderr.on('data', (d) => { log += d; });
  const problems = [];
  let controlOk = false;
  try {
    for (let i = 0; i < 100 && !fs.existsSync(sock); i++) await sleep(100);
    const remote = connectRemote({ socket: sock });
    // 1. readOnly run
    const run = remote.spawnIsolated(['sh', '-c', 'id -u; sleep 3; cat /workspace/secret.txt'], { policy: remote.readOnly(), workspace: { files: { 'secret.txt': 'tenant-A-secret', 'd/e.txt': 'x' } } });
    let out = ''; run.stderr.on('data', (d) => { out += d; });
    await sleep(1500);
    const entries = fs.readdirSync(ws);
    for (const e of entries) {
      const p = path.join(ws, e);
      const acl = py(ACL, p);
      console.log('during the run:', e, acl);
      const r = spawnSync('setpriv', [`--reuid=${OTHER}`, `--regid=${OTHER}`, '--clear-groups', 'cat', path.join(p, 'secret.txt')]);
      console.log(`  uid ${OTHER} cat:`, r.status === 0 ? `READ ${r.stdout}` : r.stderr.toString().trim());
      if (r.status === 0) problems.push(`uid ${OTHER} read the upload`);
      if (!/default= none/.test(acl)) problems.push('a default ACL on the upload directory: ' + acl);
      if (!/^0o7[0-5]0 /.test(acl)) problems.push('mode ' + acl);
      globalThis.acl = acl;
    }
    const r1 = await run.wait();
    const uid = out.split('\n')[0];
    console.log('readOnly run rc', r1.returncode, 'uid', uid, 'output', JSON.stringify(out.split('\n').slice(1).join('|')));
    controlOk = r1.returncode === 0 && out.includes('tenant-A-secret');
    if (globalThis.acl && !globalThis.acl.includes(`2:5:${uid}`)) problems.push(`the ACL's named uid is not the run's (${uid}): ${globalThis.acl}`);
    const named = (globalThis.acl || '').match(/2:[0-7]:\d+/g) || [];
    if (named.length !== 1) problems.push('named entries: ' + named.join(' '));
    await sleep(300);
    console.log('after the run, workspaces/:', fs.readdirSync(ws));
    if (fs.readdirSync(ws).length) problems.push('directory left after the run');
    // 2. workspaceWrite run: only read is allowed
    const script = [
      'cd /workspace',
      'try() { if "$@" 2>/dev/null; then echo "OK: $*"; else echo "refused: $*"; fi; }',
      'try sh -c "echo x > /workspace/new"',
      'try sh -c "echo y >> /workspace/secret.txt"',
      'try sh -c "echo z > /workspace/d/new"',
      'try mkdir /workspace/d2',
      'try chmod 777 /workspace',
      'try chmod 666 /workspace/secret.txt',
      'try rm -f /workspace/secret.txt',
      'try mv /workspace/d /workspace/d3',
      'try python3 -c "import os; os.setxattr(\'/workspace\', \'system.posix_acl_access\', os.getxattr(\'/workspace\', \'system.posix_acl_access\'))"',
      'try ln /workspace/secret.txt /tmp/hl',
      'try cat /workspace/secret.txt',
    ].join('\n');
    const run2 = remote.spawnIsolated(['sh', '-c', script], { policy: remote.workspaceWrite(), workspace: { files: { 'secret.txt': 'tenant-A-secret', 'd/e.txt': 'x' } } });
    let out2 = ''; run2.stderr.on('data', (d) => { out2 += d; });
    const r2 = await run2.wait();
    console.log('workspaceWrite run rc', r2.returncode, '\n ' + out2.trim().split('\n').join('\n '));
    for (const line of out2.trim().split('\n')) if (/^OK: /.test(line) && !/cat \/workspace|ln /.test(line)) problems.push('run wrote its uploads: ' + line);
    await sleep(300);
    if (fs.readdirSync(ws).length) problems.push('directory left after the write run');
    await remote.close();
  } finally {
    host.kill('SIGTERM'); await new Promise((r) => host.once('exit', r));
    if (log.trim() && process.env.R13W_DEBUG) console.log(log);
    fs.rmSync(dir, { recursive: true, force: true });
  }
  if (!controlOk) console.log('control failed (the run could not read its upload)');
  else console.log(problems.length ? 'FINDING: ' + problems.join('; ') : 'held');
}
main().catch((e) => { console.error(e); process.exitCode = 1; });
