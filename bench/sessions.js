'use strict';

// Section 9: sessions (docs/sessions.md), each contestant interleaved with
// its peers in the same loop.
//   9 command: raw bwrap /bin/true  vs  spawnIsolated(['/bin/true'])  vs
//     session.exec(['/bin/true']) in a warm session (goal: <= 2 ms, <= 0.1x
//     a cold sandbox)
//   9 exec phases: a warm exec taken apart (host + framing, spawn, run + EXIT)
//   9 exec CPU: CPU per warm exec of the provider, the agent, the command
//   9 create: spawnIsolated(['/bin/true'])  vs  acquire() of a new session
//     (tmpfs mount + sandbox + agent READY) followed by nothing
//   9 files: fs.writeFile/readFile  vs  session.writeFile/readFile, 4 KiB and
//     4 MiB, on the same workspace directory
// Needs a root provider (the workspace quota is a tmpfs); skipped otherwise.

const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnIsolated, readOnly, createSessionManager } = require('..');
const { BWRAP, rawBwrap, timeChild } = require('./peers');
const { sectionRows, nowMs } = require('./stats');

async function timed(work) {
  const started = nowMs();
  await work();
  return nowMs() - started;
}

async function spawnTrue() {
  const execution = spawnIsolated(['/bin/true'], { policy: readOnly() });
  execution.protocol.resume();
  execution.stderr.resume();
  const { returncode } = await execution.wait();
  if (returncode !== 0) throw new Error(`spawnIsolated(/bin/true) exited ${returncode}`);
}

async function command(manager, { iterations, warmup }) {
  const session = await manager.acquire({ tenant: 'bench', conversation: 'warm' }, 'bench');
  const raw = rawBwrap('/bin/true');
  const samples = { bwrap: [], spawn: [], exec: [] };
  try {
    for (let i = 0; i < warmup + iterations; i += 1) {
      const b = await timeChild(BWRAP, raw.argv);
      const s = await timed(spawnTrue);
      const e = await timed(async () => {
        const r = await session.exec(['/bin/true']);
        if (r.exitCode !== 0) throw new Error(`session exec /bin/true: ${r.exitCode}`);
      });
      if (i >= warmup) { samples.bwrap.push(b); samples.spawn.push(s); samples.exec.push(e); }
    }
  } finally {
    raw.cleanup();
    await session.end();
  }
  return sectionRows('9 session command', 'ms', [
    ['raw bwrap /bin/true', samples.bwrap],
    ['spawnIsolated /bin/true', samples.spawn],
    ['session.exec /bin/true (warm)', samples.exec],
  ]);
}

/**
 * Where a warm exec's time goes, each phase timed alone in the same loop:
 * the host's own work and one frame each way around a spawn that fails at
 * once (a cwd that does not exist), EXEC → STARTED (framing
 * plus the agent's spawn of /bin/true: start() resolves at STARTED), and
 * STARTED → EXIT (the command runs, the agent reaps it and its pumps
 * see EOF, EXIT is framed back), and the whole exec again: here no cold
 * sandbox starts and ends between two execs, as it does in "9 session
 * command", whose exec shares the 2 CPUs with the previous cold
 * sandbox's teardown (bwrap's exit, the kernel's namespace cleanup).
 */
async function phases(manager, { iterations, warmup }) {
  const session = await manager.acquire({ tenant: 'bench', conversation: 'phases' }, 'bench');
  const samples = { refused: [], started: [], exited: [], exec: [] };
  try {
    for (let i = 0; i < warmup + iterations; i += 1) {
      const refused = await timed(() => session.exec(['/bin/true'], { cwd: 'no-such-dir' }).then(() => { throw new Error('a missing cwd ran'); }, (e) => {
        if (e.code !== 'ERR_CORDON_SESSION_COMMAND_FAILED') throw e;
      }));
      let handle;
      const started = await timed(async () => { handle = await session.start(['/bin/true']); });
      const exited = await timed(() => handle.wait());
      const exec = await timed(() => session.exec(['/bin/true']));
      if (i >= warmup) { samples.refused.push(refused); samples.started.push(started); samples.exited.push(exited); samples.exec.push(exec); }
    }
  } finally {
    await session.end();
  }
  return sectionRows('9 session exec phases', 'ms', [
    ['host + frames + a failed spawn (missing cwd)', samples.refused],
    ['start(): EXEC -> STARTED (agent spawn)', samples.started],
    ['wait(): STARTED -> EXIT (run, reap, EXIT)', samples.exited],
    ['session.exec /bin/true, no cold sandbox in the loop', samples.exec],
  ]);
}

async function create(manager, { creations }) {
  const samples = { spawn: [], create: [] };
  for (let i = 0; i < creations; i += 1) {
    samples.spawn.push(await timed(spawnTrue));
    let session;
    samples.create.push(await timed(async () => {
      session = await manager.acquire({ tenant: 'bench', conversation: `new-${i}` }, 'bench');
    }));
    await session.end();
  }
  return sectionRows('9 session create', 'ms', [['spawnIsolated /bin/true', samples.spawn], ['acquire() new session', samples.create]]);
}

