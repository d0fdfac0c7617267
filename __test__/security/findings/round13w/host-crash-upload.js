'use strict';
// Round 13w, R12-1 + recovery: the host is SIGKILLed while a run on uploads lives. What is left: the sandbox's
// processes (of the run's uid), the upload directory with its ACL entry for that uid (the uid's lease is gone with
// the host), and after a restart (recovery sweep) whether the directory goes. Control: a clean end leaves nothing.
// (root; a real host on a Unix socket; everything killed/removed at the end.)
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { connectRemote } = require('../../../../lib/remote');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const pidsOf = (uid) => spawnSync('pgrep', ['-u', String(uid)]).stdout.toString().trim().split('\n').filter(Boolean);
async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'r13w-crash-'));
  fs.chmodSync(dir, 0o755);
  fs.mkdirSync(path.join(dir, 'run'), { mode: 0o700 });
  const sock = path.join(dir, 'run', 'host.sock');
  const state = path.join(dir, 'state');
  const ws = path.join(state, 'workspaces');
  fs.writeFileSync(path.join(dir, 'host.json'), JSON.stringify({ listen: { unix: sock }, stateDir: state, allowUids: [0], programs: { sh: '/bin/sh' } }));
  const start = () => {
    // the native host itself (bin/cordon.js is a shim: SIGKILL to it would leave the native host running)
    const h = spawn(path.join(__dirname, '../../../../target/release/cordon'), ['host', '--config', path.join(dir, 'host.json')], { stdio: ['ignore', 'ignore', 'pipe'] });
    h.log = ''; h.stderr.on('data', (d) => { h.log += d; });
    return h;
  };
  let host = start();
  let uid = null;
  const out = [];
  try {
    for (let i = 0; i < 100 && !fs.existsSync(sock); i++) await sleep(100);
    const remote = connectRemote({ socket: sock });
    const run = remote.spawnIsolated(['sh', '-c', 'id -u; sleep 15; echo done'], { policy: remote.readOnly(), workspace: { files: { 'secret.txt': 'tenant-A-secret' } } });
    let text = ''; run.stderr.on('data', (d) => { text += d; });
    run.wait().catch(() => {});
    for (let i = 0; i < 50 && !/\n/.test(text); i++) await sleep(100);
    uid = Number(text.split('\n')[0]);
    console.log('run uid', uid, 'processes of it', pidsOf(uid).length);
    host.kill('SIGKILL'); await new Promise((r) => host.once('exit', r));
    await sleep(1500);
    const left = pidsOf(uid);
    const dirs = fs.existsSync(ws) ? fs.readdirSync(ws) : [];
    const acl = dirs.map((d) => spawnSync('python3', ['-c', 'import os,sys,struct; v=os.getxattr(sys.argv[1],"system.posix_acl_access"); print([struct.unpack_from("<HHI",v,4+8*i) for i in range((len(v)-4)//8)])', path.join(ws, d)]).stdout.toString().trim()).join(' | ');
    console.log('after SIGKILL of the host: processes of the run uid', left.length, left.map((p) => { try { return fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').replace(/\0/g, ' ').slice(0, 60); } catch { return p; } }));
    console.log('  workspaces/', dirs, acl);
    if (left.length) out.push(`${left.length} sandbox processes of uid ${uid} outlive the host (its uid lease gone with it)`);
    await remote.close().catch(() => {});
    host = start();
    for (let i = 0; i < 100 && !/listening/.test(host.log); i++) await sleep(100);
    await sleep(300);
    const after = fs.existsSync(ws) ? fs.readdirSync(ws) : [];
    console.log('after a restart (recovery): workspaces/', after, 'host log:', host.log.split('\n').filter((l) => /recover|swept|workspace/i.test(l)).join(' ').slice(0, 300));
    if (after.length) out.push('the upload directory (ACL for the released uid) outlives the restart');
  } finally {
    if (host.exitCode === null && host.signalCode === null) { host.kill('SIGTERM'); await new Promise((r) => host.once('exit', r)); }
    if (uid) for (const p of pidsOf(uid)) { try { process.kill(Number(p), 'SIGKILL'); } catch {} }
    fs.rmSync(dir, { recursive: true, force: true });
  }
  console.log(out.length ? 'FINDING: ' + out.join('; ') : 'held');
}
main().catch((e) => { console.error(e); process.exitCode = 1; });
