'use strict';

// Host-wide uniqueness of session owner uids. A session's workspace is
// owned by its own uid of the launcher's workspace-owner range, and its
// sandbox runs as that uid: two live workspaces sharing one would let one
// session's commands touch the other's files and processes. Managers on
// different stores (or different hosts' views of none) cannot see each
// other's records, so the uid is claimed in one host-wide place:
// `/run/cordon-session-owners/<uid>`, created O_EXCL (the kernel settles
// every race), holding the workspace path.
//
// Why not the launcher's flock leases (uid_lease.rs)? A flock dies with
// its process, but a session workspace deliberately outlives its provider
// (a restarted provider resumes it): the claim must live exactly as long
// as the workspace. So it is removed where the workspace is (teardown,
// recover's reap), and /run is a tmpfs, cleared at reboot like the
// workspace tmpfs itself.

const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { CordonError } = require('../errors');

/** Fixed and root-owned: every root provider on the host claims here. */
const CLAIMS_DIR = '/run/cordon-session-owners';
/** Random uids tried: with 65535 owners and a few thousand sessions, 64 misses in a row do not happen. */
const MAX_ATTEMPTS = 64;

function claimsDir(dir = CLAIMS_DIR) {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = fs.lstatSync(dir);
  if (!st.isDirectory() || st.uid !== process.geteuid() || (st.mode & 0o077) !== 0) {
    throw new CordonError('ERR_CORDON_SESSION_QUOTA_UNAVAILABLE', `${dir} must be a private directory of this provider (mode 0700): refusing to claim owner uids there`);
  }
  return dir;
}

/**
 * Claims an owner uid of `range` (its first uid excluded: the default
 * owner other code hands out) for `workspace`; returns the uid.
 */
function claimOwnerUid(range, workspace, dir = CLAIMS_DIR) {
  const claims = claimsDir(dir);
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
    const uid = range.first + 1 + crypto.randomInt(range.count - 1);
    try {
      fs.writeFileSync(path.join(claims, String(uid)), `${workspace}\n`, { flag: 'wx', mode: 0o600 });
      return uid;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
    }
  }
  throw new CordonError('ERR_CORDON_SESSION_LIMIT', `no unclaimed workspace owner uid after ${MAX_ATTEMPTS} tries (${claims})`);
}

/** Releases `uid`'s claim if it is `workspace`'s (another workspace's claim is never removed). Never throws. */
function releaseOwnerUid(uid, workspace, dir = CLAIMS_DIR) {
  const file = path.join(dir, String(uid));
  try {
    if (fs.readFileSync(file, 'utf8') === `${workspace}\n`) fs.unlinkSync(file);
  } catch {
    // already released
  }
}

/** Re-asserts `uid` for `workspace` (a restarted provider resuming it): false when another workspace holds it. */
function confirmOwnerUid(uid, workspace, dir = CLAIMS_DIR) {
  const file = path.join(claimsDir(dir), String(uid));
  try {
    fs.writeFileSync(file, `${workspace}\n`, { flag: 'wx', mode: 0o600 });
    return true;
  } catch (error) {
    if (error.code !== 'EEXIST') throw error;
  }
  return fs.readFileSync(file, 'utf8') === `${workspace}\n`;
}

module.exports = { claimOwnerUid, releaseOwnerUid, confirmOwnerUid, CLAIMS_DIR };
