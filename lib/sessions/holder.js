'use strict';

// A NON-ROOT provider's session workspace (docs/sessions.md, "Non-root
// providers"): only root may mount a tmpfs on the host, so a per-session
// *holder* process of the provider (cordon-exec-agent session-holder)
// makes a user namespace in which only the session's owner uid U exists
// (mapped here with newuidmap/newgidmap, from outside: the subordinate
// range is the provider's), then a mount namespace with the bounded tmpfs
// on `<root>/<key>`. The session's sandboxes are started inside those
// namespaces (spawnIsolated's `namespaceHolder`), and the file tools run
// there as U (holder-files.js). The workspace lives as long as the holder:
// it outlives a provider restart (recorded `{pid, start}` like the lease,
// so a recycled pid is never taken for it), not a reboot.

const fs = require('node:fs');
const os = require('node:os');
const { spawn, execFile } = require('node:child_process');
const { promisify } = require('node:util');
const { CordonError } = require('../errors');
const { startTime } = require('./lease');

const NEWUIDMAP = '/usr/bin/newuidmap';
const NEWGIDMAP = '/usr/bin/newgidmap';
/** How long the holder has for each step (ms): a static binary's few syscalls. */
const STEP_TIMEOUT_MS = 10_000;
/** After SIGKILL, how long the holder has to be gone (ms). */
const GONE_TIMEOUT_MS = 5_000;

function unavailable(message, cause) {
  return new CordonError('ERR_CORDON_SESSION_QUOTA_UNAVAILABLE', message, cause === undefined ? {} : { cause });
}

/** The owner half of this (non-root) provider's subordinate uids, as the launcher counts it (subordinate_ids.rs). */
function subordinateOwners() {
  const name = os.userInfo().username;
  const uid = String(process.geteuid());
  const find = (file) => {
    let text = '';
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch {
      return null;
    }
    for (const line of text.split('\n')) {
      const [who, first, count] = line.trim().split(':');
      if ((who === name || who === uid) && /^\d+$/.test(first ?? '') && /^\d+$/.test(count ?? '')) return { first: Number(first), count: Number(count) };
    }
    return null;
  };
  const uids = find('/etc/subuid');
  const gids = find('/etc/subgid');
  if (uids === null || gids === null || uids.first !== gids.first) {
    throw unavailable(`a non-root provider's sessions need subordinate ids for ${name} with the same first id in /etc/subuid and /etc/subgid (the owner uid is also the gid): see \`npx cordon doctor\``);
  }
  return { first: uids.first, count: Math.floor(Math.min(uids.count, gids.count) / 2) };
}

/** The inode of `pid`'s user namespace, or null when it cannot be read: for diagnostics, never an identity (R10-1). */
function userNamespaceOf(pid) {
  try {
    return fs.statSync(`/proc/${pid}/ns/user`).ino;
  } catch {
    return null;
  }
}

/** This boot's id: the kernel's namespace ids restart at boot, so a recorded one is only meaningful with it. */
function bootId() {
  return fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
}

