'use strict';

// The orphans of a session's owner uid U: U is claimed for one session
// (owner-claims.js) and only that session's sandboxes (and a non-root
// provider's file helper) run as U, so a process of U found while the
// session has no live sandbox was left by a provider that died. The one
// known way: a provider SIGKILLed while bwrap sets a sandbox up takes the
// outer bwrap with it, and bwrap's namespace init, which arms its own
// parent-death signal only after the outer bwrap released it, blocks
// forever, holding the session's mount namespace (round 7b, R7b-3;
// crates/launcher/src/host/uid_sweep.rs). Before a session's workspace is
// reused (a restarted sandbox) or removed, every process of U is killed
// (pidfds, so a recycled pid of another uid is never signalled).

const { CordonError } = require('../errors');

/** Kills every process of `ownerUid` with the addon's `killUid` and resolves with how many; rejects with ERR_CORDON_SESSION_SWEEP_FAILED. */
async function sweepOwner(killUid, ownerUid) {
  try {
    return await killUid(ownerUid);
  } catch (cause) {
    const message = String(cause?.message ?? cause).replace(/^ERR_CORDON_SESSION_SWEEP_FAILED: /, '');
    throw new CordonError('ERR_CORDON_SESSION_SWEEP_FAILED', `the session's leftover processes could not be stopped: ${message}`, { cause });
  }
}

module.exports = { sweepOwner };
