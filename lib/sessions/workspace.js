'use strict';

// A session's workspace on the host: `<root>/<key>/ws`, a tmpfs mounted
// there by the (root) provider with `size=` and `nr_inodes=`, owned by the
// session's own uid of the launcher's workspace-owner range. `<key>` is a
// directory of that uid, mode 0700, that no sandbox sees: the tmpfs's own
// root is the sandbox's `/workspace`, whose mode its commands may change
// (`chmod 777 /workspace`), so it is never what keeps other local users
// out — `<key>` is (round 7b, R7b-5; the sessions root is 0711 so that
// the owner uid can reach it). The kernel
// enforces the quota (ENOSPC inside the sandbox), not a count we keep; the
// sandbox runs as that owner (docs/policy.md, "workspace-owner"), so what
// it leaves stays usable by the session's next command and by no other
// session. Removal is `umount` (the whole tree goes with the filesystem),
// then the launcher's bounded tree removal of whatever is left there.
// The mount outlives the provider process (not a reboot): a restarted
// provider finds the files and resumes, or reaps. A non-root provider
// cannot mount on the host: its workspace is the same tmpfs held by a
// holder process in namespaces of its own (holder.js), living as long as
// that process.

const fs = require('node:fs');
const path = require('node:path');
const { CordonError } = require('../errors');
const { openSessionsRoot, makeKeyDir, undoMount } = require('./sessions-root');
const { runMountTool, onDescriptor, MOUNT, UMOUNT } = require('./mount-tool');
const { startHolder, stopHolder, holderAlive } = require('./holder');
const { sweepOwner } = require('./owner-sweep');

/** Inodes per MiB of quota: a session cannot exhaust inodes before bytes by much. */
const INODES_PER_MIB = 256;

function quotaUnavailable(message, cause) {
  return new CordonError('ERR_CORDON_SESSION_QUOTA_UNAVAILABLE', message, cause === undefined ? {} : { cause });
}

/** The sessions root: created 0711, checked, and held by a descriptor (sessions-root.js). */
function prepareRoot(root) {
  return openSessionsRoot(root);
}

/** True when `dir` is a mount point (its device differs from its parent's). */
function isMounted(dir) {
  try {
    const here = fs.lstatSync(dir);
    return here.isDirectory() && here.dev !== fs.lstatSync(path.dirname(dir)).dev;
  } catch {
    return false;
  }
}

/** The workspace's inode quota (`nr_inodes`) for `quotaBytes`. */
function inodesFor(quotaBytes) {
  return Math.max(1024, Math.ceil(quotaBytes / (1 << 20)) * INODES_PER_MIB);
}

/** Whether this provider holds workspaces through a holder process (not root: holder.js). */
const viaHolder = () => process.geteuid() !== 0;

/** The directory a root provider mounts a session's tmpfs on, inside `<root>/<key>`. */
const MOUNT_DIR = 'ws';

/** Pure: the workspace of session `key` (the holder's mount point is `<key>` itself: no host user can see into a holder's tmpfs). */
function workspacePath(rootPath, key, holder = viaHolder()) {
  return holder ? path.join(rootPath, key) : path.join(rootPath, key, MOUNT_DIR);
}

/**
 * Creates the workspace `<root>/<key>` and resolves with its holder
 * (`{pid, start, userns, nsId, bootId}`, a non-root provider: holder.js) or null (root: a tmpfs
 * mounted on the host). `persist(holder)` records the holder durably
 * before it is told to stay (holder.js); `uidInUse(uid)`: whether a process
 * runs as the uid (owner-sweep.js). Fails closed: nothing left when
 * the quota cannot be applied.
 */
async function createWorkspace({ root, key, ownerUid, quotaBytes, agentPath, persist, namespaceId, uidInUse }) {
  if (!viaHolder()) {
    await mountWorkspace({ root, key, ownerUid, quotaBytes });
    return null;
  }
  const dir = path.join(root.path, key);
  fs.closeSync(makeKeyDir(root, key));
  try {
    return await startHolder({ agentPath, dir, ownerUid, quotaBytes, inodes: inodesFor(quotaBytes), persist, namespaceId, uidInUse });
  } catch (error) {
    fs.rmdirSync(`/proc/self/fd/${root.fd}/${key}`);
    throw error;
  }
}

