'use strict';

// The orphans of a session's owner uid U: U is claimed for one session
// (owner-claims.js) and only that session's sandboxes (and a non-root
// provider's file helper) run as U, so a process of U found while the
// session has no live sandbox was left by a provider that died. The one
// known way: a provider SIGKILLed while bwrap sets a sandbox up takes the
// outer bwrap with it, and bwrap's namespace init, which arms its own
// parent-death signal only after the outer bwrap released it, blocks
// forever, holding the session's mount namespace (round 7b, R7b-3;
// crates/launcher/src/host/uid_sweep.rs). Before a dead provider's session
// workspace is reused (a restarted sandbox) or removed (recover()'s reap, a
// kept workspace replaced), every process of U is killed (pidfds, so a
// recycled pid of another uid is never signalled). Only then: a live
// provider's own session ends with its sandbox confirmed contained, so it
// has nothing to sweep, and a sweep there would kill a run of a caller's
// workspace that shares the uid (round 8, R8-1).

const fs = require('node:fs');
const { CordonError } = require('../errors');

/**
 * Whether any host process runs as `uid` (real uid, from /proc/<pid>/status,
 * readable whatever the process's dumpable flag). A new session claims only
 * a uid nothing runs as: the workspace-owner range is also the one
 * docs/policy.md offers for a caller's own workspaces, and a run of such a
 * workspace must never share a session's uid (round 8, R8-1).
 */
function uidHasProcesses(uid) {
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let status;
    try {
      status = fs.readFileSync(`/proc/${entry}/status`, 'latin1');
    } catch {
      continue; // exited while we looked
    }
    const line = /^Uid:\s+(\d+)/m.exec(status);
    // A zombie holds nothing (its parent has yet to reap it), unless only its leader
    // exited and other threads run on (uid_sweep.rs, R8-4).
    const zombie = /^State:\s+Z/m.test(status) && Number(/^Threads:\s+(\d+)/m.exec(status)?.[1] ?? 1) <= 1;
    if (line && Number(line[1]) === uid && !zombie) return true;
  }
  return false;
}

/**
 * Kills every process of `ownerUid` with the addon's `killUid` and resolves
 * with how many; rejects with ERR_CORDON_SESSION_SWEEP_FAILED. `userns`: a
 * non-root session holder's user namespace (holder.js): then only processes
 * in it or below it (the session's sandboxes) are killed, and a process of
 * the uid elsewhere — a caller's run on a workspace of that uid, started
 * once the holder was gone — is left alone (round 8, R8-1).
 */
async function sweepOwner(killUid, ownerUid, userns = null) {
  try {
    return await killUid(ownerUid, userns ?? undefined);
  } catch (cause) {
    const message = String(cause?.message ?? cause).replace(/^ERR_CORDON_SESSION_SWEEP_FAILED: /, '');
    throw new CordonError('ERR_CORDON_SESSION_SWEEP_FAILED', `the session's leftover processes could not be stopped: ${message}`, { cause });
  }
}

module.exports = { sweepOwner, uidHasProcesses };
