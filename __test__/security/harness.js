'use strict';

// Shared by the security battery and the soak: builds the attacker
// (probe.c) once per process, runs it in a real sandbox, and looks at the
// host afterwards (processes, control roots, descriptors).

const assert = require('node:assert/strict');
const { execFileSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { setTimeout: sleep } = require('node:timers/promises');

const cordon = require('../..');
const { isPairMaker } = require('../spawn-support');

/** stderr kept per run: far above a probe's report, bounded for floods. */
const MAX_CAPTURE_BYTES = 1 << 20;
/**
 * The uid sandboxes run as when the provider is root: reserved for them, used
 * by no host account (process_identity.rs SANDBOX_UID, docs/security.md).
 */
const SANDBOX_UID = 0x7000_0000;
/**
 * The first per-run uid (process_identity.rs RUN_UID_FIRST): a root
 * provider's runs without a workspace of a reserved owner lease one of
 * RUN_UID_FIRST..RUN_UID_FIRST+65536 for their lifetime.
 */
const RUN_UID_FIRST = SANDBOX_UID + 0x1_0000;
/** The whole reserved range: workspace owners, then per-run uids. */
const RESERVED_UIDS = { first: SANDBOX_UID, end: RUN_UID_FIRST + 0x1_0000 };
/** "nobody": an ordinary host account that daemons share, never the sandbox's. */
const NOBODY_UID = 65534;
/**
 * The non-root pass (scripts/test.js): this process is a uid-65534 provider
 * running the security suites again. Tests meaningful only for a root
 * provider are not registered in it (each says why), rather than skipped.
 */
const NONROOT_PASS = process.env.CORDON_TEST_PROVIDER === 'nobody';

/** Why the battery cannot run here, or null. */
function skipReason() {
  if (process.platform !== 'linux') return 'the battery needs Linux';
  for (const bwrap of ['/usr/bin/bwrap', '/usr/local/bin/bwrap', '/bin/bwrap']) {
    if (fs.existsSync(bwrap)) return compiler() ? null : 'no C compiler (cc) with static glibc to build the attacker';
  }
  return 'bubblewrap is not installed';
}

function compiler() {
  try {
    execFileSync('cc', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const compiledPaths = new Map();

/**
 * Compiles an attacker (`probe.c`, `round3.c`: static, so the sandbox needs
 * no loader) once per process, in a world-readable temp dir any provider
 * uid can execute from; removed at exit.
 */
function compiled(source) {
  if (compiledPaths.has(source)) return compiledPaths.get(source);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-attacker-'));
  fs.chmodSync(dir, 0o755);
  const out = path.join(dir, path.basename(source, '.c'));
  execFileSync('cc', ['-static', '-O1', '-Wall', '-Werror', '-o', out, path.join(__dirname, source)]);
  compiledPaths.set(source, out);
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  return out;
}

/**
 * The first workspace-owner id pair of the uid-65534 provider: the first ids
 * of its /etc/subuid and /etc/subgid ranges (the owner half starts there).
 * A workspace it hands its sandboxes must be owned by these, not by 65534:
 * its sandboxes never run as 65534. Null without a range (.ci/run adds one).
 */
function nobodyOwner() {
  const first = (file) => {
    const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
    const line = text.split('\n').find((l) => l.startsWith('nobody:') || l.startsWith(`${NOBODY_UID}:`));
    return line ? Number(line.split(':')[1]) : null;
  };
  const uid = first('/etc/subuid');
  const gid = first('/etc/subgid');
  return uid === null || gid === null ? null : { uid, gid };
}

/**
 * Hands a new, empty directory to the owner its sandboxes run as when it is
 * their writable workspace: a root provider's first reserved owner uid; a
 * uid-65534 provider's first subordinate owner id, chowned from a user
 * namespace in which its own uid is 0 and that owner is 1 (util-linux
 * `unshare`, through newuidmap): it cannot chown to a subordinate id
 * directly. A non-root provider without a range keeps the directory (its
 * launch is then refused, as it should be).
 */
function ownForSandbox(dir) {
  if (process.geteuid() === 0) {
    fs.chownSync(dir, SANDBOX_UID, SANDBOX_UID);
    return;
  }
  const owner = process.geteuid() === NOBODY_UID ? nobodyOwner() : null;
  if (!owner) return;
  execFileSync('unshare', ['--map-root-user', `--map-users=${owner.uid},1,1`, `--map-groups=${owner.gid},1,1`, 'chown', '1:1', dir]);
}

/**
 * Removes a directory handed over with `ownForSandbox`, with whatever the
 * sandbox left in it: a non-root provider removes it from the same kind of
 * user namespace (the files are its sandbox owner's, not its own).
 */
function removeOwned(dir) {
  const owner = process.geteuid() === NOBODY_UID ? nobodyOwner() : null;
  if (!owner) {
    fs.rmSync(dir, { recursive: true, force: true });
    return;
  }
  execFileSync('unshare', ['--map-root-user', `--map-users=${owner.uid},1,1`, `--map-groups=${owner.gid},1,1`, 'rm', '-rf', '--', dir]);
}

/** The battery's attacker, probe.c, compiled. */
function probe() {
  return compiled('probe.c');
}

/**
 * One run first: process-wide state the first launch creates once (the
 * launcher's supervision runtime: an epoll and its waker) is then not a
 * descriptor a probe left behind.
 */
async function warmUp(cordon) {
  const warm = cordon.spawnIsolated(['/bin/true'], { policy: cordon.readOnly() });
  warm.protocol.resume();
  warm.stderr.resume();
  await warm.wait();
}

/** Reads a stream to its end, keeping at most `max` bytes (the rest counted). */
function capture(stream, max = MAX_CAPTURE_BYTES) {
  const chunks = [];
  let kept = 0;
  let total = 0;
  stream.on('data', (chunk) => {
    total += chunk.length;
    if (kept < max) {
      chunks.push(chunk.subarray(0, max - kept));
      kept += Math.min(chunk.length, max - kept);
    }
  });
  return new Promise((resolve) => {
    stream.on('end', () => resolve({ text: Buffer.concat(chunks).toString('utf8'), total }));
    stream.on('error', () => resolve({ text: Buffer.concat(chunks).toString('utf8'), total }));
  });
}

/**
 * Runs one attack in a sandbox. `during(execution, started)` runs while it
 * is alive; `started` resolves at the program's first output.
 * @returns {Promise<{results: Map<string, {verdict: string, detail: string}>,
 *   text: string, returncode: number|null, signal: string|null, receipt: object,
 *   protocol: {text: string, total: number}, ms: number}>}
 */
async function attack(args, options = {}, during = null) {
  const startedAt = Date.now();
  const { policy = cordon.readOnly(), ...rest } = options;
  const execution = cordon.spawnIsolated([probe(), ...args], { policy, ...rest });
  // Resolves at the program's first output: the sandbox is set up by then.
  const started = new Promise((resolve) => execution.stderr.once('data', resolve));
  const stderr = capture(execution.stderr);
  const protocol = capture(execution.protocol, 1 << 16);
  if (during) await during(execution, started);
  const outcome = await execution.wait();
  const { text } = await stderr;
  return { ...outcome, text, protocol: await protocol, results: parseResults(text), ms: Date.now() - startedAt };
}

/** `RESULT <name> <blocked|open> <detail>` lines → a map by name. */
function parseResults(text) {
  const results = new Map();
  for (const line of text.split('\n')) {
    const match = /^RESULT (\S+) (blocked|open) ?(.*)$/.exec(line);
    if (match) results.set(match[1], { verdict: match[2], detail: match[3] });
  }
  return results;
}

/**
 * Host pids for which `test(pid)` holds; processes that exit meanwhile are
 * skipped, and so are providers' pair makers (spawn-support's isPairMaker:
 * they share their provider's memory, so its command line, and live as
 * long as it).
 */
function pidsWhere(test) {
  const found = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (isPairMaker(entry)) continue;
      if (test(entry)) found.push(Number(entry));
    } catch {
      // exited while we looked
    }
  }
  return found;
}

/** Host pids whose command line contains `marker`. */
function processesWith(marker) {
  return pidsWhere((pid) => fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker));
}

/**
 * Live session holders (`cordon-exec-agent session-holder`) whose workspace
 * tmpfs is mounted under `prefix`: their argv names no path (the request
 * comes on stdin, round 10), their mount table does. A zombie has neither.
 */
function sessionHolders(prefix) {
  return pidsWhere((pid) => {
    if (fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[1] !== 'session-holder') return false;
    return fs.readFileSync(`/proc/${pid}/mountinfo`, 'utf8').split('\n').some((line) => (line.split(' ')[4] ?? '').startsWith(prefix));
  });
}

/** Host processes of a reserved sandbox uid (all sandboxes, when the host is root). */
function sandboxUidProcesses() {
  return pidsWhere((pid) => {
    const uid = Number(/^Uid:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);
    return uid >= RESERVED_UIDS.first && uid < RESERVED_UIDS.end;
  });
}

/** Children of this Node process that are zombies. */
function zombieChildren() {
  return pidsWhere((pid) => {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[0] === 'Z' && Number(fields[1]) === process.pid;
  });
}

/** Live (not zombie) host processes whose command line contains `marker`. */
function liveProcessesWith(marker) {
  return processesWith(marker).filter((pid) => {
    try {
      return !fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].startsWith('Z');
    } catch {
      return false;
    }
  });
}

