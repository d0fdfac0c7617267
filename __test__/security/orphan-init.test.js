'use strict';

// A provider SIGKILLed between bwrap's clone of its namespace init and the
// init's release leaves that init behind, blocked forever on the eventfd
// that would release it (the parent-death signal it arms only after that
// read; bwrap-stepping.js). Sessions sweep their owner uid for it
// (sessions-orphan-init.test.js); this is the same state for an ordinary
// run, whose uid is leased per run and given back when its provider dies.
// The fix: every provider's periodic housekeeping kills such inits
// (crates/launcher/src/host/orphan_init.rs). Each try steps the outer bwrap
// of a provider's spawnIsolated() into that state, kills the provider, and
// has a fresh provider run one sandbox: the init must be dead soon after.
// The same once the init has been released (stopped, released, its
// provider killed, then let go): it finishes its set-up and would start the
// program, unsupervised; the sandbox's starter refuses to (its gate sees the
// outer bwrap gone once the init has armed its signal), and the init ends
// by itself. Both a root provider and a uid-65534 one.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { spawn, spawnSync } = require('node:child_process');
const h = require('./harness');
const { READ_SYSCALL, blockedOnEventfd, killProviderAtClone, readProc, realUid, releaseCount, state, waitStopped } = require('./bwrap-stepping');

const skip = h.skipReason() ?? (process.geteuid() === 0 ? false : 'needs root: it steps the sandbox of a root and of a uid-65534 provider with SIGSTOP');
/** Tries per provider kind (each ~1-3 s); one hit is enough. */
const MAX_TRIES = 30;

/** Field 22 of /proc/<pid>/stat: with the pid, names one process across pid reuse. */
function startTime(pid) {
  const stat = readProc(pid, 'stat');
  return stat === null ? null : stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
}

/** Whether the process `pid` that started at `started` is gone (a zombie has run its last: the kernel killed its namespace). */
function gone(pid, started) {
  const s = state(pid);
  return s === null || s === 'Z' || startTime(pid) !== started;
}

function providerKind(nobody) {
  if (!nobody) return { node: process.execPath, pkg: path.join(__dirname, '..', '..'), identity: {} };
  const { node, pkg } = require('./nobody-provider').nobodyProvider();
  return { node, pkg, identity: { uid: h.NOBODY_UID, gid: h.NOBODY_UID } };
}

const FIRST = `const ex = cordon.spawnIsolated(['/bin/sleep', '30'], { policy: cordon.readOnly() });
ex.stderr.resume(); ex.protocol.resume(); setInterval(() => {}, 1000);`;
// One run, then the init is watched for (the sweep runs on a thread of this
// process, so the process must outlive it).
const SECOND = (init, started) => `(async () => {
  const ex = cordon.spawnIsolated(['/bin/true'], { policy: cordon.readOnly() });
  ex.stderr.resume(); ex.protocol.resume();
  const r = await ex.wait();
  const fs = require('node:fs');
  const gone = () => { try { const s = fs.readFileSync('/proc/${init}/stat', 'utf8'); const f = s.slice(s.lastIndexOf(')') + 2).split(' '); return f[0] === 'Z' || f[19] !== '${started}'; } catch { return true; } };
  for (let i = 0; i < 250 && !gone(); i += 1) await new Promise((res) => setTimeout(res, 20));
  process.stdout.write(JSON.stringify({ returncode: r.returncode, gone: gone() }));
})();`;

const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Stops the blocked `init`, lets `outer` release it, and waits for the release (the eventfd written). */
async function releaseStopped(init, outer) {
  process.kill(Number(init), 'SIGSTOP');
  waitStopped(init);
  process.kill(Number(outer), 'SIGCONT');
  for (let i = 0; i < 200 && !(releaseCount(init) > 0); i += 1) await pause(10);
  return releaseCount(init) > 0;
}

/**
 * Watches the released `init` for 5 s: whether its program (`sleep`) ever
 * ran, and whether the init ended on its own (its starter refused the
 * program: crates/egress-relay/src/provider_gate.rs).
 */
