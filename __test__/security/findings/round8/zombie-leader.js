'use strict';
// R8-4 (README.md). killUidProcesses(uid) (uid_sweep.rs), the backstop that docs/sessions.md
// says leaves "no process of the owner uid", skips a process whose thread-group leader exited
// while its other threads run: /proc/<tgid>/status reads "State: Z (zombie)" and
// is_live_process_of() drops it. The sweep resolves (success) and the process keeps running.
// Runs the helper as a uid created for this probe only (0x6fff_a8b2: no account, no
// subordinate range, not cordon's), checks nothing else runs as it, kills only its own child.
// Expected: the sweep kills it (or fails with ERR_CORDON_SESSION_SWEEP_FAILED). Exit 1 = reproduced.
// Usage (root): node zombie-leader.js
const fs = require('node:fs');
const path = require('node:path');
const { spawn, execFileSync } = require('node:child_process');
const ROOT = path.join(__dirname, '..', '..', '..', '..');
const binding = require(path.join(ROOT, 'binding.js'));

const UID = 0x6fff_a8b2;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function processesOf(uid) {
  const out = [];
  for (const p of fs.readdirSync('/proc').filter((x) => /^\d+$/.test(x))) {
    try {
      const st = fs.readFileSync(`/proc/${p}/status`, 'utf8');
      if (Number(/Uid:\s+(\d+)/.exec(st)[1]) === uid) out.push({ pid: Number(p), state: /State:\s+(.*)/.exec(st)[1], threads: Number(/Threads:\s+(\d+)/.exec(st)[1]) });
    } catch { /* gone */ }
  }
  return out;
}

(async () => {
  if (process.geteuid() !== 0) return console.log('skip: needs root to run a process as another uid');
  if (processesOf(UID).length > 0) throw new Error(`uid ${UID} is in use: not ours to sweep`);
  const dir = fs.mkdtempSync('/var/tmp/atk8w-zl-');
  fs.chmodSync(dir, 0o755);
  const exe = path.join(dir, 'zombie-leader');
  execFileSync('cc', ['-O2', '-pthread', '-o', exe, path.join(__dirname, 'zombie-leader.c')]);
  const beats = path.join(dir, 'beats');
  fs.writeFileSync(beats, '');
  fs.chownSync(beats, UID, UID);
  // Control: an ordinary process of the uid is killed (and the sweep takes a uid far outside the
  // owner ranges: it refuses only 0 and its own, R8-7).
  const plain = spawn('/bin/sleep', ['300'], { uid: UID, gid: UID, stdio: 'ignore' });
  await new Promise((r) => plain.once('spawn', r));
  const control = await binding.killUidProcesses(UID).then((n) => `resolved: ${n} signalled`, (e) => `rejected: ${e.message}`);
  await new Promise((r) => (plain.signalCode !== null || plain.exitCode !== null ? r() : plain.once('exit', r)));
  console.log(`control: killUidProcesses(${UID}) ${control}; the plain process ended by ${plain.signalCode}`);
  const child = spawn(exe, [beats], { uid: UID, gid: UID, stdio: 'ignore' });
  const pid = child.pid;
  try {
    for (let i = 0; i < 100 && !(processesOf(UID).find((p) => p.pid === pid)?.state ?? '').startsWith('Z'); i++) await sleep(100);
    console.log('before the sweep:', JSON.stringify(processesOf(UID)));
    const swept = await binding.killUidProcesses(UID).then((n) => `resolved: ${n} signalled`, (e) => `rejected: ${e.message}`);
    console.log('killUidProcesses:', swept);
    const count = () => fs.readFileSync(beats, 'utf8').split('\n').filter(Boolean).length;
    const a = count();
    await sleep(1500);
    const b = count();
    console.log(`after the sweep: ${JSON.stringify(processesOf(UID))}; heartbeats ${a} -> ${b}`);
    const survived = b > a && swept.startsWith('resolved');
    console.log(`R8-4 a live process of the uid survives a successful sweep: ${survived ? 'REPRODUCED' : 'not reproduced'}`);
    process.exitCode = survived ? 1 : 0;
  } finally {
    try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
    await new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r() : child.once('exit', r)));
    fs.rmSync(dir, { recursive: true, force: true });
  }
})().catch((e) => {
  console.error(e);
  process.exitCode = 3;
});
