'use strict';

// The sessions root, held by a descriptor (round 5, R5-2). Checked once by
// path and looked up by path again on every acquire, a root whose ancestor
// another user owns could be swapped for a link between the two, and root
// would mount a session tmpfs wherever the link pointed. So:
// - at creation every component from `/` is opened no-follow relative to the
//   one before, and each must be owned by root or this provider and
//   writable by no one else (a root-owned sticky directory such as /tmp is
//   accepted above the root: nobody else can rename what is in it); the
//   root itself must be this provider's, 0711. Its descriptor is kept for
//   the manager's life (one fd per manager).
// - `<key>` is made with mkdirat on that descriptor and opened no-follow; the
//   tmpfs is mounted on `/proc/self/fd/<key fd>` (mount -c: the kernel
//   follows the magic link to that very directory, no path is re-resolved);
//   any failure after the mount unmounts through a descriptor of the new
//   mount.
// - before each new workspace the root's path must still name the held
//   directory (other code, the launcher included, is handed paths).

const fs = require('node:fs');
const path = require('node:path');
const { constants: C } = fs;
const { CordonError } = require('../errors');
const { onDescriptor, UMOUNT } = require('./mount-tool');

const DIR_FLAGS = C.O_RDONLY | C.O_DIRECTORY | C.O_NOFOLLOW | C.O_CLOEXEC;
const ROOT_MODE = 0o711;

const at = (fd, name) => `/proc/self/fd/${fd}/${name}`;

function refused(message, cause) {
  return new CordonError('ERR_CORDON_INVALID_OPTIONS', `sessions: ${message}`, cause === undefined ? {} : { cause });
}

/** Pure: why a directory on the way to the root is not trusted, or null. */
function untrustedAncestor(stat, euid) {
  if (stat.uid !== 0 && stat.uid !== euid) return `is owned by uid ${stat.uid}, neither root nor this provider`;
  const sticky = (stat.mode & 0o1000) !== 0;
  if ((stat.mode & 0o022) !== 0 && !(sticky && stat.uid === 0)) return 'is writable by group or others (and not a root-owned sticky directory)';
  return null;
}

/** Opens (and makes, if missing) `dir` one no-follow step at a time from `/`, checking each ancestor first; returns the last fd. */
function openChecked(dir, euid) {
  let fd = fs.openSync('/', DIR_FLAGS);
  let here = '/';
  try {
    for (const name of dir.split('/').filter(Boolean)) {
      const why = untrustedAncestor(fs.fstatSync(fd), euid);
      if (why !== null) throw refused(`root ${dir}: its ancestor ${here} ${why}`);
      // A missing component is made here (mkdirat on the checked parent), never through a path.
      try {
        fs.mkdirSync(at(fd, name), { mode: ROOT_MODE });
      } catch (error) {
        if (error.code !== 'EEXIST') throw error;
      }
      const next = fs.openSync(at(fd, name), DIR_FLAGS);
      fs.closeSync(fd);
      fd = next;
      here = path.join(here, name);
    }
    return fd;
  } catch (error) {
    fs.closeSync(fd);
    if (error instanceof CordonError) throw error;
    throw refused(`root ${dir}: cannot make or open a directory in ${here} without following a link (${error.code ?? error.message})`, error);
  }
}

/**
 * Creates the root if needed (0711), then holds it by a descriptor.
 * @returns {{path: string, fd: number, dev: number, ino: number}}
 */
function openSessionsRoot(root) {
  if (typeof root !== 'string' || !path.isAbsolute(root)) throw refused('root must be an absolute directory path');
  const dir = path.resolve(root);
  const euid = process.geteuid();
  const fd = openChecked(dir, euid);
  const st = fs.fstatSync(fd);
  if (st.uid !== euid || (st.mode & 0o022) !== 0) {
    fs.closeSync(fd);
    throw refused(`root ${dir} must be a directory owned by this provider and writable by no one else`);
  }
  fs.fchmodSync(fd, ROOT_MODE);
  return Object.freeze({ path: dir, fd, dev: st.dev, ino: st.ino });
}

function rootChanged(root, detail) {
  return new CordonError('ERR_CORDON_SESSION_ROOT_CHANGED', `sessions root ${root.path} no longer names the directory this manager holds (${detail}); nothing was created`);
}

/** The root's path still names the held directory (no link, no swap). */
function checkRootPath(root) {
  let st;
  try {
    st = fs.lstatSync(root.path);
  } catch (error) {
    throw rootChanged(root, error.code ?? error.message);
  }
  if (!st.isDirectory() || st.dev !== root.dev || st.ino !== root.ino) throw rootChanged(root, st.isSymbolicLink() ? 'a symbolic link' : 'another directory');
}

/** mkdirat(root, key) and a no-follow open of it: a fresh, empty directory of this provider on the root's filesystem. */
function makeKeyDir(root, key) {
  checkRootPath(root);
  try {
    fs.mkdirSync(at(root.fd, key), { mode: 0o700 });
  } catch (error) {
    const code = error.code === 'EEXIST' ? 'ERR_CORDON_SESSION_WORKSPACE_CONFLICT' : 'ERR_CORDON_SESSION_QUOTA_UNAVAILABLE';
    throw new CordonError(code, `sessions: cannot create the workspace ${key} in ${root.path} (${error.code ?? error.message})`, { cause: error });
  }
  const fd = fs.openSync(at(root.fd, key), DIR_FLAGS);
  const st = fs.fstatSync(fd);
  if (!st.isDirectory() || st.uid !== process.geteuid() || st.dev !== root.dev) {
    fs.closeSync(fd);
    throw new CordonError('ERR_CORDON_SESSION_WORKSPACE_CONFLICT', `sessions: the new workspace ${key} in ${root.path} is not the directory just made`);
  }
  return fd;
}

/**
 * Detaches the mount at `<root>/<key>[/<inner>]` (reached through the held
 * root, no-follow) and removes the mount point (and `<key>`). Never rejects.
 */
async function undoMount(root, key, inner = null) {
  try {
    const keyFd = fs.openSync(at(root.fd, key), DIR_FLAGS);
    try {
      let fd = keyFd;
      if (inner !== null) {
        try {
          fd = fs.openSync(at(keyFd, inner), DIR_FLAGS);
        } catch {
          fd = null; // never made
        }
      }
      if (fd !== null) {
        try {
          if (fs.fstatSync(fd).dev !== root.dev) await onDescriptor(UMOUNT, ['-l'], fd);
        } finally {
          if (fd !== keyFd) fs.closeSync(fd);
        }
      }
      if (inner !== null) {
        try {
          fs.rmdirSync(at(keyFd, inner));
        } catch {
          // never made
        }
      }
    } finally {
      fs.closeSync(keyFd);
    }
    fs.rmdirSync(at(root.fd, key));
  } catch {
    // Best effort on a failure path: the caller reports the first error.
  }
}

module.exports = { openSessionsRoot, checkRootPath, makeKeyDir, undoMount, untrustedAncestor };
