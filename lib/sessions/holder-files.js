'use strict';

// The file tools of a NON-ROOT provider's session (holder.js): the
// provider cannot look into the workspace (a tmpfs of the session's
// subordinate uid, in the holder's mount namespace), so each operation is
// one `cordon-exec-agent session-files` process that joins the holder's
// namespaces, becomes the owner uid, checks the workspace is the held
// tmpfs, and does the operation with the root path's rules (every step
// openat O_NOFOLLOW from the workspace root, kind by fstat, O_NONBLOCK).
// Its answers map to the same error codes as files.js; the checks on the
// caller's input (path, maxBytes, data) are files.js's, made here first.

const { spawn } = require('node:child_process');
const { CordonError } = require('../errors');
const { checkRelativePath } = require('./relative-path');
const { mapError, sortListing, DEFAULT_READ_BYTES, MAX_FILE_BYTES } = require('./files');
const { holderAlive } = require('./holder');

/** How long one file operation may take (ms) before the helper is killed. */
const OPERATION_TIMEOUT_MS = 30_000;

function fileError(code, message, cause) {
  return new CordonError(code, message, cause === undefined ? {} : { cause });
}

/**
 * The argv of every helper: the same for every operation of every session.
 * The request (holder, uid, workspace, op, path) goes on stdin: argv is
 * world-readable in /proc/<pid>/cmdline, and the workspace (its key) and
 * the path tell any local user which session touches which file (round 9, R9-5).
 */
const HELPER_ARGS = Object.freeze(['session-files']);

/** Runs the helper on `request`; resolves with {status, stdout} (stdout bounded by `maxOut` bytes). */
function runHelper(agentPath, request, input, maxOut) {
  return new Promise((resolve, reject) => {
    const child = spawn(agentPath, HELPER_ARGS, { stdio: ['pipe', 'pipe', 'pipe'], cwd: '/', env: {} });
    // The operation's bound, ours rather than spawn's `timeout` option: Node
    // 22 clears that timer only at 'exit', which a spawn that failed never
    // emits, so each failed spawn kept the provider's event loop alive for
    // the whole bound (a provider with nothing left to do exited 30 s late).
    const bound = setTimeout(() => child.kill('SIGKILL'), OPERATION_TIMEOUT_MS);
    // First, before the pipes are touched: a spawn that fails (EMFILE, EAGAIN)
    // emits 'error' on the next tick and has no pipes at all. Unheard, that
    // event kills the provider, every session of it (round 9, R9-1). Its
    // message names the helper's host path: that goes to `cause` only.
    child.on('error', (error) => {
      clearTimeout(bound);
      reject(fileError('ERR_CORDON_SESSION_FILE_FAILED', `the session file helper could not run (${error.code ?? 'error'})`, error));
    });
    if (!child.stdin || !child.stdout || !child.stderr) return; // none when the spawn failed
    const chunks = [];
    let size = 0;
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      size += chunk.length;
      if (size > maxOut) child.kill('SIGKILL');
      else chunks.push(chunk);
    });
    child.stderr.on('data', (chunk) => {
      stderr = (stderr + chunk).slice(-1024);
    });
    child.on('close', (status, signal) => {
      clearTimeout(bound);
      if (signal !== null || status === 2) {
        // The helper's words name host paths (the sessions root, the key): the
        // message goes to whoever gets tool results, so they stay in `cause`,
        // for the provider's logs (round 7b, R7b-1).
        reject(fileError('ERR_CORDON_SESSION_FILE_FAILED', `the session file helper failed (${signal ?? `status ${status}`})`, new Error(stderr.trim())));
      } else resolve({ status, stdout: Buffer.concat(chunks) });
    });
    child.stdin.on('error', () => {}); // a helper that refused before reading
    // The request: one line, a JSON array of strings (no raw newline), then a write's bytes.
    child.stdin.write(`${JSON.stringify(request)}\n`);
    child.stdin.end(input);
  });
}