async function watchReleased(init, started) {
  let programRan = false;
  for (let i = 0; i < 250; i += 1) {
    for (const child of (readProc(init, `task/${init}/children`) ?? '').split(' ').filter(Boolean)) {
      if ((readProc(child, 'comm') ?? '').trim() === 'sleep') programRan = true;
    }
    if (gone(init, started)) return { programRan, endedAlone: true };
    await pause(20);
  }
  return { programRan, endedAlone: false };
}

async function oneTry(kind, afterRelease) {
  const args = (body) => ['-e', `const cordon = require(${JSON.stringify(kind.pkg)});\n${body}`];
  const first = spawn(kind.node, args(FIRST), { cwd: '/', env: { PATH: process.env.PATH }, stdio: ['ignore', 'ignore', 'pipe'], ...kind.identity });
  const { outer, init } = await killProviderAtClone(first, afterRelease ? releaseStopped : undefined);
  const outerGone = [null, 'Z'].includes(state(outer));
  let hit;
  let released = null;
  if (afterRelease) {
    // Released before its provider died, set up after: without the gate it
    // would start the program, unsupervised.
    const started = init === null ? null : startTime(init);
    if (init !== null) process.kill(Number(init), 'SIGCONT');
    hit = init !== null && outerGone;
    if (hit) released = await watchReleased(init, started);
  } else {
    // The lost race's state: the outer bwrap gone with the provider, the init still blocked.
    hit = init !== null && outerGone && state(init) === 'S' && blockedOnEventfd(init);
  }
  const started = init === null ? null : startTime(init);
  const uid = init === null ? null : realUid(init);
  let second = null;
  if (hit) {
    const run = spawnSync(kind.node, args(SECOND(init, started)), { cwd: '/', encoding: 'utf8', timeout: 60_000, env: { PATH: process.env.PATH }, ...kind.identity });
    second = { status: run.status, stdout: run.stdout.trim(), stderr: run.stderr.slice(-2000) };
  }
  const left = init !== null && !gone(init, started);
  if (left) {
    try {
      if (!process.env.KEEP_ORPHAN) process.kill(Number(init), 'SIGKILL'); // what the bug would leave: killed here so later tests start clean
    } catch {
      // gone
    }
  }
  return { hit, init, uid, second, left, released };
}

for (const [nobody, afterRelease] of [[false, false], [true, false], [false, true], [true, true]]) {
  const who = nobody ? 'a uid-65534 provider' : 'a root provider';
  const when = afterRelease ? 'released a run\'s namespace init but before the init armed its parent-death signal (the init would then start the program: its starter refuses)' : 'cloned but not released a run\'s namespace init';
  test(`${who} SIGKILLed once bwrap has ${when} leaves no process behind once the next provider launches a run`, { skip, timeout: 300_000 }, async () => {
    if (READ_SYSCALL === undefined) return; // only x86_64 and aarch64 syscall numbers are known here
    const kind = providerKind(nobody);
    let tries = 0;
    let outcome = { hit: false };
    while (tries < MAX_TRIES && !outcome.hit) {
      tries += 1;
      outcome = await oneTry(kind, afterRelease);
    }
    // The loop must have reached the state it is about: else it proved nothing.
    assert.ok(outcome.hit, `no try of ${tries} reached the state: bwrap stopped between the clone of its init and its release${afterRelease ? ', then the init released' : ''}`);
    if (afterRelease) {
      // The starter's gate: the outer bwrap was gone before the init armed
      // its parent-death signal, so the program never starts and the init,
      // left without a child, ends by itself (no sweep needed).
      assert.deepEqual(outcome.released, { programRan: false, endedAlone: true }, `the released init ${outcome.init}`);
    }
    assert.equal(outcome.second.status, 0, `the next provider ran: ${JSON.stringify(outcome.second)}`);
    const value = JSON.parse(outcome.second.stdout);
    assert.equal(value.returncode, 0);
    assert.equal(outcome.left, false, `the orphaned init ${outcome.init} (uid ${outcome.uid}) is gone`);
    assert.equal(value.gone, true, 'gone while the next provider ran');
    if (!nobody) assert.ok(outcome.uid >= h.RUN_UID_FIRST, `a per-run uid: ${outcome.uid}`);
  });
}

