'use strict';

// File tools on the host, beneath a session workspace, never following a
// link the sandbox planted. Every step is relative to a directory already
// open: `/proc/self/fd/<dirfd>/<name>` resolves the magic link to that very
// directory (not a path the sandbox can swap) and then looks `name` up in
// it, so with O_NOFOLLOW (and O_DIRECTORY for directories) it is
// openat(dirfd, name, O_NOFOLLOW): a symlink anywhere fails with ELOOP, a
// swap between check and use finds nothing to follow. The kind of what was
// opened is judged by fstat on the open descriptor, never by a path.
// Opens use O_NONBLOCK, so a FIFO never blocks the provider, and the
// workspace is mounted nodev, so no device node can be opened at all.

const crypto = require('node:crypto');
const fsp = require('node:fs/promises');
const { constants: C } = require('node:fs');
const { CordonError } = require('../errors');
const { checkRelativePath } = require('./relative-path');

/** readFile's default cap (bytes). */
const DEFAULT_READ_BYTES = 1 << 20;
/** Largest read or write (bytes) however asked: one buffer in the provider. */
const MAX_FILE_BYTES = 64 << 20;
/** Entries list() returns at most. */
const MAX_LIST_ENTRIES = 10_000;

const DIR_FLAGS = C.O_RDONLY | C.O_DIRECTORY | C.O_NOFOLLOW | C.O_CLOEXEC;
const READ_FLAGS = C.O_RDONLY | C.O_NOFOLLOW | C.O_NONBLOCK | C.O_NOCTTY | C.O_CLOEXEC;
const CREATE_FLAGS = C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW | C.O_CLOEXEC;

function fileError(code, message, cause) {
  return new CordonError(code, message, cause === undefined ? {} : { cause });
}

/** A system error of an fd-relative step → a coded error naming the workspace path. */
function mapError(error, rel) {
  switch (error?.code) {
    case 'ELOOP': return fileError('ERR_CORDON_SESSION_PATH_REFUSED', `${rel}: a symbolic link is in the way; links are never followed`, error);
    case 'ENOENT': return fileError('ERR_CORDON_SESSION_FILE_NOT_FOUND', `${rel}: no such file or directory in the workspace`, error);
    case 'ENOTDIR': return fileError('ERR_CORDON_SESSION_PATH_REFUSED', `${rel}: a path segment is not a directory`, error);
    case 'EISDIR': return fileError('ERR_CORDON_SESSION_FILE_TYPE_REFUSED', `${rel}: is a directory`, error);
    case 'ENXIO': case 'EACCES': case 'EPERM': case 'EOPNOTSUPP':
      return fileError('ERR_CORDON_SESSION_FILE_TYPE_REFUSED', `${rel}: not a regular file or directory the file tools may open (${error.code})`, error);
    case 'ENOSPC': case 'EDQUOT': return fileError('ERR_CORDON_SESSION_WORKSPACE_FULL', `${rel}: the session workspace is full (its quota)`, error);
    case 'ENOTEMPTY': return fileError('ERR_CORDON_SESSION_DIRECTORY_NOT_EMPTY', `${rel}: the directory is not empty (remove() takes one entry; pass {recursive: true} for a tree)`, error);
    default: return error instanceof CordonError ? error : fileError('ERR_CORDON_SESSION_FILE_FAILED', `${rel}: ${describe(error)}`, error);
  }
}

/** A system error's code and call, never its message: that names the provider's `/proc/self/fd/<n>` path. */
const describe = (error) => (typeof error?.syscall === 'string' ? `${error.code} (${error.syscall})` : String(error?.message ?? error));

const at = (dir, name) => `/proc/self/fd/${dir.fd}/${name}`;

function kindOf(stat) {
  if (stat.isFile()) return 'file';
  if (stat.isDirectory()) return 'directory';
  if (stat.isSymbolicLink()) return 'symlink';
  if (stat.isFIFO()) return 'fifo';
  if (stat.isSocket()) return 'socket';
  if (stat.isBlockDevice() || stat.isCharacterDevice()) return 'device';
  return 'other';
}

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * How list() names an entry: `{name}`, or for a name that is not valid
 * UTF-8 `{name: null, nameHex}` (its bytes). Decoded lossily, `\xff` and
 * `\xef\xbf\xbd` were both listed as "\ufffd", and readFile/remove of that
 * name reached only the second (round 9, R9-7): no string the file tools
 * take names such a file, so none is offered; a command reaches it by its
 * bytes (`mv "$(printf '\xff')" fixed`).
 */
