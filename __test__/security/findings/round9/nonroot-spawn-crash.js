'use strict';
// R9: a non-root provider crashes (uncaught 'error' event of a ChildProcess) when the
// spawn of a `cordon-exec-agent session-files` process fails. File operations have no
// concurrency bound, so one session's concurrent readFile calls make the spawn fail
// (EMFILE here: each operation holds 3 provider descriptors; a fork failing with EAGAIN
// at the process limit takes the same path), and
// the whole provider process dies: every session of every tenant loses it mid-flight.
//
// Run as root; it re-runs itself as uid 65534 under prlimit (a limit stands in for the
// host's: with the default hard RLIMIT_NOFILE 20000 of this box ~6700 concurrent calls
// do the same; not run at that size so as not to load the shared machine):
//   node nonroot-spawn-crash.js            flood 1000 readFile under RLIMIT_NOFILE 2048
//   node nonroot-spawn-crash.js control    100 readFile under RLIMIT_NOFILE 2048 (fits)
// Prints VULNERABLE when the provider died; "control ok"/"held" when it survived.
// Leftover holders (named by the probe's directory) are killed by pid, the dir removed.
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync, execFileSync } = require('node:child_process');
const pkg = path.resolve(__dirname, '../../../..');

async function child(n, dir) {
  const cordon = require(pkg);
  const m = cordon.createSessionManager({
    secret: crypto.randomBytes(32), root: path.join(dir, 'sessions'), store: cordon.memorySessionStore(),
    authorize: () => true, workspaceBytes: 8 << 20,
  });
  const a = await m.acquire({ tenant: 'attacker', conversation: 'a' }, {});
  const b = await m.acquire({ tenant: 'victim', conversation: 'b' }, {});
  await a.writeFile('f', 'x');
  const codes = {};
  await Promise.all(Array.from({ length: n }, () => a.readFile('f').then(() => 'ok', (e) => e.code).then((c) => { codes[c] = (codes[c] || 0) + 1; })));
  console.log('flood results', JSON.stringify(codes));
  const r = await b.exec(['echo', 'victim alive']);
  console.log('victim:', r.stdout.trim());
  await a.end(); await b.end();
  console.log('PROVIDER-SURVIVED');
}

function main() {
  const mode = process.argv[2] || 'nofile';
  if (mode === '--child') return child(Number(process.argv[3]), process.argv[4]);
  if (process.getuid() !== 0) throw new Error('run as root: it starts the provider as uid 65534');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'r9-spawncrash-'));
  fs.chownSync(dir, 65534, 65534);
  fs.chmodSync(dir, 0o711);
  const n = mode === 'control' ? 100 : 1000;
  const limit = ['--nofile=2048:2048'];
  try {
    const r = spawnSync('prlimit', [...limit, 'setpriv', '--reuid=65534', '--regid=65534', '--clear-groups',
      process.execPath, __filename, '--child', String(n), dir], { encoding: 'utf8', timeout: 240_000, cwd: '/' });
    const out = `${r.stdout}${r.stderr}`.split('\n').filter((l) => !/ExperimentalWarning|trace-warnings/.test(l));
    console.log(out.slice(0, 14).join('\n'));
    const survived = r.stdout.includes('PROVIDER-SURVIVED');
    const crashed = !survived && /Unhandled 'error' event/.test(r.stderr);
    console.log(`mode ${mode} (${limit[0]}, ${n} concurrent readFile): provider exit ${r.status} signal ${r.signal}`);
    if (mode === 'control') console.log(survived ? 'control ok' : 'control FAILED');
    else console.log(crashed ? 'VULNERABLE: the provider process died of an unhandled spawn error' : survived ? 'held' : 'inconclusive');
  } finally {
    // the crashed provider leaves its sessions' holders: kill exactly those (their argv names our dir)
    const ps = execFileSync('ps', ['-e', '-o', 'pid=,args=']).toString().split('\n');
    for (const line of ps) {
      const m = line.trim().match(/^(\d+)\s+(.*)$/);
      if (m && m[2].includes(dir)) { try { process.kill(Number(m[1]), 'SIGKILL'); console.log('killed leftover', m[2].split(' ').slice(0, 2).join(' ')); } catch { /* gone */ } }
    }
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
Promise.resolve(main()).catch((e) => { console.error(e); process.exitCode = 1; });
