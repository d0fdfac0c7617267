'use strict';

// cordon's public API: spawnIsolated() runs a program under Bubblewrap with
// an empty environment, no network, a read-only workspace, a private /tmp
// and one full-duplex protocol channel on its fd 3. See index.d.ts and
// docs/policy.md, docs/receipts.md, docs/errors.md.

const { CordonError } = require('./lib/errors');
const { readOnly, workspaceWrite, profile, toPlainJson, isPlainObject } = require('./lib/isolated-policy');
const { IsolatedExecution } = require('./lib/isolated-execution');
const { nativeExecutable, platformKey } = require('./lib/platform-package');

/** cordon-runner: the platform package's when installed, else this checkout's build. */
const runnerPath = nativeExecutable('cordon-runner');
/** cordon-egress-relay: started first inside a mediated-network sandbox (docs/network.md). */
const egressRelayPath = nativeExecutable('cordon-egress-relay');

const OPTION_KEYS = new Set([
  'policy', 'invocationId', 'workspace', 'env', 'launcherEnvironment',
  'stop', 'deadlineMs', 'signal', 'bwrapPath', 'networkRelayPath',
]);
/** setTimeout's ceiling (ms): longer deadlines would fire immediately. */
const MAX_DEADLINE_MS = 2 ** 31 - 1;

let binding = null;
function loadBinding() {
  if (binding === null) {
    try {
      binding = require('./binding.js');
    } catch (cause) {
      throw new CordonError(
        'ERR_CORDON_BACKEND_UNAVAILABLE',
        `the cordon native addon is not available for this platform: install the platform package ` +
          `\`cordon-${platformKey()}\` (npm installs it as an optional dependency of cordon; ` +
          'reinstall without --no-optional/--omit=optional), or build it from a checkout with `npm run build`',
        { cause },
      );
    }
  }
  return binding;
}

function invalidOptions(message) {
  return new CordonError('ERR_CORDON_INVALID_OPTIONS', message);
}

/** JS-only options (deadline, AbortSignal) checked here; the rest natively. */
function checkJsOptions(options) {
  if (!isPlainObject(options)) throw invalidOptions('options must be a plain object');
  for (const key of Reflect.ownKeys(options)) {
    if (!OPTION_KEYS.has(key)) throw invalidOptions(`options.${String(key)} is not a known option`);
  }
  const { deadlineMs, signal } = options;
  if (deadlineMs !== undefined
    && !(Number.isInteger(deadlineMs) && deadlineMs >= 1 && deadlineMs <= MAX_DEADLINE_MS)) {
    throw invalidOptions(`options.deadlineMs must be an integer from 1 to ${MAX_DEADLINE_MS}`);
  }
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw invalidOptions('options.signal must be an AbortSignal');
  }
  if (options.policy === undefined) {
    throw new CordonError('ERR_CORDON_POLICY_INVALID', 'options.policy is required: readOnly(), workspaceWrite(), profile(name) or a policy object');
  }
}

/** The JSON document the launcher validates (docs/policy.md). */
function nativeOptions(command, options) {
  if (!Array.isArray(command) || !command.every((arg) => typeof arg === 'string')) {
    throw new CordonError('ERR_CORDON_INVALID_COMMAND', 'command must be a non-empty array of strings');
  }
  const out = {
    command: [...command],
    policy: toPlainJson(options.policy, 'policy', 'ERR_CORDON_POLICY_INVALID'),
  };
  for (const key of ['invocationId', 'workspace', 'env', 'launcherEnvironment', 'stop', 'bwrapPath', 'networkRelayPath']) {
    if (options[key] !== undefined) {
      out[key] = toPlainJson(options[key], `options.${key}`, 'ERR_CORDON_INVALID_OPTIONS');
    }
  }
  // The launcher uses it only for a mediated network policy.
  if (out.networkRelayPath === undefined) out.networkRelayPath = egressRelayPath;
  return JSON.stringify(out);
}

function asCordonError(error) {
  if (typeof error?.code === 'string' && error.code.startsWith('ERR_CORDON_')) {
    return new CordonError(error.code, error.message, { cause: error });
  }
  return new CordonError('ERR_CORDON_SPAWN_FAILED', String(error?.message ?? error), { cause: error });
}

/**
 * Launches `command` inside a Bubblewrap sandbox. Throws (with a `code`)
 * on invalid input or an unusable backend, before anything is created.
 * @param {string[]} command
 * @param {import('./index').IsolatedOptions} options
 * @returns {import('./index').IsolatedExecution}
 */
function spawnIsolated(command, options) {
  checkJsOptions(options);
  const json = nativeOptions(command, options);
  const native = loadBinding();
  const execution = new IsolatedExecution(native);
  let handle;
  try {
    handle = native.spawnNative(json, (kind, chunk, message, settled) => execution._onEvent(kind, chunk, message, settled));
  } catch (error) {
    throw asCordonError(error);
  }
  execution._attach(handle);
  armStopTriggers(execution, options);
  return execution;
}

function armStopTriggers(execution, { deadlineMs, signal }) {
  if (deadlineMs !== undefined) {
    const timer = setTimeout(() => execution._requestStop('deadline'), deadlineMs);
    timer.unref();
    execution._onSettle(() => clearTimeout(timer));
  }
  if (signal !== undefined) {
    const onAbort = () => execution._requestStop('signal');
    if (signal.aborted) onAbort();
    else {
      signal.addEventListener('abort', onAbort, { once: true });
      execution._onSettle(() => signal.removeEventListener('abort', onAbort));
    }
  }
}

// Code Mode host (docs/code-mode.md). lib/code-mode never loads the addon
// itself: it is handed this module's spawnIsolated, so the dependency stays one-way.
const { createPool } = require('./lib/pool').bindPool({ spawnIsolated });
const { createCodeMode } = require('./lib/code-mode').bindCodeMode({ spawnIsolated, createPool, readOnly, runnerPath });
const { defineTool } = require('./lib/code-mode/tools');

/**
 * `cordon doctor`: can this host run sandboxes? The checks are the
 * launcher's own (crates/launcher/src/host_probe); lib/doctor.js shapes them.
 */
function doctor(options = {}) {
  const native = (opts) => JSON.parse(loadBinding().doctorNative(JSON.stringify(opts)));
  return require('./lib/doctor').runDoctor(native, { networkRelayPath: egressRelayPath, ...options });
}

module.exports = { spawnIsolated, readOnly, workspaceWrite, profile, runnerPath, CordonError, createCodeMode, defineTool, createPool, doctor };
