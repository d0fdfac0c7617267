'use strict';

// What a remote spawnIsolated may ask for, checked before any connection is
// opened (docs/remote.md, `spawn.options`). The wire names a program from the
// host's allowlist, never a host path; the workspace is uploaded files, never
// a directory; extra binds, bwrap and the relay are the host's configuration.
// Anything that names a host resource is refused here with
// ERR_CORDON_REMOTE_UNSUPPORTED; every other value is the host's launcher's
// to check (it answers `refused` with the same code a local launch throws).

const path = require('node:path');
const { CordonError } = require('../errors');
const { toPlainJson, isPlainObject } = require('../plain-json');
const { MAX_CONTROL_BYTES } = require('./frames');

/** Options sent to the host as they are (after a plain-JSON snapshot). */
const WIRE_KEYS = Object.freeze(['policy', 'invocationId', 'env', 'deadlineMs', 'stop']);
/** Options that name something on the host: never accepted from a remote provider. */
const HOST_RESOURCE_KEYS = Object.freeze(['bwrapPath', 'networkRelayPath', 'launcherEnvironment']);
/** A program name: what the host's allowlist can hold (no path, no '=' — see launch_request.rs). */
const PROGRAM_NAME = /^[A-Za-z0-9._+-]{1,128}$/;
/** Upload payloads travel base64 inside one control frame each: what fits beside the JSON around it. */
const MAX_UPLOAD_FILE_BYTES = Math.floor((MAX_CONTROL_BYTES - 4096) / 4) * 3;
/** Timers past this are not timers in Node (setTimeout's ceiling), so no deadline may exceed it. */
const MAX_TIMER_MS = 2 ** 31 - 1;

function unsupported(message) {
  return new CordonError('ERR_CORDON_REMOTE_UNSUPPORTED', message);
}

function invalid(message) {
  return new CordonError('ERR_CORDON_INVALID_OPTIONS', message);
}

function checkCommand(command) {
  if (!Array.isArray(command) || command.length === 0 || !command.every((arg) => typeof arg === 'string')) {
    throw new CordonError('ERR_CORDON_INVALID_COMMAND', 'command must be a non-empty array of strings');
  }
  if (!PROGRAM_NAME.test(command[0]) || command[0] === '.' || command[0] === '..') {
    throw new CordonError('ERR_CORDON_INVALID_COMMAND',
      `command[0] must be a program name from the host's allowlist (such as "cordon-runner"), never a path; got ${JSON.stringify(command[0]).slice(0, 80)}`);
  }
  return { program: command[0], args: command.slice(1) };
}

/** A relative path that stays beneath the workspace: no absolute path, no `..`, no empty or `.` part, no NUL. */
function checkUploadPath(relPath) {
  const parts = relPath.split('/');
  const ok = relPath.length > 0 && relPath.length <= 4096 && !relPath.includes('\0') && !path.posix.isAbsolute(relPath)
    && parts.every((part) => part !== '' && part !== '.' && part !== '..');
  if (!ok) throw unsupported(`options.workspace.files: ${JSON.stringify(relPath).slice(0, 80)} must be a relative path beneath the workspace (no "/" at the start, no "..", ".", or empty parts)`);
}

/** `workspace: {files: {relPath: string|Buffer}}` → upload frames' payloads; a path (a host directory) is refused. */
function checkWorkspace(workspace) {
  if (workspace === undefined) return [];
  if (typeof workspace === 'string') {
    throw unsupported('options.workspace is a host directory; a remote sandbox\'s workspace is uploaded: pass {files: {"relative/path": string | Buffer}}');
  }
  if (!isPlainObject(workspace) || Object.keys(workspace).some((key) => key !== 'files') || !isPlainObject(workspace.files)) {
    throw invalid('options.workspace must be {files: {"relative/path": string | Buffer}}');
  }
  return Object.entries(workspace.files).map(([relPath, content]) => {
    checkUploadPath(relPath);
    if (typeof content !== 'string' && !Buffer.isBuffer(content)) throw invalid(`options.workspace.files[${JSON.stringify(relPath)}] must be a string or a Buffer`);
    const data = Buffer.isBuffer(content) ? content : Buffer.from(content, 'utf8');
    if (data.length > MAX_UPLOAD_FILE_BYTES) {
      throw unsupported(`options.workspace.files[${JSON.stringify(relPath)}] is ${data.length} bytes; one uploaded file holds at most ${MAX_UPLOAD_FILE_BYTES} (it travels in one frame)`);
    }
    return { path: relPath, data: data.toString('base64') };
  });
}

function checkPolicyShape(policy) {
  const extra = policy?.filesystem?.extra;
  if (Array.isArray(extra) && extra.length > 0) {
    throw unsupported('policy.filesystem.extra names host paths; a remote host binds only what its own configuration lists');
  }
}

/**
 * The spawn frame's payload and the uploads, or a thrown coded error.
 * @returns {{spawn: {program: string, args: string[], options: object}, uploads: object[], deadlineMs?: number, signal?: AbortSignal, stop: {graceMs: number, forceMs: number}}}
 */
function remoteSpawnRequest(command, options) {
  if (!isPlainObject(options)) throw invalid('options must be a plain object');
  const { program, args } = checkCommand(command);
  const wire = {};
  for (const key of Reflect.ownKeys(options)) {
    const value = options[key];
    if (value === undefined || key === 'signal' || key === 'workspace') continue;
    if (HOST_RESOURCE_KEYS.includes(key)) throw unsupported(`options.${String(key)} names a host resource; a remote host takes it from its own configuration`);
    if (!WIRE_KEYS.includes(key)) throw invalid(`unknown option ${JSON.stringify(String(key))}; a remote spawn takes ${[...WIRE_KEYS, 'signal', 'workspace'].join(', ')}`);
    wire[key] = value;
  }
  if (wire.policy === undefined) throw new CordonError('ERR_CORDON_POLICY_INVALID', 'policy is required: readOnly(), workspaceWrite(), profile(name) or a policy object');
  const snapshot = toPlainJson(wire, 'options', 'ERR_CORDON_INVALID_OPTIONS');
  snapshot.policy = toPlainJson(wire.policy, 'policy', 'ERR_CORDON_POLICY_INVALID');
  checkPolicyShape(snapshot.policy);
  const { deadlineMs, signal } = options;
  if (deadlineMs !== undefined && !(Number.isInteger(deadlineMs) && deadlineMs >= 1 && deadlineMs <= MAX_TIMER_MS)) {
    throw invalid(`options.deadlineMs must be an integer from 1 to ${MAX_TIMER_MS}`);
  }
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw invalid('options.signal must be an AbortSignal');
  const stop = { graceMs: snapshot.stop?.graceMs ?? 1000, forceMs: snapshot.stop?.forceMs ?? 1000 };
  return { spawn: { program, args, options: snapshot }, uploads: checkWorkspace(options.workspace), deadlineMs, signal, stop };
}

module.exports = { remoteSpawnRequest, MAX_TIMER_MS, MAX_UPLOAD_FILE_BYTES };