/** The helper's exit-1 answer → the root path's coded error. */
function helperError(stdout, rel) {
  let answer;
  try {
    answer = JSON.parse(stdout.toString('utf8'));
  } catch {
    return fileError('ERR_CORDON_SESSION_FILE_FAILED', `${rel}: the file helper's answer is not JSON`);
  }
  if (typeof answer.errno === 'string') {
    return mapError(Object.assign(new Error(answer.errno), { code: answer.errno, syscall: answer.syscall || undefined }), rel);
  }
  switch (answer.refused) {
    case 'type': return fileError('ERR_CORDON_SESSION_FILE_TYPE_REFUSED', `${rel}: is a ${answer.kind}, not a regular file`);
    case 'too-large': return fileError('ERR_CORDON_SESSION_FILE_TOO_LARGE', `${rel}: ${answer.size ?? 'more'} bytes, more than maxBytes`);
    case 'grew': return fileError('ERR_CORDON_SESSION_FILE_TOO_LARGE', `${rel}: grew past maxBytes while read`);
    case 'root': return fileError('ERR_CORDON_SESSION_PATH_REFUSED', 'the path names the workspace itself, not a file in it');
    case 'incomplete': return fileError('ERR_CORDON_SESSION_REMOVE_INCOMPLETE', `${rel}: more entries than the removal's bound`);
    default: return fileError('ERR_CORDON_SESSION_FILE_FAILED', `${rel}: ${stdout.toString('utf8').slice(0, 200)}`);
  }
}

class HolderFiles {
  /** @param {{workspace: string, ownerUid: number, agentPath: string, holder: () => {pid: number, start: string}, maxRemoveEntries: number}} spec */
  constructor(spec) {
    this._spec = spec;
  }

  async _op(op, path, extra, input, maxOut) {
    const rel = checkRelativePath(path);
    if (rel.split('/').filter(Boolean).length === 0 && op !== 'list') throw fileError('ERR_CORDON_SESSION_PATH_REFUSED', 'the path names the workspace itself, not a file in it');
    const holder = this._spec.holder();
    if (!holderAlive(holder)) throw fileError('ERR_CORDON_SESSION_ENDED', 'the session workspace holder is gone');
    const { agentPath, ownerUid, workspace } = this._spec;
    // The start time too: the helper enters the holder only if /proc/<pid> is still that process.
    const request = [String(holder.pid), String(holder.start), String(ownerUid), workspace, op, rel, ...extra];
    const { status, stdout } = await runHelper(agentPath, request, input, maxOut);
    if (status !== 0) throw helperError(stdout, rel);
    return stdout;
  }

  async readFile(path, { maxBytes = DEFAULT_READ_BYTES } = {}) {
    if (!Number.isSafeInteger(maxBytes) || maxBytes < 0 || maxBytes > MAX_FILE_BYTES) throw fileError('ERR_CORDON_INVALID_OPTIONS', `maxBytes must be an integer from 0 to ${MAX_FILE_BYTES}`);
    return this._op('read', path, [String(maxBytes)], null, maxBytes + 4096);
  }

  async writeFile(path, data) {
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    if (!(bytes instanceof Uint8Array)) throw fileError('ERR_CORDON_INVALID_OPTIONS', 'data must be a string, Buffer or Uint8Array');
    if (bytes.length > MAX_FILE_BYTES) throw fileError('ERR_CORDON_SESSION_FILE_TOO_LARGE', `${bytes.length} bytes: writeFile takes at most ${MAX_FILE_BYTES}`);
    return JSON.parse((await this._op('write', path, [], bytes, 4096)).toString('utf8'));
  }

  async list(path = '') {
    const answer = JSON.parse((await this._op('list', path, [], null, 16 << 20)).toString('utf8'));
    const out = sortListing(answer.entries);
    return Object.assign(out, { truncated: answer.truncated === true });
  }

  async remove(path, options = {}) {
    if (options === null || typeof options !== 'object' || Object.keys(options).some((k) => k !== 'recursive')
      || (options.recursive !== undefined && typeof options.recursive !== 'boolean')) {
      throw fileError('ERR_CORDON_INVALID_OPTIONS', 'remove options: {recursive?: boolean}');
    }
    const mode = options.recursive === true ? 'recursive' : 'flat';
    return JSON.parse((await this._op('remove', path, [mode, String(this._spec.maxRemoveEntries)], null, 4096)).toString('utf8'));
  }
}

module.exports = { HolderFiles, HELPER_ARGS };