async function files(manager, { fileRuns }) {
  const session = await manager.acquire({ tenant: 'bench', conversation: 'files' }, 'bench');
  const rows = [];
  try {
    for (const [label, bytes] of [['4 KiB', 4 << 10], ['4 MiB', 4 << 20]]) {
      const data = crypto.randomBytes(bytes);
      const plain = path.join(session.workspace, 'plain.bin');
      const samples = { fsWrite: [], fsRead: [], write: [], read: [] };
      for (let i = 0; i < fileRuns; i += 1) {
        samples.fsWrite.push(await timed(() => fs.promises.writeFile(plain, data)));
        samples.write.push(await timed(() => session.writeFile('tool.bin', data)));
        samples.fsRead.push(await timed(() => fs.promises.readFile(plain)));
        samples.read.push(await timed(() => session.readFile('tool.bin', { maxBytes: bytes })));
      }
      rows.push(...sectionRows(`9 writeFile ${label}`, 'ms', [['fs.promises.writeFile', samples.fsWrite], ['session.writeFile', samples.write]]));
      rows.push(...sectionRows(`9 readFile ${label}`, 'ms', [['fs.promises.readFile', samples.fsRead], ['session.readFile', samples.read]]));
    }
  } finally {
    await session.end();
  }
  return rows;
}

/** CPU time (ms) of `pid` itself and of its reaped children, from /proc/<pid>/stat. */
function cpuMs(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const tick = 1000 / 100; // USER_HZ
  return { self: (Number(f[11]) + Number(f[12])) * tick, children: (Number(f[13]) + Number(f[14])) * tick };
}

/** The host pid of this process's exec agent (a descendant running `agentPath`), or null. */
function agentPid(agentPath) {
  const parentOf = (pid) => {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    } catch {
      return 0;
    }
  };
  for (const name of fs.readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      if (fs.readlinkSync(`/proc/${name}/exe`) !== agentPath) continue;
    } catch {
      continue;
    }
    for (let pid = Number(name); pid > 1; pid = parentOf(pid)) if (pid === process.pid) return Number(name);
  }
  return null;
}

/** On-CPU time (ms) of each thread of this process, from /proc/self/task/<tid>/schedstat (ns; user + system). */
function threadCpuMs() {
  const out = new Map();
  for (const tid of fs.readdirSync('/proc/self/task')) {
    try {
      out.set(tid, Number(fs.readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[0]) / 1e6);
    } catch {
      // the thread ended meanwhile
    }
  }
  return out;
}

/**
 * CPU per warm exec, which the load on a shared machine inflates far less
 * than wall time: the provider split into its JS thread (V8, libuv, the
 * addon's calls made from JS, and the kernel work of those calls) and its
 * other threads (the launcher's fd-3 pumps, libuv's pool), from each
 * thread's schedstat (ns); the exec agent (utime + stime) and the command
 * itself (the agent's reaped children: fork, exec, dynamic loading of
 * /bin/true), from /proc/<agent>/stat in 10 ms ticks — so over 5 x
 * `iterations` execs.
 */
async function execCpu(manager, { iterations }) {
  const session = await manager.acquire({ tenant: 'bench', conversation: 'cpu' }, 'bench');
  const runs = 5 * iterations;
  try {
    await session.exec(['/bin/true']);
    const pid = agentPid(fs.realpathSync(require('../lib/platform-package').nativeExecutable('cordon-exec-agent')));
    if (pid === null) return [];
    const agent0 = cpuMs(pid);
    const threads0 = threadCpuMs();
    for (let i = 0; i < runs; i += 1) await session.exec(['/bin/true']);
    const threads1 = threadCpuMs();
    const agent1 = cpuMs(pid);
    const main = String(process.pid);
    let others = 0;
    for (const [tid, ms] of threads1) if (tid !== main) others += ms - (threads0.get(tid) ?? 0);
    const per = (ms) => [ms / runs];
    return sectionRows('9 session exec CPU per command', 'ms', [
      ['provider JS thread (V8, libuv, addon calls)', per(threads1.get(main) - threads0.get(main))],
      ['provider other threads (launcher fd-3 pumps)', per(others)],
      ['exec agent', per(agent1.self - agent0.self)],
      ['the command (/bin/true: spawn, exec, ld.so)', per(agent1.children - agent0.children)],
    ]);
  } finally {
    await session.end();
  }
}

async function sessions(config) {
  if (process.geteuid() !== 0) {
    console.log('section 9 (sessions) skipped: it needs a root provider (the workspace quota is a tmpfs)');
    return [];
  }
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-bench-sessions-'));
  const manager = createSessionManager({ secret: crypto.randomBytes(32), root, authorize: () => true, workspaceBytes: 64 << 20 });
  try {
    return [...(await command(manager, config)), ...(await phases(manager, config)), ...(await execCpu(manager, config)), ...(await create(manager, config)), ...(await files(manager, config))];
  } finally {
    await manager.endAll();
    fs.rmSync(root, { recursive: true, force: true });
  }
}

module.exports = { sessions };
