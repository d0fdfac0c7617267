'use strict';

// Host-wide uniqueness of session owner uids. A session's workspace is
// owned by its own uid of the launcher's workspace-owner range, and its
// sandbox runs as that uid: two live workspaces sharing one would let one
// session's commands touch the other's files and processes. Managers on
// different stores (or different hosts' views of none) cannot see each
// other's records, so the uid is claimed in one host-wide place:
// `/run/cordon-session-owners/<uid>`, created O_EXCL (the kernel settles
// every race), holding the workspace path and the claiming provider
// `{pid, start, boot}` (like the store lease, lease.js).
//
// Why not the launcher's flock leases (uid_lease.rs)? A flock dies with
// its process, but a session workspace deliberately outlives its provider
// (a restarted provider resumes it): the claim must live as long as the
// workspace. So it is removed where the workspace is (teardown, recover's
// reap), and /run is a tmpfs, cleared at reboot like the workspace tmpfs.
//
// An orphan — a claim whose provider died (SIGKILL) and whose session
// nobody resumes (a memory store, a deleted database) — would otherwise
// hold its uid until reboot. So a claim whose provider is gone (another
// boot, or that pid dead or reused) is stale, and:
// - a provider resuming the claim's own workspace takes it over at once
//   (confirmOwnerUid: its pid is written in);
// - a new session takes a stale claim over only when it found no free
//   uid (a durable store's next provider may still resume the workspace;
//   if its uid was taken meanwhile, that resume starts afresh, never
//   sharing the uid).
// A takeover is a compare-and-swap on the claim's nonce: the taker creates
// `<uid>.takeover-<nonce>` O_EXCL (one winner per stale generation),
// checks the claim still holds that nonce, and renames its new claim over
// it. A taker that dies between the two leaves that one uid claimed (its
// marker blocks others): the original leak, bounded to one uid per crash
// inside that window.

const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { CordonError } = require('../errors');
const { bootId, startTime } = require('./lease');
const { untrustedAncestor } = require('./sessions-root');

/** Fixed and root-owned: every root provider on the host claims here. */
const CLAIMS_DIR = '/run/cordon-session-owners';
/** A non-root provider without a home of its own claims in this directory of its sessions root. */
const ROOT_CLAIMS_NAME = '.owner-claims';

/**
 * The provider's home from the password database (never $HOME: every
 * process of the uid must find the same one), when it is a directory of
 * this uid that no one else may write; else null ("nobody" has none).
 */
function ownHome() {
  try {
    const home = os.userInfo().homedir;
    const st = fs.lstatSync(home);
    return st.isDirectory() && st.uid === process.geteuid() && (st.mode & 0o022) === 0 ? home : null;
  } catch {
    return null;
  }
}

/**
 * Where this provider claims when it was not given `claimsDir`
 * (docs/sessions.md, "Owner uids"). A non-root provider's owners are its
 * own subordinate uids (no other user's), so its claims are its own, in a
 * directory only it can create: its home's `.cordon/session-owners`, which
 * every provider process of the uid finds, or, with no home, its sessions
 * root's `.owner-claims` (the root is its own, 0711, checked:
 * sessions-root.js). Never a fixed name in a world-writable directory,
 * which any local user could take first and so deny every session (round
 * 7, R7-4).
 */
function defaultClaimsDir(sessionsRoot) {
  if (process.geteuid() === 0) return CLAIMS_DIR;
  const home = ownHome();
  return home === null ? path.join(sessionsRoot, ROOT_CLAIMS_NAME) : path.join(home, '.cordon', 'session-owners');
}
/** Random uids tried: with 65535 owners and a few thousand sessions, 64 misses in a row do not happen. */
const MAX_ATTEMPTS = 64;

/**
 * Why an existing directory above `dir` could let another user move the
 * claims away (its owner is neither root nor this provider, it is writable
 * by others, or a link), or null — as the sessions root's ancestors are
 * checked (round 8, R8-6).
 */