// A provider that itself runs under a seccomp filter (a container runtime's
// default profile, systemd's SystemCallFilter=): bwrap's init inherits it, so
// its seccomp mode is non-zero from birth and cannot tell the starter that the
// init has armed its parent-death signal; the count of filters can (white-box
// review of the gate, F1). The init, once released, is held by strace at the
// exit of its fork of the starter, before it arms: the starter must wait, the
// provider is killed meanwhile, and the program must never run. Root, and uid 65534 (the filter loaded as root without
// no_new_privs, as runc does, so newuidmap stays usable, then the uid dropped).
const SECCOMP_WRAP = `
import os, sys, seccomp
f = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
f.set_attr(seccomp.Attr.CTL_NNP, 0)
f.load()
uid = int(os.environ.pop('WRAP_UID', '0'))
if uid:
    os.setgroups([]); os.setgid(uid); os.setuid(uid)
os.execv(sys.argv[1], sys.argv[1:])
`;

/** The `Seccomp_filters:` count of `pid`, or null. */
function filterCount(pid) {
  const match = /^Seccomp_filters:\s+(\d+)/m.exec(readProc(pid, 'status') ?? '');
  return match ? Number(match[1]) : null;
}

/**
 * Resumes the stopped, released `init` under strace, which holds it for 2 s
 * at the exit of its one clone (its fork of the starter: `-e
 * inject=clone:delay_exit`), before it reaches its PR_SET_PDEATHSIG; resolves
 * the tracer once the starter exists and the init still holds only the
 * filters it was born with (`inherited`), else null. The hold stands for an
 * init the scheduler put aside (the white-box review's reproduction).
 */
async function holdInitAtFork(init, inherited) {
  const tracer = spawn('strace', ['-qq', '-o', '/dev/null', '-p', String(init), '-e', 'trace=clone', '-e', 'inject=clone:delay_exit=2000000'], { stdio: 'ignore' });
  for (let i = 0; i < 400 && !/^TracerPid:\s+[1-9]/m.test(readProc(init, 'status') ?? ''); i += 1) await pause(5);
  process.kill(Number(init), 'SIGCONT');
  for (let i = 0; i < 300; i += 1) {
    const [child] = (readProc(init, `task/${init}/children`) ?? '').split(' ').filter(Boolean);
    if (child !== undefined && filterCount(init) === inherited) return tracer;
    if (child !== undefined) break;
    await pause(5);
  }
  tracer.kill('SIGKILL');
  return null;
}

async function seccompTry(nobody) {
  const kind = providerKind(nobody);
  const body = `const cordon = require(${JSON.stringify(kind.pkg)});\n${FIRST}`;
  const identity = nobody ? { env: { PATH: process.env.PATH, WRAP_UID: String(h.NOBODY_UID) } } : { env: { PATH: process.env.PATH } };
  const provider = spawn('/usr/bin/python3', ['-c', SECCOMP_WRAP, kind.node, '-e', body], { cwd: '/', stdio: ['ignore', 'ignore', 'pipe'], ...identity });
  let tracer = null;
  let inherited = null;
  const { outer, init } = await killProviderAtClone(provider, async (blocked, outerPid) => {
    inherited = filterCount(outerPid);
    if (!(inherited > 0) || !(await releaseStopped(blocked, outerPid))) return false;
    tracer = await holdInitAtFork(blocked, inherited);
    // The starter, if it were to pass now, would find the outer bwrap alive.
    if (tracer !== null) await pause(300);
    return tracer !== null;
  });
  if (init === null) {
    tracer?.kill('SIGKILL');
    return { hit: false };
  }
  const started = startTime(init);
  const outerGone = [null, 'Z'].includes(state(outer));
  // The hold ends within 2 s: the init arms (too late), then loads its filters.
  const released = await watchReleased(init, started);
  tracer.kill('SIGKILL');
  if (!gone(init, started)) {
    try {
      process.kill(Number(init), 'SIGKILL');
    } catch {
      // gone
    }
  }
  return { hit: outerGone, init, inherited, released };
}

