'use strict';

// cordon's public API: spawnIsolated() runs a program under Bubblewrap with
// an empty environment, no network, a read-only workspace, a private /tmp
// and one full-duplex protocol channel on its fd 3. See index.d.ts and
// docs/policy.md, docs/receipts.md, docs/errors.md.

const { AsyncResource } = require('node:async_hooks');
const { CordonError } = require('./lib/errors');
const { readOnly, workspaceWrite, profile, toPlainJson, isPlainObject } = require('./lib/isolated-policy');
const { IsolatedExecution } = require('./lib/isolated-execution');
const { nativeExecutable } = require('./lib/platform-package');
const { loadBinding } = require('./lib/native');
const { checkStopTriggers, armStopTriggers } = require('./lib/stop-triggers');

/** cordon-runner: the platform package's when installed, else this checkout's build. */
const runnerPath = nativeExecutable('cordon-runner');
/** cordon-egress-relay: started first inside a mediated-network sandbox (docs/network.md). */
const egressRelayPath = nativeExecutable('cordon-egress-relay');
let egressRelayFound = false;
/** Whether the shipped relay is there (remembered once found: a stat per spawn until then). */
function relayShipped() {
  if (!egressRelayFound) egressRelayFound = require('node:fs').existsSync(egressRelayPath);
  return egressRelayFound;
}

function invalidOptions(message) {
  return new CordonError('ERR_CORDON_INVALID_OPTIONS', message);
}

/**
 * The document the launcher validates (docs/policy.md): every option but
 * JavaScript's own (`signal`: lib/stop-triggers.js), each snapshotted as
 * plain JSON. Which keys exist and what they may hold is the launcher's to
 * say (crates/launcher/src/request/launch_request.rs), `deadlineMs` included: the
 * launcher enforces it itself. Unknown keys are refused there, with
 * ERR_CORDON_INVALID_OPTIONS.
 */
function nativeOptions(command, options) {
  if (!isPlainObject(options)) throw invalidOptions('options must be a plain object');
  if (!Array.isArray(command) || !command.every((arg) => typeof arg === 'string')) {
    throw new CordonError('ERR_CORDON_INVALID_COMMAND', 'command must be a non-empty array of strings');
  }
  const rest = {};
  for (const key of Reflect.ownKeys(options)) {
    if (key === 'policy' || key === 'signal') continue;
    if (key === 'command') throw invalidOptions("options.command is not an option: the command is spawnIsolated's first argument");
    const desc = Object.getOwnPropertyDescriptor(options, key);
    // An option set to undefined is an option left out, as in JavaScript generally.
    if ('value' in desc && desc.value === undefined) continue;
    Object.defineProperty(rest, key, desc);
  }
  const out = { command: [...command] };
  if (options.policy !== undefined) out.policy = toPlainJson(options.policy, 'policy', 'ERR_CORDON_POLICY_INVALID');
  Object.assign(out, toPlainJson(rest, 'options', 'ERR_CORDON_INVALID_OPTIONS'));
  // Every sandbox's starter (the provider-liveness gate) and a mediated
  // policy's relay; a build without it runs ungated (`cordon doctor` says so).
  if (out.networkRelayPath === undefined && relayShipped()) out.networkRelayPath = egressRelayPath;
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
  const json = nativeOptions(command, options);
  // The deadline is the launcher's (in `json`); only the AbortSignal is JavaScript's.
  const triggers = checkStopTriggers({ signal: options.signal }, 'options.', maxDeadlineMs);
  const native = loadBinding();
  const execution = new IsolatedExecution(native);
  let handle;
  try {
    // Bound to the caller's async context: Node 24 restores none for a
    // threadsafe function's calls, so stderr and 'end' listeners ran with no
    // AsyncLocalStorage store there (round 16r, R16r-2).
    const onEvent = (kind, chunk, message, settled) => execution._onEvent(kind, chunk, message, settled);
    handle = native.spawnNative(json, AsyncResource.bind(onEvent, 'CordonEvents'));
  } catch (error) {
    throw asCordonError(error);
  }
  execution._attach(handle);
  armStopTriggers(execution, triggers);
  return execution;
}

