'use strict';

// A session command as the caller states it → what the agent is sent:
// `argv` (absolute program or a name the command's PATH resolves) or
// `{shell: 'bash'|'sh', script}`, and options checked strictly (unknown
// keys refused). cwd is relative to the workspace and may not climb out.
// Strings the agent gets must be well-formed UTF-16: a lone surrogate (what
// JSON.parse gives for "\ud800") has no UTF-8 form, so the agent's JSON
// parser failed on it and the call came back as an internal failure
// (round 12, R12-6); it is refused here, like a cwd (relative-path.js).

const { CordonError } = require('../errors');
const { checkRelativePath } = require('./relative-path');

const SHELLS = Object.freeze({ bash: '/bin/bash', sh: '/bin/sh' });
const OPTION_KEYS = new Set(['cwd', 'env', 'stdin', 'timeoutMs', 'onStdout', 'onStderr']);
/** The commands' environment unless the caller overrides a name. */
const DEFAULT_ENV = Object.freeze({ PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', HOME: '/workspace', LANG: 'C.UTF-8' });
/** Largest stdin handed to a command in one go (bytes): one agent frame. */
const MAX_STDIN_BYTES = 1 << 20;
/** Largest argv + env (bytes of JSON): the agent's frame bound, with room. */
const MAX_REQUEST_BYTES = 512 * 1024;
/** Longest per-command timeout (ms): JavaScript's timer bound. */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

function invalid(message) {
  return new CordonError('ERR_CORDON_INVALID_OPTIONS', message);
}

/** A string the agent can be sent: no NUL, and well-formed UTF-16 (no lone surrogate). */
const sendable = (value) => typeof value === 'string' && !value.includes('\0') && value.isWellFormed();

function toArgv(command) {
  if (Array.isArray(command)) {
    if (command.length === 0 || !command.every(sendable)) {
      throw new CordonError('ERR_CORDON_INVALID_COMMAND', 'command must be a non-empty array of strings without NUL or a lone UTF-16 surrogate');
    }
    return [...command];
  }
  if (command !== null && typeof command === 'object' && typeof command.script === 'string') {
    // Own names only: 'constructor' or 'toString' found Object's and reached the agent as argv[0].
    const name = command.shell ?? 'bash';
    const shell = typeof name === 'string' && Object.hasOwn(SHELLS, name) ? SHELLS[name] : undefined;
    if (shell === undefined) throw new CordonError('ERR_CORDON_INVALID_COMMAND', `shell must be one of ${Object.keys(SHELLS).join(', ')}`);
    if (!sendable(command.script)) throw new CordonError('ERR_CORDON_INVALID_COMMAND', 'script must not contain NUL or a lone UTF-16 surrogate');
    return [shell, '-c', command.script];
  }
  throw new CordonError('ERR_CORDON_INVALID_COMMAND', "command must be an argv array or {shell: 'bash', script}");
}

function toEnv(env = {}) {
  if (env === null || typeof env !== 'object' || Array.isArray(env)) throw invalid('env must be an object of strings');
  const merged = { ...DEFAULT_ENV };
  for (const [name, value] of Object.entries(env)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) || !sendable(value)) throw invalid(`env.${name}: names are [A-Za-z_][A-Za-z0-9_]*, values strings without NUL or a lone UTF-16 surrogate`);
    merged[name] = value;
  }
  return Object.entries(merged);
}

/** True for a Node Readable or any async iterable (streamed stdin). */
function isStream(value) {
  return value !== null && typeof value === 'object' && typeof value[Symbol.asyncIterator] === 'function';
}

/** stdin: bytes (one buffer, at most MAX_STDIN_BYTES) or a stream (`{stream}`: a Readable or async iterable of strings/bytes). */
function toStdin(stdin) {
  if (stdin === undefined) return undefined;
  if (isStream(stdin)) return { stream: stdin };
  const bytes = typeof stdin === 'string' ? Buffer.from(stdin, 'utf8') : stdin;
  if (!Buffer.isBuffer(bytes) && !(bytes instanceof Uint8Array)) throw invalid('stdin must be a string, Buffer, Uint8Array, Readable or async iterable');
  if (bytes.length > MAX_STDIN_BYTES) throw invalid(`stdin is ${bytes.length} bytes; at most ${MAX_STDIN_BYTES}`);
  return { stream: [Buffer.from(bytes)] };
}

/**
 * @returns {{argv: string[], cwd: string, env: [string, string][], stdin?: {stream: AsyncIterable|Iterable}, timeoutMs?: number,
 *   onStdout?: Function, onStderr?: Function}}
 */
function commandSpec(command, options = {}, defaults = {}) {
  if (options === null || typeof options !== 'object') throw invalid('options must be an object');
  for (const key of Object.keys(options)) {
    if (!OPTION_KEYS.has(key)) throw invalid(`unknown command option "${key}"; known: ${[...OPTION_KEYS].join(', ')}`);
  }
  const timeoutMs = options.timeoutMs ?? defaults.timeoutMs;
  if (timeoutMs !== undefined && (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > MAX_TIMEOUT_MS)) throw invalid(`timeoutMs must be an integer from 1 to ${MAX_TIMEOUT_MS}`);
  for (const key of ['onStdout', 'onStderr']) {
    if (options[key] !== undefined && typeof options[key] !== 'function') throw invalid(`${key} must be a function`);
  }
  const cwd = options.cwd === undefined || options.cwd === '.' ? '' : checkRelativePath(options.cwd, 'cwd');
  const spec = {
    argv: toArgv(command),
    cwd: cwd === '' ? '/workspace' : `/workspace/${cwd}`,
    env: toEnv(options.env),
    stdin: toStdin(options.stdin),
    timeoutMs,
    onStdout: options.onStdout,
    onStderr: options.onStderr,
  };
  if (Buffer.byteLength(JSON.stringify([spec.argv, spec.env]), 'utf8') > MAX_REQUEST_BYTES) throw invalid(`argv and env exceed ${MAX_REQUEST_BYTES} bytes`);
  return spec;
}

/** One word of a refused command as the audit shows it: a string as given, anything else as its type. */
const statedWord = (value) => (typeof value === 'string' ? value : `[${typeof value}]`);

/**
 * The command as the caller stated it, for the audit record of a refused
 * call (round 12, R12-4): the argv, or the shell's argv for a script, at
 * most MAX_REQUEST_BYTES characters of it (then the record's redaction and
 * cut, audit.js), so a refused 100 MB argv costs no more to redact than
 * the largest accepted one. Never throws (a hostile getter gives a marker).
 */
function statedArgv(command) {
  try {
    const words = Array.isArray(command) ? command
      : command !== null && typeof command === 'object' && typeof command.script === 'string' ? [(typeof command.shell === 'string' || command.shell === undefined) && Object.hasOwn(SHELLS, command.shell ?? 'bash') ? SHELLS[command.shell ?? 'bash'] : statedWord(command.shell), '-c', command.script]
        : [statedWord(command)];
    const argv = [];
    let room = MAX_REQUEST_BYTES;
    for (let i = 0; i < words.length && room > 0; i += 1) {
      const word = statedWord(words[i]).slice(0, room);
      argv.push(word);
      room -= word.length + 1;
    }
    return argv;
  } catch {
    return ['[unreadable command]'];
  }
}

module.exports = { commandSpec, statedArgv, DEFAULT_ENV };