function listedName(bytes) {
  try {
    return { name: STRICT_UTF8.decode(bytes) };
  } catch {
    return { name: null, nameHex: Buffer.from(bytes).toString('hex') };
  }
}

/** Sorted by name (code units), then the undecodable ones by their bytes. */
function sortListing(entries) {
  const key = (e) => (e.name === null ? [1, e.nameHex] : [0, e.name]);
  return entries.sort((a, b) => {
    const [ka, kb] = [key(a), key(b)];
    if (ka[0] !== kb[0]) return ka[0] - kb[0];
    return ka[1] < kb[1] ? -1 : ka[1] > kb[1] ? 1 : 0;
  });
}

class WorkspaceFiles {
  /** @param {{workspace: string, ownerUid: number, removeTree: {tree: Function}, maxRemoveEntries: number}} spec */
  constructor(spec) {
    this._workspace = spec.workspace;
    this._ownerUid = spec.ownerUid;
    this._removeTree = spec.removeTree;
    this._maxRemoveEntries = spec.maxRemoveEntries;
  }

  /** Opens the directory `segments` names, each step no-follow; the caller closes it. */
  async _openDir(segments, rel) {
    let dir = await fsp.open(this._workspace, DIR_FLAGS);
    try {
      for (const name of segments) {
        const next = await fsp.open(at(dir, name), DIR_FLAGS);
        await dir.close();
        dir = next;
      }
      return dir;
    } catch (error) {
      await dir.close().catch(() => {});
      throw mapError(error, rel);
    }
  }

  async _withParent(path, action) {
    const rel = checkRelativePath(path);
    const segments = rel.split('/').filter(Boolean);
    const leaf = segments.pop();
    if (leaf === undefined) throw fileError('ERR_CORDON_SESSION_PATH_REFUSED', 'the path names the workspace itself, not a file in it');
    const dir = await this._openDir(segments, rel);
    try {
      return await action(dir, leaf, rel);
    } catch (error) {
      throw mapError(error, rel);
    } finally {
      await dir.close().catch(() => {});
    }
  }

  /** The file's bytes (a Buffer); ERR_CORDON_SESSION_FILE_TOO_LARGE past `maxBytes`. */
  async readFile(path, { maxBytes = DEFAULT_READ_BYTES } = {}) {
    if (!Number.isSafeInteger(maxBytes) || maxBytes < 0 || maxBytes > MAX_FILE_BYTES) throw fileError('ERR_CORDON_INVALID_OPTIONS', `maxBytes must be an integer from 0 to ${MAX_FILE_BYTES}`);
    return this._withParent(path, async (dir, leaf, rel) => {
      const file = await fsp.open(at(dir, leaf), READ_FLAGS);
      try {
        const stat = await file.stat();
        if (!stat.isFile()) throw fileError('ERR_CORDON_SESSION_FILE_TYPE_REFUSED', `${rel}: is a ${kindOf(stat)}, not a regular file`);
        if (stat.size > maxBytes) throw fileError('ERR_CORDON_SESSION_FILE_TOO_LARGE', `${rel}: ${stat.size} bytes, more than maxBytes (${maxBytes})`);
        // Read one byte past the cap: a file that grew since fstat is caught too.
        const buffer = Buffer.alloc(maxBytes + 1);
        let filled = 0;
        for (;;) {
          const { bytesRead } = await file.read(buffer, filled, buffer.length - filled, filled);
          if (bytesRead === 0) break;
          filled += bytesRead;
          if (filled > maxBytes) throw fileError('ERR_CORDON_SESSION_FILE_TOO_LARGE', `${rel}: grew past maxBytes (${maxBytes}) while read`);
        }
        return buffer.subarray(0, filled);
      } finally {
        await file.close().catch(() => {});
      }
    });
  }

