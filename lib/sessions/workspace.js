'use strict';

// A session's workspace on the host: `<root>/<key>`, a tmpfs mounted there
// by the (root) provider with `size=` and `nr_inodes=`, owned by the
// session's own uid of the launcher's workspace-owner range. The kernel
// enforces the quota (ENOSPC inside the sandbox), not a count we keep; the
// sandbox runs as that owner (docs/policy.md, "workspace-owner"), so what
// it leaves stays usable by the session's next command and by no other
// session. Removal is `umount` (the whole tree goes with the filesystem),
// then the launcher's bounded tree removal of whatever is left there.
// The mount outlives the provider process (not a reboot): a restarted
// provider finds the files and resumes, or reaps.

const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { CordonError } = require('../errors');

/** Fixed locations of mount(8)/umount(8): never an inherited $PATH. */
const MOUNT = '/usr/bin/mount';
const UMOUNT = '/usr/bin/umount';
/** Inodes per MiB of quota: a session cannot exhaust inodes before bytes by much. */
const INODES_PER_MIB = 256;
/** Wait for mount(8)/umount(8) (ms): they are local and quick, never unbounded. */
const MOUNT_TIMEOUT_MS = 10_000;

function quotaUnavailable(message, cause) {
  return new CordonError('ERR_CORDON_SESSION_QUOTA_UNAVAILABLE', message, cause === undefined ? {} : { cause });
}

/** The sessions root: created 0711 root-owned (traversable for the owner uids, not listable). */
function prepareRoot(root) {
  if (typeof root !== 'string' || !path.isAbsolute(root)) throw new CordonError('ERR_CORDON_INVALID_OPTIONS', 'sessions: root must be an absolute directory path');
  fs.mkdirSync(root, { recursive: true, mode: 0o711 });
  const st = fs.lstatSync(root);
  if (!st.isDirectory() || st.uid !== process.geteuid() || (st.mode & 0o022) !== 0) {
    throw new CordonError('ERR_CORDON_INVALID_OPTIONS', `sessions: root ${root} must be a directory owned by this provider and writable by no one else`);
  }
  fs.chmodSync(root, 0o711);
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

/**
 * Fails closed, before anything is claimed or created, when this provider
 * cannot give a session a bounded workspace: only root can mount the
 * size-limited filesystem that both the host file tools and the session's
 * successive sandboxes reach (docs/sessions.md, "Non-root providers").
 */
function requireQuota() {
  if (process.geteuid() !== 0) {
    throw quotaUnavailable('sessions need a root provider: the workspace quota is a size-limited tmpfs only root can mount, and a non-root provider has no bounded filesystem that both its file tools and the session\'s sandboxes reach (docs/sessions.md, "Non-root providers"). Fix: run the provider as root (as CI does)');
  }
}

/** Creates and mounts the workspace; fails closed (nothing left) when the quota cannot be applied. */
function createWorkspace({ dir, ownerUid, quotaBytes }) {
  requireQuota();
  fs.mkdirSync(dir, { mode: 0o700 });
  const inodes = inodesFor(quotaBytes);
  const options = `size=${quotaBytes},nr_inodes=${inodes},mode=0700,uid=${ownerUid},gid=${ownerUid},nosuid,nodev`;
  try {
    execFileSync(MOUNT, ['-t', 'tmpfs', '-o', options, 'cordon-session', dir], { stdio: 'pipe', timeout: MOUNT_TIMEOUT_MS, env: {} });
  } catch (cause) {
    fs.rmdirSync(dir);
    throw quotaUnavailable(`mount a ${quotaBytes}-byte tmpfs at ${dir}: ${String(cause.stderr ?? cause.message).trim()}`, cause);
  }
  if (!isMounted(dir)) {
    fs.rmdirSync(dir);
    throw quotaUnavailable(`mount(8) reported success but ${dir} is not a mount point`);
  }
}

/**
 * Unmounts (which frees the whole tree), then removes what is left at the
 * mount point with the launcher's bounded tree removal (tree_removal.rs:
 * iterative, constant descriptors, never follows a link, never leaves the
 * tree's filesystem). What is left is normally an empty directory; it is
 * the whole planted tree when the workspace is not (or no longer) a mount,
 * or when a busy mount could only be detached: its inodes are freed now
 * rather than when the last holder lets go. `removeTree.{tree,contents}(dir)`
 * are the addon's (promises: the walk runs off the event loop). Never throws:
 * returns what happened.
 */
async function removeWorkspace(dir, removeTree) {
  const report = { removed: false, detail: null };
  try {
    if (isMounted(dir)) {
      try {
        execFileSync(UMOUNT, [dir], { stdio: 'pipe', timeout: MOUNT_TIMEOUT_MS, env: {} });
      } catch (error) {
        await removeTree.contents(dir);
        execFileSync(UMOUNT, ['-l', dir], { stdio: 'pipe', timeout: MOUNT_TIMEOUT_MS, env: {} });
        report.detail = `emptied, then unmounted lazily: ${String(error.stderr ?? error.message).trim()}`;
      }
    }
    await removeTree.tree(dir);
    report.removed = true;
  } catch (error) {
    report.detail = String(error?.message ?? error);
  }
  return report;
}

module.exports = { prepareRoot, requireQuota, createWorkspace, removeWorkspace, isMounted, inodesFor };
