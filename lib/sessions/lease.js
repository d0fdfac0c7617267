'use strict';

// A store lease: which provider process holds a session. Two providers on
// one store (one SQLite file) must never drive one session (two sandboxes
// over one workspace, each tearing it down under the other), so opening a
// session claims its record atomically in the store, and a claim held by
// another live provider is refused (ERR_CORDON_SESSION_HELD).
//
// A lease `{holder, pid, start, boot, expiresAt}` is held while all of:
// same boot (boot_id; a reboot ends every provider), the process `pid`
// is alive with the same start time (a recycled pid is not the holder),
// and `expiresAt` (renewed on every touch) has not passed. A provider
// killed with SIGKILL leaves a lease nobody holds: the next provider takes
// the session over at once, without waiting for the expiry.

const crypto = require('node:crypto');
const fs = require('node:fs');
const { CordonError } = require('../errors');

/** How long after the last activity a lease lasts beyond the idle timeout (ms): a backstop, never the usual release. */
const LEASE_SLACK_MS = 60_000;

function bootId() {
  try {
    return fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return 'unknown';
  }
}

/** A process's start time (clock ticks since boot, /proc/<pid>/stat field 22), or null when it is gone. */
function startTime(pid) {
  let stat;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // The command name (field 2) may hold spaces and parentheses: fields count from the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields[19] ?? null;
}

/** This manager's leases: one holder id per manager (two managers of one process are two holders). */
function leaseHolder(ttlMs) {
  const self = { holder: crypto.randomUUID(), pid: process.pid, start: startTime(process.pid), boot: bootId() };
  return Object.freeze({
    holder: self.holder,
    /** A fresh lease of ours, valid `ttlMs` + slack from now. */
    lease: () => ({ ...self, expiresAt: Date.now() + ttlMs + LEASE_SLACK_MS }),
    /** True when `lease` is another live holder's: taking the session over is refused. */
    heldByOther(lease) {
      if (lease === null || lease === undefined || lease.holder === self.holder) return false;
      if (lease.boot !== self.boot || !(lease.expiresAt > Date.now())) return false;
      return startTime(lease.pid) === lease.start;
    },
  });
}

function heldError(lease) {
  return new CordonError('ERR_CORDON_SESSION_HELD', `the session is held by another provider process (pid ${lease.pid}) until it ends the session or exits (lease expires at ${new Date(lease.expiresAt).toISOString()})`);
}

module.exports = { leaseHolder, heldError, startTime, bootId };