for (const nobody of [false, true]) {
  const who = nobody ? 'a uid-65534 provider' : 'a root provider';
  test(`${who} under a seccomp filter of its own, SIGKILLed once the init forked the starter but before it armed: the program never runs`, { skip, timeout: 300_000 }, async () => {
    if (READ_SYSCALL === undefined) return;
    let outcome = { hit: false };
    let tries = 0;
    while (tries < MAX_TRIES && !outcome.hit) {
      tries += 1;
      outcome = await seccompTry(nobody);
    }
    assert.ok(outcome.hit, `no try of ${tries} stopped the init between its fork of the starter and its arming`);
    assert.deepEqual(outcome.released, { programRan: false, endedAlone: true }, `init ${outcome.init}, born with ${outcome.inherited} filter(s)`);
  });
}

// A provider that itself runs in a bwrap sandbox with a pid namespace of its
// own: that sandbox's init (a bwrap) reaps the orphan, and must not be taken
// for a live outer bwrap (white-box review of the sweep, F2). The orphan is
// made by hand inside it (a bwrap whose release is never written, its outer
// bwrap killed); the provider's own run may fail there (no /proc mount in a
// nested pid namespace without a user namespace): the sweep runs before it.
const NESTED = (pkg, uid) => `
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const pause = (ms) => new Promise((r) => setTimeout(r, ms));
const stat = (pid) => { try { const s = fs.readFileSync('/proc/' + pid + '/stat', 'utf8'); return s.slice(s.lastIndexOf(')') + 2).split(' '); } catch { return null; } };
(async () => {
  const outer = spawn('/usr/bin/bwrap', ['--unshare-user', '--unshare-pid', '--unshare-net', '--userns-block-fd', '3', '--info-fd', '4',
    '--ro-bind', '/', '/', '/bin/sleep', '60'], { stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'], uid: ${uid}, gid: ${uid} });
  let info = '';
  for await (const chunk of outer.stdio[4]) { info += chunk; if (info.endsWith('}\\n')) break; }
  const init = JSON.parse(info)['child-pid'];
  const exited = new Promise((r) => outer.on('exit', r));
  outer.kill('SIGKILL');
  await exited;
  const ppid = stat(init)[1];
  const reaper = { pid: ppid, exe: fs.readlinkSync('/proc/' + ppid + '/exe'), nspid: fs.readFileSync('/proc/' + ppid + '/status', 'utf8').match(/^NSpid:\\s*(.*)$/m)[1] };
  const cordon = require(${JSON.stringify(pkg)});
  const ex = cordon.spawnIsolated(['/bin/true'], { policy: cordon.readOnly() });
  ex.stderr.resume(); ex.protocol.resume();
  await ex.wait().catch(() => {});
  let gone = false;
  for (let i = 0; i < 150 && !gone; i += 1) { const f = stat(init); gone = f === null || f[0] === 'Z'; if (!gone) await pause(20); }
  if (!gone) process.kill(init, 'SIGKILL');
  process.stdout.write(JSON.stringify({ reaper, gone }));
})();`;

test('a provider inside a bwrap sandbox of its own pid namespace kills an orphan that sandbox\'s init (a bwrap) reaped', { skip, timeout: 60_000 }, () => {
  const uid = h.RUN_UID_FIRST + 0xffff - Math.floor(Math.random() * 32);
  const run = spawnSync('/usr/bin/bwrap', ['--unshare-pid', '--die-with-parent', '--dev-bind', '/', '/', '--proc', '/proc',
    process.execPath, '-e', NESTED(path.join(__dirname, '..', '..'), uid)], { encoding: 'utf8', timeout: 50_000 });
  assert.equal(run.status, 0, run.stderr);
  const value = JSON.parse(run.stdout);
  assert.equal(value.reaper.exe, '/usr/bin/bwrap', `the reaper is the sandbox's bwrap init: ${run.stdout}`);
  assert.match(value.reaper.nspid, /\b1$/, 'pid 1 of its namespace');
  assert.equal(value.gone, true, `the orphan is gone after the provider's launch: ${run.stdout}`);
});