/** Whether a record's workspace is still there: its holder alive, or its tmpfs mounted. */
function workspaceLive(record) {
  return record.holder ? holderAlive(record.holder) : isMounted(record.workspace);
}

/**
 * Mounts the workspace `<root>/<key>` through the held root (mkdirat,
 * mount on the new directory's descriptor); fails closed (nothing left,
 * the mount undone) when the quota cannot be applied. Root only. mount(8)
 * runs off the event loop (mount-tool.js).
 */
async function mountWorkspace({ root, key, ownerUid, quotaBytes }) {
  const dir = workspacePath(root.path, key, false);
  const keyFd = makeKeyDir(root, key);
  let mountFd = null;
  const inodes = inodesFor(quotaBytes);
  const options = `size=${quotaBytes},nr_inodes=${inodes},mode=0700,uid=${ownerUid},gid=${ownerUid},nosuid,nodev`;
  try {
    // `<key>`: the owner's, 0700 (the launcher binds `ws` as the owner, who must search `<key>`).
    fs.mkdirSync(`/proc/self/fd/${keyFd}/${MOUNT_DIR}`, { mode: 0o700 });
    mountFd = fs.openSync(`/proc/self/fd/${keyFd}/${MOUNT_DIR}`, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY | fs.constants.O_NOFOLLOW | fs.constants.O_CLOEXEC);
    fs.fchownSync(keyFd, ownerUid, ownerUid);
    await onDescriptor(MOUNT, ['-t', 'tmpfs', '-o', options, 'cordon-session'], mountFd);
    if (!isMounted(dir)) throw new Error(`mount(8) reported success but ${dir} is not a mount point`);
  } catch (cause) {
    await undoMount(root, key, MOUNT_DIR);
    throw quotaUnavailable(`mount a ${quotaBytes}-byte tmpfs at ${dir}: ${String(cause.stderr ?? cause.message).trim()}`, cause);
  } finally {
    if (mountFd !== null) fs.closeSync(mountFd);
    fs.closeSync(keyFd);
  }
}

/**
 * Kills what is left of the session's owner uid when `sweep` (a dead
 * provider's workspace whose uid's claim the caller holds for it, owner-claims.js: a uid taken
 * over by another session is never swept; owner-sweep.js: the orphans of
 * a provider that died mid-start would otherwise pin the workspace), then
 * unmounts (which frees the whole tree), then removes
 * what is left at the mount point with the launcher's bounded tree
 * removal (tree_removal.rs: iterative, constant descriptors, never follows
 * a link, never leaves the tree's filesystem). What is left is normally an
 * empty directory; it is the whole planted tree when the workspace is not
 * (or no longer) a mount, or when a busy mount could only be detached: its
 * inodes are freed now rather than when the last holder lets go.
 * `deps.removeTree.{tree,contents}(dir)` are the addon's (promises: the
 * walk runs off the event loop), `deps.killUid(uid, nsId)` its uid sweep. Never
 * throws: returns what happened.
 */
async function removeWorkspace({ workspace: dir, holder = null, ownerUid }, deps, { sweep }) {
  const report = { removed: false, detail: null };
  const { removeTree } = deps;
  try {
    if (sweep) await sweepOwner(deps.killUid, ownerUid, holder);
    if (holder && !(await stopHolder(holder))) throw new Error(`the workspace holder ${holder.pid} did not end`);
    if (!holder && isMounted(dir)) {
      try {
        await runMountTool(UMOUNT, [dir]);
      } catch (error) {
        await removeTree.contents(dir);
        await runMountTool(UMOUNT, ['-l', dir]);
        report.detail = `emptied, then unmounted lazily: ${String(error.stderr ?? error.message).trim()}`;
      }
    }
    await removeTree.tree(dir);
    // A root provider's `<key>` (workspacePath): empty once `ws` is gone.
    if (!holder && path.basename(dir) === MOUNT_DIR) fs.rmdirSync(path.dirname(dir));
    report.removed = true;
  } catch (error) {
    report.detail = String(error?.message ?? error);
  }
  return report;
}

module.exports = { prepareRoot, createWorkspace, removeWorkspace, workspaceLive, workspacePath, isMounted, inodesFor, viaHolder };