function untrustedClaimsAncestor(dir) {
  let here = '/';
  for (const name of ['', ...path.dirname(dir).split('/').filter(Boolean)]) {
    here = path.join(here, name);
    let st;
    try {
      st = fs.lstatSync(here);
    } catch {
      return null; // missing from here on: made below, by this provider
    }
    if (st.isSymbolicLink()) return `${here} is a symbolic link`;
    const why = untrustedAncestor(st, process.geteuid());
    if (why !== null) return `${here} ${why}`;
  }
  return null;
}

function claimsDir(dir) {
  const ancestor = untrustedClaimsAncestor(dir);
  if (ancestor !== null) {
    throw new CordonError('ERR_CORDON_SESSION_QUOTA_UNAVAILABLE', 'the owner-uid claims directory (claimsDir) lies under a directory another user may change: refusing to claim owner uids there', { cause: new Error(`${dir}: its ancestor ${ancestor}`) });
  }
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = fs.lstatSync(dir);
  if (!st.isDirectory() || st.uid !== process.geteuid() || (st.mode & 0o077) !== 0) {
    throw new CordonError('ERR_CORDON_SESSION_QUOTA_UNAVAILABLE', `the owner-uid claims directory (claimsDir) must be a private directory of this provider (mode 0700): refusing to claim owner uids there`, { cause: new Error(dir) });
  }
  return dir;
}

/** This process as a claim's holder. */
let self = null;
function holder() {
  self ??= { pid: process.pid, start: startTime(process.pid), boot: bootId() };
  return self;
}

/** A new claim's text: one JSON line. */
function claimText(workspace) {
  return `${JSON.stringify({ workspace, ...holder(), nonce: crypto.randomUUID() })}\n`;
}

/**
 * Pure: the claim in `text`. A claim of the first format (the workspace
 * path alone) names no holder: it is never judged stale.
 */
function parseClaim(text) {
  try {
    const claim = JSON.parse(text);
    if (claim !== null && typeof claim === 'object' && typeof claim.workspace === 'string') return claim;
  } catch {
    // the first format
  }
  return { workspace: text.replace(/\n$/, ''), pid: null };
}

function readClaim(file) {
  try {
    return parseClaim(fs.readFileSync(file, 'utf8'));
  } catch (error) {
    if (error.code === 'ENOENT') return null;
    throw error;
  }
}

/** True when the claim's provider is gone: another boot, or its pid dead or reused. */
function isStale(claim) {
  if (claim === null || claim.pid === null || typeof claim.nonce !== 'string') return false;
  if (claim.boot !== holder().boot) return true;
  return startTime(claim.pid) !== claim.start;
}

/** Creates `<uid>` O_EXCL; false when it exists. */
function create(file, text) {
  try {
    fs.writeFileSync(file, text, { flag: 'wx', mode: 0o600 });
    return true;
  } catch (error) {
    if (error.code !== 'EEXIST') throw error;
    return false;
  }
}

/** Replaces the stale claim `seen` at `file` with `text` (compare-and-swap on its nonce); false when another taker won. */
function takeOver(file, seen, text) {
  const marker = `${file}.takeover-${seen.nonce}`;
  if (!create(marker, text)) return false;
  try {
    if (readClaim(file)?.nonce !== seen.nonce) return false;
    const next = `${file}.next-${crypto.randomUUID()}`;
    fs.writeFileSync(next, text, { flag: 'wx', mode: 0o600 });
    fs.renameSync(next, file);
    return true;
  } finally {
    fs.rmSync(marker, { force: true });
  }
}

/** Puts the taken-over claim `claim` back at `file` (this provider's takeover, undone). Never throws. */
function giveBack(file, claim) {
  try {
    const next = `${file}.next-${crypto.randomUUID()}`;
    fs.writeFileSync(next, `${JSON.stringify(claim)}\n`, { flag: 'wx', mode: 0o600 });
    fs.renameSync(next, file);
  } catch {
    // the claim stays this provider's, for a workspace it never got: released with nothing, held until reaped
  }
}