  /**
   * Writes `data` (string or bytes) atomically: a fresh file beside the
   * target, owned by the session's uid, renamed over the name (a link
   * there is replaced, never followed). Parent directories must exist.
   */
  async writeFile(path, data) {
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    if (!(bytes instanceof Uint8Array)) throw fileError('ERR_CORDON_INVALID_OPTIONS', 'data must be a string, Buffer or Uint8Array');
    if (bytes.length > MAX_FILE_BYTES) throw fileError('ERR_CORDON_SESSION_FILE_TOO_LARGE', `${bytes.length} bytes: writeFile takes at most ${MAX_FILE_BYTES}`);
    return this._withParent(path, async (dir, leaf) => {
      const temp = `.cordon-write-${crypto.randomBytes(8).toString('hex')}`;
      const file = await fsp.open(at(dir, temp), CREATE_FLAGS, 0o644);
      try {
        await file.chown(this._ownerUid, this._ownerUid);
        await file.writeFile(bytes);
        await file.close();
        await fsp.rename(at(dir, temp), at(dir, leaf));
      } catch (error) {
        await file.close().catch(() => {});
        await fsp.unlink(at(dir, temp)).catch(() => {});
        throw error;
      }
      return { bytes: bytes.length };
    });
  }

  /**
   * Entries of a directory: `{name, type, size}` (never followed), at most
   * MAX_LIST_ENTRIES; the array's `truncated` is true when more were left out.
   */
  async list(path = '') {
    const rel = checkRelativePath(path);
    const dir = await this._openDir(rel.split('/').filter(Boolean), rel);
    try {
      const out = [];
      let truncated = false;
      // Names as bytes: one not valid UTF-8 is stat'ed as it is and listed
      // (listedName), not hidden by a failing stat (round 7, R7-3).
      const handle = await fsp.opendir(`/proc/self/fd/${dir.fd}`, { encoding: 'buffer' });
      const prefix = Buffer.from(at(dir, ''));
      for await (const entry of handle) {
        if (out.length >= MAX_LIST_ENTRIES) {
          truncated = true;
          break;
        }
        const stat = await fsp.lstat(Buffer.concat([prefix, entry.name])).catch(() => null);
        if (stat !== null) out.push({ ...listedName(entry.name), type: kindOf(stat), size: stat.size });
      }
      return Object.assign(sortListing(out), { truncated });
    } catch (error) {
      throw mapError(error, rel);
    } finally {
      await dir.close().catch(() => {});
    }
  }

  /**
   * Removes a file, link, FIFO, socket or empty directory (the entry
   * itself, never a link's target); with `{recursive: true}` a directory
   * and everything below it, by the launcher's tree removal (iterative,
   * no link followed, never off the workspace's filesystem), visiting at
   * most `maxRemoveEntries` entries: a sandbox writing into the tree as
   * fast as it goes cannot hold the call (ERR_CORDON_SESSION_REMOVE_INCOMPLETE).
   */
  async remove(path, options = {}) {
    if (options === null || typeof options !== 'object' || Object.keys(options).some((k) => k !== 'recursive')
      || (options.recursive !== undefined && typeof options.recursive !== 'boolean')) {
      throw fileError('ERR_CORDON_INVALID_OPTIONS', 'remove options: {recursive?: boolean}');
    }
    return this._withParent(path, async (dir, leaf, rel) => {
      const stat = await fsp.lstat(at(dir, leaf));
      if (stat.isDirectory() && options.recursive === true) await this._removeTreeBelow(at(dir, leaf), rel);
      else if (stat.isDirectory()) await fsp.rmdir(at(dir, leaf));
      else await fsp.unlink(at(dir, leaf));
      return { removed: kindOf(stat) };
    });
  }

  /** `entry` names a directory through an open parent (`/proc/self/fd/N/name`), so no path is re-resolved. */
  async _removeTreeBelow(entry, rel) {
    try {
      await this._removeTree.tree(entry, this._maxRemoveEntries);
    } catch (error) {
      const message = String(error?.message ?? error);
      if (!message.startsWith('ERR_CORDON_TREE_REMOVAL_FAILED')) throw error;
      throw fileError('ERR_CORDON_SESSION_REMOVE_INCOMPLETE', `${rel}: ${message.replace(/^ERR_CORDON_TREE_REMOVAL_FAILED: /, '')}`, error);
    }
  }
}

module.exports = { WorkspaceFiles, mapError, sortListing, DEFAULT_READ_BYTES, MAX_FILE_BYTES, MAX_LIST_ENTRIES };