/**
 * After a probe: the test process still forks and execs, and nothing of
 * the attack is left on the host — no control root of this process beyond
 * `rootsBefore`, no zombie child, no live process of the attacker binary
 * (`attacker`, its path). Polled for up to 10 s: a SIGKILLed helper
 * (e.g. the uid sentinel) is reaped by libuv asynchronously.
 */
async function hostUnharmed(rootsBefore, attacker) {
  assert.equal(execFileSync('/bin/echo', ['host ok']).toString(), 'host ok\n', 'the test process can still fork and exec');
  let left;
  // Up to 10 s: killed helpers must be reaped, on a loaded machine too.
  for (let i = 0; i < 500; i += 1) {
    left = {
      controlRoots: controlRoots().filter((r) => !rootsBefore.includes(r)),
      zombies: zombieChildren(),
      attackers: liveProcessesWith(attacker),
    };
    if (Object.values(left).every((list) => list.length === 0)) return;
    await sleep(20);
  }
  assert.deepEqual(left, { controlRoots: [], zombies: [], attackers: [] }, 'the host is left as it was');
}

/** The attacker reported `name` blocked (its detail matching `detailPattern`, when one is given). */
function expectBlocked(run, name, detailPattern) {
  const result = run.results.get(name);
  assert.ok(result, `no RESULT for ${name}; sandbox output: ${run.text.slice(0, 500)}`);
  assert.equal(result.verdict, 'blocked', `${name} worked: ${result.detail}`);
  if (detailPattern) assert.match(result.detail, detailPattern);
}

