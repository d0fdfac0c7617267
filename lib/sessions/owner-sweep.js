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
const { bootId } = require('./holder');

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
 * Pure: what a sweep of a record's owner uid may kill, from its `holder`
 * (holder.js) — `{nsId}`: the processes of the uid in that user namespace
 * or below it (a non-root provider's session; the id is NS_GET_ID's,
 * unique within a boot); `{nsId: undefined}`: every process of the uid (a
 * root provider's session: no holder, the uid guarded by the launcher's
 * claims); `{skip}`: nothing, and why. A non-root provider never sweeps
 * its uid whole: a caller's run of that uid may be running once the
 * holder is dead (round 8, R8-1), and a namespace inode in the record
 * names whatever namespace has that number now (round 10, R10-1). So it
 * sweeps nothing for a record without an id (one made by an earlier
 * version, or on a kernel without NS_GET_ID, or before its holder was
 * recorded, when no sandbox had run) or from another boot (whose ids
 * restart, and of whose processes none survived).
 */
function sweepScope(holder, { nonRoot, bootId }) {
  if (!nonRoot) return { nsId: undefined };
  if (typeof holder?.nsId !== 'string' || typeof holder.bootId !== 'string') return { skip: 'no-namespace-id' };
  if (holder.bootId !== bootId) return { skip: 'another-boot' };
  return { nsId: holder.nsId };
}

/** sweepScope for this provider, now. */
function scopeOf(holder) {
  const nonRoot = process.geteuid() !== 0;
  return sweepScope(holder, { nonRoot, bootId: nonRoot ? bootId() : null });
}

/**
 * Kills the processes of `ownerUid` a session whose holder is `holder`
 * left (sweepScope) with the addon's `killUid` and resolves with how many;
 * rejects with ERR_CORDON_SESSION_SWEEP_FAILED. Within a non-root holder's
 * namespace, a process of the uid elsewhere — a caller's run on a
 * workspace of that uid, started once the holder was gone — is left
 * alone (round 8, R8-1).
 */
async function sweepOwner(killUid, ownerUid, holder = null) {
  try {
    const scope = scopeOf(holder);
    if (scope.skip !== undefined) return 0;
    return await killUid(ownerUid, scope.nsId);
  } catch (cause) {
    const message = String(cause?.message ?? cause).replace(/^ERR_CORDON_SESSION_SWEEP_FAILED: /, '');
    throw new CordonError('ERR_CORDON_SESSION_SWEEP_FAILED', `the session's leftover processes could not be stopped: ${message}`, { cause });
  }
}

module.exports = { sweepOwner, sweepScope, uidHasProcesses };