/** Reads one line (a step word) from the holder's stdout, bounded in time. */
function nextLine(reader) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no word from the holder within ${STEP_TIMEOUT_MS} ms`)), STEP_TIMEOUT_MS);
    reader.wait = (line, error) => {
      clearTimeout(timer);
      if (error) reject(error);
      else resolve(line);
    };
    reader.flush();
  });
}

function lineReader(child) {
  const reader = { buffer: '', lines: [], ended: null, wait: null };
  reader.flush = () => {
    if (reader.wait === null) return;
    const wait = reader.wait;
    if (reader.lines.length > 0) {
      reader.wait = null;
      wait(reader.lines.shift());
    } else if (reader.ended !== null) {
      reader.wait = null;
      wait(null, reader.ended);
    }
  };
  // First, before the pipes are touched: a spawn that fails (EMFILE, EAGAIN)
  // has none, and its 'error' event, unheard, would kill the provider (round 9, R9-1).
  child.on('error', (error) => {
    reader.ended = error;
    reader.flush();
  });
  if (!child.stdin || !child.stdout || !child.stderr) return reader; // none when the spawn failed
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr = (stderr + chunk).slice(-1024);
  });
  child.stdout.setEncoding('utf8').on('data', (chunk) => {
    reader.buffer += chunk;
    const parts = reader.buffer.split('\n');
    reader.buffer = parts.pop().slice(-256);
    reader.lines.push(...parts);
    reader.flush();
  });
  child.on('exit', (code, signal) => {
    setImmediate(() => {
      reader.ended = new Error(`the holder exited (${signal ?? `status ${code}`}): ${stderr.trim()}`);
      reader.flush();
    });
  });
  return reader;
}

/** True while the recorded holder is that very process, alive (not a zombie, not a recycled pid). */
function holderAlive(holder) {
  if (holder === null || holder === undefined) return false;
  let stat;
  try {
    stat = fs.readFileSync(`/proc/${holder.pid}/stat`, 'utf8');
  } catch {
    return false;
  }
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  return state !== 'Z' && startTime(holder.pid) === holder.start;
}

/**
 * Starts the holder for `dir` (an empty directory of this provider) and
 * resolves with `{pid, start, userns, nsId, bootId}` once the tmpfs is
 * mounted in it and `persist(holder)` (the caller's durable record of it)
 * resolved: only then is the holder told to `keep`; a provider killed
 * before that leaves a holder that exits on EOF. Fails closed (the holder
 * killed) otherwise. `namespaceId(pid)`: the addon's userNamespaceId;
 * `uidInUse(uid)`: whether a process runs as the uid.
 */
async function startHolder({ agentPath, dir, ownerUid, quotaBytes, inodes, persist, namespaceId, uidInUse = () => false }) {
  // detached: its own session and process group, so a signal to the
  // provider's group (Ctrl-C) does not take the workspace with it.
  // Its argv is the subcommand alone: the request, which names the workspace,
  // goes on stdin, as session-files' (/proc/<pid>/cmdline is world-readable; R9-5).
  const child = spawn(agentPath, ['session-holder'], { stdio: ['pipe', 'pipe', 'pipe'], detached: true, cwd: '/', env: {} });
  const reader = lineReader(child);
  try {
    // No 'error' of the pipe reaches the provider: a holder that is gone surfaces as the exit the reader reports.
    child.stdin?.on('error', () => {});
    child.stdin?.write(`${JSON.stringify([String(ownerUid), dir, String(quotaBytes), String(inodes)])}\n`);
    if ((await nextLine(reader)) !== 'unshared') throw new Error('the holder did not say "unshared"');
    // Asynchronously: each helper may take up to STEP_TIMEOUT_MS, and the
    // provider's other sessions must not stall on this acquire meanwhile.
    for (const helper of [NEWUIDMAP, NEWGIDMAP]) {
      await promisify(execFile)(helper, [String(child.pid), String(ownerUid), String(ownerUid), '1'], { timeout: STEP_TIMEOUT_MS, env: {} });
    }
    // Mapped: from now on the launcher refuses a caller's run of this uid
    // (session_owner_claims.rs). A run that chose it a moment before, when
    // the claim's own check found nothing running as it, re-reads the maps
    // once its bwrap runs as the uid; this looks for processes of the uid
    // once the map is there. Each side writes, then reads: one of them sees
    // the other (round 8, R8-1's race; the holder itself runs as the provider).
    if (uidInUse(ownerUid)) throw new Error(`a process runs as the owner uid ${ownerUid} (a run chose it while this session claimed it): try again`);
    child.stdin.write('mapped\n');
    if ((await nextLine(reader)) !== 'ready') throw new Error('the holder did not say "ready"');
  } catch (error) {
    child.kill('SIGKILL');
    throw unavailable(`the session holder could not mount a ${quotaBytes}-byte workspace at ${dir}: ${String(error.stderr ?? error.message).trim()}`, error);
  }
  // Its user namespace too: after a dead provider, only processes in it (or in a
  // sandbox's below it) are the session's to sweep (owner-sweep.js; round 8, R8-1).
  // Named by NS_GET_ID and this boot, never by its inode, which the kernel hands
  // out again (round 10, R10-1); null on a kernel without NS_GET_ID (sweepScope).
  const holder = { pid: child.pid, start: startTime(child.pid), userns: userNamespaceOf(child.pid), nsId: namespaceId(child.pid), bootId: bootId() };
  try {
    await persist(holder);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  child.stdin.write('keep\n');
  child.stdin.destroy();
  child.stdout.destroy();
  child.stderr.destroy();
  child.unref();
  return holder;
}

/**
 * Pure: whether a `uid_map` (as read from the initial user namespace) is a
 * session holder's for `uid`: a holder maps exactly its owner uid to
 * itself (`U U 1`: startHolder's newuidmap). A wider mapping that merely
 * covers U — rootless Podman's pause process maps the whole subordinate
 * range (`0 <first> 65536`), as may any process of the provider's uid —
 * is no session's and does not make U taken (round 8, R8-5).
 */
function mapsAsHolder(map, uid) {
  return map.split('\n').some((line) => {
    const [inside, outside, count] = line.trim().split(/\s+/).map(Number);
    return inside === uid && outside === uid && count === 1;
  });
}

/**
 * Whether a live process of this provider's uid holds `uid` as a session
 * holder does (mapsAsHolder): the holder of a live workspace whose claim
 * is in another claims directory (a provider of the same uid given another
 * `claimsDir` or sessions root, owner-claims.js). So such providers still
 * never hand out one owner uid twice while both workspaces live, nor sweep
 * the other's (R8-2). `exceptPid`: a workspace's own holder, not counted
 * (a sweep's check, manager.js).
 */
function mappedByLiveHolder(uid, exceptPid = null) {
  const me = process.geteuid();
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(pid) || Number(pid) === exceptPid) continue;
    let map;
    try {
      if (fs.statSync(`/proc/${pid}`).uid !== me) continue;
      // A zombie (a dead holder not yet reaped) still shows its map, and holds nothing.
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(') ') + 2).startsWith('Z')) continue;
      // A run's own uid-map helper (a fork of this provider, never exec'd) has
      // a holder's map for an instant, and holds nothing: only the exec
      // agent's session-holder command is a holder.
      if (fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0')[1] !== 'session-holder') continue;
      map = fs.readFileSync(`/proc/${pid}/uid_map`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    if (mapsAsHolder(map, uid)) return true;
  }
  return false;
}

/** Kills the recorded holder (its workspace goes with it) and waits until it is gone. Never throws. */
async function stopHolder(holder) {
  if (!holderAlive(holder)) return true;
  try {
    process.kill(holder.pid, 'SIGKILL');
  } catch {
    // gone meanwhile
  }
  const deadline = Date.now() + GONE_TIMEOUT_MS;
  while (holderAlive(holder) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  return !holderAlive(holder);
}

module.exports = { startHolder, stopHolder, holderAlive, subordinateOwners, mappedByLiveHolder, mapsAsHolder, bootId };