/**
 * Whether this kernel lets the launcher refuse descriptors sent to fd 3's
 * host end (SO_PASSRIGHTS off, Linux 6.16+), asked of the kernel directly
 * (not of cordon), so a launcher that stopped refusing them fails the tests.
 */
function kernelRefusesPassedFds() {
  const check = 'import socket; a, b = socket.socketpair(); a.setsockopt(socket.SOL_SOCKET, 83, 0)';
  return require('node:child_process').spawnSync('python3', ['-c', check]).status === 0;
}

function openFdCount() {
  return fs.readdirSync('/proc/self/fd').length;
}

/**
 * This process's descriptor count once it is at most `limit`, waiting up to
 * 10 s for descriptors other async work still holds (pump threads, a
 * detached closer) to close: a leaked one stays, and the count read last is
 * returned for the caller's assertion.
 */
async function settledFdCount(limit) {
  let count = openFdCount();
  for (let i = 0; i < 500 && count > limit; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    count = openFdCount();
  }
  return count;
}

/** This process's descriptors: number → what it refers to. */
function openFds() {
  const fds = new Map();
  for (const fd of fs.readdirSync('/proc/self/fd')) {
    try { fds.set(fd, fs.readlinkSync(`/proc/self/fd/${fd}`)); } catch { /* the listing's own descriptor, closed already */ }
  }
  return fds;
}