/**
 * Claims an owner uid of `range` (its first uid excluded: the default
 * owner other code hands out) for `workspace`; returns the uid. A free
 * uid first; a stale claim met on the way is taken over only when no
 * free one turned up. `inUse(uid)` (a process runs as it; a non-root
 * provider's holder of another claims directory maps it: holder.js): a
 * free uid claimed here but found in use is given back and another one
 * tried, and a stale claim of a uid in use is not taken over.
 */
function claimOwnerUid(range, workspace, dir, inUse = () => false) {
  const claims = claimsDir(dir);
  const stale = new Map();
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
    const uid = range.first + 1 + crypto.randomInt(range.count - 1);
    const file = path.join(claims, String(uid));
    if (create(file, claimText(workspace))) {
      if (!inUse(uid)) return uid;
      fs.rmSync(file, { force: true });
      continue;
    }
    const claim = readClaim(file);
    if (isStale(claim)) stale.set(uid, claim);
  }
  // A taken-over uid passes the same check as a free one: the dead provider's
  // orphans (or another directory's holder) may still run as it, and a new
  // session never shares its uid with a process (round 8, R8-8; R8-1).
  // Checked before the takeover, so the stale claim stays its workspace's.
  for (const [uid, claim] of stale) {
    const file = path.join(claims, String(uid));
    if (inUse(uid) || !takeOver(file, claim, claimText(workspace))) continue;
    // Written, then looked again, as for a free uid (R8-1's order: each side
    // writes before it reads). A run on the stale claim's own workspace,
    // which the launcher lets through as that session's, may have started
    // as the uid between the look above and the takeover: it keeps the uid,
    // and the claim goes back to its workspace.
    if (!inUse(uid)) return uid;
    giveBack(file, claim);
  }
  // The claims directory is a host path: it goes to `cause`, for the provider's logs (round 8, R8-5).
  throw new CordonError('ERR_CORDON_SESSION_LIMIT', `no unclaimed workspace owner uid after ${MAX_ATTEMPTS} tries (claims of live providers are never taken over, nor uids in use)`, { cause: new Error(`claims directory: ${claims}`) });
}

/** Releases `uid`'s claim if it is `workspace`'s (another workspace's claim is never removed). Never throws. */
function releaseOwnerUid(uid, workspace, dir) {
  const file = path.join(dir, String(uid));
  try {
    if (readClaim(file)?.workspace === workspace) fs.unlinkSync(file);
  } catch {
    // already released
  }
}

/**
 * Pure: whether `uid` is one a session of `range` may own (claimOwnerUid
 * draws them: the range without its first uid). A store record naming any
 * other uid (a host account's) is never confirmed, swept or resumed
 * (round 8, R8-7; the launcher's sweep refuses it too: uid_sweep.rs).
 */
function isSessionOwner(uid, range) {
  return Number.isSafeInteger(uid) && uid > range.first && uid < range.first + range.count;
}

function notAnOwner(uid) {
  return new CordonError('ERR_CORDON_SESSION_RECORD_INVALID', 'the stored session names an owner uid outside this provider\'s session owner range: refusing to claim, sweep or resume it', { cause: new Error(`ownerUid: ${uid}`) });
}

/**
 * Re-asserts `uid` for `workspace` (a restarted provider resuming it): a
 * stale claim of that workspace becomes this provider's; false when
 * another workspace holds the uid (taken over while nobody held ours).
 * A uid outside `range` (the provider's session owners) is refused
 * (ERR_CORDON_SESSION_RECORD_INVALID): no claim is made for it.
 */
function confirmOwnerUid(uid, workspace, dir, range) {
  if (!isSessionOwner(uid, range)) throw notAnOwner(uid);
  const file = path.join(claimsDir(dir), String(uid));
  if (create(file, claimText(workspace))) return true;
  const claim = readClaim(file);
  if (claim?.workspace !== workspace) return false;
  if (isStale(claim)) takeOver(file, claim, claimText(workspace));
  return readClaim(file)?.workspace === workspace;
}

module.exports = { claimOwnerUid, releaseOwnerUid, confirmOwnerUid, isSessionOwner, notAnOwner, parseClaim, defaultClaimsDir, CLAIMS_DIR, ROOT_CLAIMS_NAME };