/**
 * The launcher's verdict on a policy, without launching: throws its coded
 * error, else returns the network mode ("none" or "mediated").
 */
function checkPolicy(policy) {
  const json = JSON.stringify(toPlainJson(policy, 'policy', 'ERR_CORDON_POLICY_INVALID'));
  try {
    return loadBinding().checkPolicy(json);
  } catch (error) {
    throw asCordonError(error);
  }
}

// Code Mode host (docs/code-mode.md). lib/code-mode never loads the addon
// itself: it is handed this module's spawnIsolated, so the dependency stays one-way.
// The launcher's deadline ceiling (launch_request.rs), exported by the addon.
const maxDeadlineMs = () => loadBinding().MAX_DEADLINE_MS;
const { createPool } = require('./lib/pool').bindPool({ spawnIsolated, maxDeadlineMs });
/** The egress engine's admission rules (the addon's), for the program's fetch: lib restates none of them. */
const networkRules = Object.freeze({
  networkDestination: (text) => {
    try {
      return loadBinding().networkDestination(text);
    } catch (error) {
      throw asCordonError(error);
    }
  },
  requestedHost: (text) => loadBinding().requestedHost(text),
  isGlobalAddress: (ip) => loadBinding().isGlobalAddress(ip),
});
// Code Mode and sessions are loaded at their first use: a provider that only
// spawns sandboxes does not pay for their ~60 modules (~20–30 ms of its require).
let codeModeApi;
function codeMode() {
  codeModeApi ??= require('./lib/code-mode').bindCodeMode({ spawnIsolated, createPool, readOnly, checkPolicy, runnerPath, networkRules });
  return codeModeApi;
}
function createCodeMode(options) {
  return codeMode().createCodeMode(options);
}
function defineTool(tool) {
  return require('./lib/code-mode/tools').defineTool(tool);
}

// Sessions (docs/sessions.md): the same one-way binding as Code Mode.
/** cordon-exec-agent: the program of a session's warm sandbox. */
const execAgentPath = nativeExecutable('cordon-exec-agent');
let sessionsApi;
function sessions() {
  sessionsApi ??= require('./lib/sessions').bindSessions({
    spawnIsolated,
    workspaceWrite,
    agentPath: execAgentPath,
    // The launcher's bounded, no-follow tree removal (tree_removal.rs), off the event loop.
    removeTree: Object.freeze({
      tree: (dir, maxEntries) => loadBinding().removeTree(dir, maxEntries),
      contents: (dir, maxEntries) => loadBinding().emptyTree(dir, maxEntries),
    }),
    // The launcher's uid sweep (uid_sweep.rs): a session's orphans, before its workspace is reused or removed.
    // nsId: a non-root holder's user namespace (NS_GET_ID, a decimal string), which scopes the sweep.
    killUid: (uid, nsId) => loadBinding().killUidProcesses(uid, nsId),
    namespaceId: (pid) => loadBinding().userNamespaceId(pid),
    ownerRange: () => {
      const native = loadBinding();
      return { first: native.WORKSPACE_OWNER_UID_FIRST, count: native.WORKSPACE_OWNER_UIDS };
    },
  });
  return sessionsApi;
}
function createSessionManager(options) {
  return sessions().createSessionManager(options);
}
function memorySessionStore() {
  return sessions().memorySessionStore();
}
function sqliteSessionStore(file) {
  return sessions().sqliteSessionStore(file);
}

/**
 * `cordon doctor`: can this host run sandboxes? The report, checks and
 * verdict, is the launcher's own (crates/launcher/src/host_probe); by
 * default it checks the runner and relay this module uses, as the CLI
 * checks the ones shipped beside it.
 */
function doctor(options = {}) {
  const native = (opts) => JSON.parse(loadBinding().doctorNative(JSON.stringify(opts)));
  return require('./lib/doctor').runDoctor(native, { runnerPath, networkRelayPath: egressRelayPath, ...options });
}

module.exports = { spawnIsolated, readOnly, workspaceWrite, profile, runnerPath, CordonError, createCodeMode, defineTool, createPool, doctor, createSessionManager, memorySessionStore, sqliteSessionStore };