/** Where the launcher puts control roots on this host (the addon knows). */
function controlRootBase() {
  return require('../../binding.js').controlRootBase();
}

/**
 * Control roots this process owns (their `owner` record names our pid):
 * other processes may be running sandboxes under the same base meanwhile.
 */
function controlRoots() {
  const base = controlRootBase();
  let names;
  try {
    names = fs.readdirSync(base).filter((name) => name !== 'exec');
  } catch {
    return [];
  }
  return names.filter((name) => {
    try {
      return fs.readFileSync(path.join(base, name, 'owner'), 'utf8').split(' ')[0] === String(process.pid);
    } catch {
      return false;
    }
  });
}

/**
 * A host process running as the uid a sandbox would share if any: a root
 * provider's reserved sandbox uid; for a non-root provider its own uid (what
 * its sandboxes ran as before they had subordinate ids). The test kills it.
 */
function sandboxUidSentinel() {
  const identity = process.geteuid() === 0 ? { uid: SANDBOX_UID, gid: SANDBOX_UID } : {};
  return spawn('/usr/bin/sleep', ['300'], { ...identity, stdio: 'ignore', cwd: '/' });
}

/**
 * Runs `script` (CommonJS, with `cordon` and `probe` — the addon and the
 * attacker's path — in scope) in a provider process of its own, so that a
 * provider crash is a test failure rather than the test process's death,
 * and returns the JSON it prints (and the provider's pid). `asNobody`: the provider runs as uid
 * 65534, for which no cgroup is writable. `skip` is set instead when that
 * uid cannot read the checkout (a clone in a 0700 directory) or this
 * process is not root.
 */
function runProvider(script, { asNobody = false, timeoutMs = 60_000 } = {}) {
  // Already uid 65534 (the non-root pass): the provider runs as this uid.
  const switchUid = asNobody && process.geteuid() !== NOBODY_UID;
  if (switchUid && process.geteuid() !== 0) return { skip: 'needs root to run a provider as uid 65534 (a user with no cgroup)' };
  // uid 65534 runs from a world-readable copy of the package (and of Node when
  // needed): a checkout under a 0700 directory is unreadable for it.
  const { node, pkg } = switchUid ? require('./nobody-provider').nobodyProvider() : { node: process.execPath, pkg: path.join(__dirname, '..', '..') };
  const prelude = `const cordon = require(${JSON.stringify(pkg)}); const probe = ${JSON.stringify(probe())};\n`;
  // No TMPDIR: control roots go to the default base (/dev/shm when it is a
  // tmpfs) as for the root provider; on a disk-backed base every directory
  // removed can cost a synchronous discard (~1.5 ms here), which would make
  // a 20 000-level tree's removal a test of the disk.
  const identity = switchUid ? { uid: NOBODY_UID, gid: NOBODY_UID, env: { PATH: process.env.PATH } } : {};
  const run = require('node:child_process').spawnSync(node, ['-e', prelude + script], {
    cwd: '/', encoding: 'utf8', timeout: timeoutMs, ...identity,
  });
  if (run.status !== 0) return { pid: run.pid, error: `provider exited ${run.status ?? run.signal}: ${run.stderr}` };
  return { pid: run.pid, value: JSON.parse(run.stdout) };
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

module.exports = {
  kernelRefusesPassedFds,
  attack,
  alive,
  compiled,
  nobodyOwner,
  ownForSandbox,
  removeOwned,
  controlRootBase,
  controlRoots,
  expectBlocked,
  hostUnharmed,
  liveProcessesWith,
  openFdCount,
  openFds,
  settledFdCount,
  parseResults,
  probe,
  processesWith,
  runProvider,
  sandboxUidProcesses,
  sandboxUidSentinel,
  sessionHolders,
  skipReason,
  warmUp,
  zombieChildren,
  NOBODY_UID,
  NONROOT_PASS,
  RESERVED_UIDS,
  RUN_UID_FIRST,
  SANDBOX_UID,
};
