'use strict';

// Stepping a run's outer bwrap with SIGSTOP/SIGCONT until its namespace init
// exists and blocks on the eventfd that releases it: the state a provider
// killed between bwrap's clone and its release leaves behind (round 7b,
// R7b-3), reached by stepping rather than by timing (the window is a few
// microseconds of bwrap's time). Used by sessions-orphan-init.test.js and
// orphan-init.test.js; needs root (it signals another uid's bwrap).

const fs = require('node:fs');

/** x86_64 and aarch64 numbers of read(2), as /proc/<pid>/syscall shows them. */
const READ_SYSCALL = { x64: '0', arm64: '63' }[process.arch];

function readProc(pid, file) {
  try {
    return fs.readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    return null;
  }
}

function state(pid) {
  const stat = readProc(pid, 'stat');
  return stat === null ? null : stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
}

function realUid(pid) {
  const status = readProc(pid, 'status');
  const match = status && /^Uid:\s+(\d+)/m.exec(status);
  return match ? Number(match[1]) : null;
}

/** Children of every thread of `pid` (the launcher forks bwrap on a supervisor thread). */
function childrenOf(pid) {
  let tasks = [];
  try {
    tasks = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  return tasks.flatMap((tid) => (readProc(pid, `task/${tid}/children`) ?? '').split(' ').filter(Boolean));
}

/** A run's bwrap (`bwrap --args N -- …`), not the launcher's one-off backend probe (`bwrap --version` in a throw-away sandbox). */
const isRunBwrap = (pid) => {
  const argv = (readProc(pid, 'cmdline') ?? '').split('\0');
  return argv[0].endsWith('/bwrap') && argv[1] === '--args';
};

/** Sleeping in read(2) on an eventfd: bwrap's init waiting for the outer bwrap to release it. */
function blockedOnEventfd(pid) {
  const call = (readProc(pid, 'syscall') ?? '').split(' ');
  if (state(pid) !== 'S' || call[0] !== READ_SYSCALL) return false;
  try {
    return fs.readlinkSync(`/proc/${pid}/fd/${Number(call[1])}`) === 'anon_inode:[eventfd]';
  } catch {
    return false;
  }
}

const spin = (ms) => {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // busy: the step loop must not yield to the event loop
  }
};

function waitStopped(pid) {
  for (let i = 0; i < 20_000; i += 1) {
    const s = state(pid);
    if (s === 'T' || s === 't' || s === null || s === 'Z') return s;
  }
  return state(pid);
}

/**
 * Steps the outer bwrap `outer` (stopped) until its init exists. 'hit': the
 * init is blocked on its eventfd with the outer bwrap stopped before
 * releasing it (checked twice, 50 ms apart: released, it would run on);
 * 'miss': the outer bwrap got past its write (or died) within a step.
 */
function stepToClone(outer) {
  for (let step = 0; step < 200_000; step += 1) {
    const [init] = childrenOf(outer);
    if (init !== undefined) {
      for (let i = 0; i < 100; i += 1) {
        if (blockedOnEventfd(init)) {
          spin(50);
          return blockedOnEventfd(init) && state(outer) === 'T' ? { hit: true, init } : { hit: false };
        }
        spin(2);
      }
      return { hit: false };
    }
    try {
      process.kill(Number(outer), 'SIGCONT');
      process.kill(Number(outer), 'SIGSTOP');
    } catch {
      return { hit: false };
    }
    const s = waitStopped(outer);
    if (s === null || s === 'Z') return { hit: false };
  }
  return { hit: false };
}


/** The count of the eventfd that `pid` sleeps reading (its release: 0 until the outer bwrap writes it), or null. */
function releaseCount(pid) {
  const call = (readProc(pid, 'syscall') ?? '').split(' ');
  if (call[0] !== READ_SYSCALL) return null;
  const match = /^eventfd-count:\s+(\d+)/m.exec(readProc(pid, `fdinfo/${Number(call[1])}`) ?? '');
  return match ? Number(match[1]) : null;
}

/**
 * Steps the run bwrap of `provider` (a ChildProcess starting one run) to the
 * clone of its init, lets `held(init, outer)` act while both are held (it
 * resolves false for a miss), then SIGKILLs the provider and waits for its
 * exit, the outer bwrap let go. Resolves `{ outer, init }`: `init` null for a
 * miss (no run bwrap, or bwrap past its release within a step).
 */
async function killProviderAtClone(provider, held = async () => true) {
  const exited = provider.exitCode !== null || provider.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => provider.on('exit', resolve));
  let outer;
  const deadline = Date.now() + 60_000;
  while (outer === undefined && provider.exitCode === null && Date.now() < deadline) {
    outer = childrenOf(provider.pid).find(isRunBwrap);
    if (outer === undefined) await new Promise((resolve) => setImmediate(resolve));
  }
  let result = { hit: false };
  if (outer !== undefined) {
    try {
      process.kill(Number(outer), 'SIGSTOP');
      waitStopped(outer);
      result = stepToClone(outer);
      if (result.hit) result.hit = await held(result.init, outer);
    } catch {
      // bwrap already gone: a miss
    }
  }
  provider.kill('SIGKILL');
  await exited;
  if (outer !== undefined) {
    try {
      process.kill(Number(outer), 'SIGCONT');
    } catch {
      // gone with its provider, as it should be
    }
  }
  return { outer, init: result.hit ? result.init : null };
}

/** Processes whose real uid is `uid`, with what they are. */
function processesOf(uid) {
  return fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p) && realUid(p) === uid && state(p) !== 'Z')
    .map((p) => `${p} ${(readProc(p, 'cmdline') ?? '').replace(/\0/g, ' ').slice(0, 100)}`);
}

module.exports = { READ_SYSCALL, blockedOnEventfd, childrenOf, isRunBwrap, killProviderAtClone, processesOf, readProc, realUid, releaseCount, state, stepToClone, waitStopped };
