'use strict';

// `cordon/remote`: the client of `cordon host` (docs/remote.md), in plain
// JavaScript over node:net and node:tls. It never loads the native addon
// (nor index.js, nor lib/native.js): it installs and runs where cordon
// cannot sandbox (macOS, Windows, a container without user namespaces).
// connectRemote() checks the target and credentials at once (fail closed)
// and returns the local API's run surface bound to that host: spawnIsolated,
// a pool (lib/pool.js) and Code Mode (lib/code-mode), the same modules the
// local binding uses, handed this spawnIsolated.

const { CordonError } = require('../errors');
const { isPlainObject } = require('../plain-json');
const { bindPool } = require('../pool');
const { bindCodeMode } = require('../code-mode');
const { armStopTriggers } = require('../stop-triggers');
const { checkTarget } = require('./transport');
const { remoteSpawnRequest, MAX_TIMER_MS } = require('./options');
const { readOnly, workspaceWrite, profile, checkPolicy } = require('./policy');
const { RemoteExecution } = require('./execution');
const { checkPublicKey } = require('./signature');
const { fetchReceipts } = require('./receipts');

/** How long past a run's deadline (or without one, past the host's last frame) the client waits. */
const DEFAULT_SLACK_MS = 10_000;
/** The host's runner program, as a host's configuration names it (docs/remote.md). */
const DEFAULT_RUNNER_PROGRAM = 'cordon-runner';
const SETTING_KEYS = new Set(['slackMs', 'runnerProgram', 'hostPublicKey']);

function invalid(message) {
  return new CordonError('ERR_CORDON_INVALID_OPTIONS', message);
}

function checkSettings(settings) {
  if (!isPlainObject(settings)) throw invalid('connectRemote settings must be an object such as {slackMs: 10000}');
  for (const key of Object.keys(settings)) {
    if (!SETTING_KEYS.has(key)) throw invalid(`unknown connectRemote setting "${key}"; known: ${[...SETTING_KEYS].join(', ')}`);
  }
  const { slackMs = DEFAULT_SLACK_MS, runnerProgram = DEFAULT_RUNNER_PROGRAM } = settings;
  if (!Number.isInteger(slackMs) || slackMs < 1 || slackMs > MAX_TIMER_MS / 2) throw invalid(`slackMs must be an integer from 1 to ${MAX_TIMER_MS / 2}`);
  checkRunnerProgram(runnerProgram);
  return { slackMs, runnerProgram, hostPublicKey: checkPublicKey(settings.hostPublicKey) };
}

/** A remote runner is a program name from the host's allowlist, never a path. */
function checkRunnerProgram(name) {
  if (typeof name !== 'string' || !/^[A-Za-z0-9._+-]{1,128}$/.test(name) || name === '.' || name === '..') {
    throw invalid(`runner.path must be a program name from the host's allowlist (such as "cordon-runner"), never a host path; got ${JSON.stringify(name)}`);
  }
}

/** The program's fetch needs the egress engine's admission rules, which live in the native addon. */
const NO_NETWORK_RULES = Object.freeze({
  networkDestination: () => {
    throw new CordonError('ERR_CORDON_REMOTE_UNSUPPORTED', 'Code Mode\'s network option (the program\'s fetch) is not available through a remote host: its admission rules are the native addon\'s, which cordon/remote never loads');
  },
  requestedHost: () => null,
  isGlobalAddress: () => false,
});

/**
 * @param {{socket: string} | {url: string, tls: {ca, cert?, key?, servername?}, token?: string}} target
 * @param {{slackMs?: number, runnerProgram?: string, hostPublicKey?: string | Buffer | import('node:crypto').KeyObject}} [settings]
 */
function connectRemote(target, settings = {}) {
  const checked = checkTarget(target);
  const { slackMs, runnerProgram, hostPublicKey } = checkSettings(settings);

  /**
   * One connection, one sandbox. Throws (with a code) before connecting on
   * bad input or an option naming a host resource; everything else the host
   * refuses arrives as wait()'s rejection.
   */
  const live = new Set();
  const pools = new Set();
  let closing = null;
  const refuseClosed = () => {
    if (closing) throw new CordonError('ERR_CORDON_CLOSED', 'this remote client is closed');
  };

  function spawnIsolated(command, options) {
    refuseClosed();
    const request = remoteSpawnRequest(command, options);
    const execution = new RemoteExecution(checked, request, { slackMs, hostPublicKey });
    execution._start();
    live.add(execution);
    const forget = () => live.delete(execution);
    execution.wait().then(forget, forget);
    if (request.deadlineMs !== undefined) execution._armDeadline(request.deadlineMs);
    armStopTriggers(execution, { signal: request.signal });
    return execution;
  }

  const pooled = bindPool({ spawnIsolated, maxDeadlineMs: () => MAX_TIMER_MS });
  function createPool(spawnOptions, poolOptions) {
    refuseClosed();
    const pool = pooled.createPool(spawnOptions, poolOptions);
    pools.add(pool);
    return pool;
  }
  const bound = bindCodeMode({
    spawnIsolated, createPool, readOnly, checkPolicy, runnerPath: runnerProgram, checkRunnerPath: checkRunnerProgram, networkRules: NO_NETWORK_RULES,
  });

  function createCodeMode(options) {
    refuseClosed();
    if (isPlainObject(options) && options.network !== undefined) NO_NETWORK_RULES.networkDestination();
    return bound.createCodeMode(options);
  }

  return Object.freeze({
    spawnIsolated,
    createPool,
    createCodeMode,
    readOnly,
    workspaceWrite,
    profile,
    /**
     * The receipts the host kept for `invocationId` of this tenant, newest
     * first (after a host crash: `outcome.status` `"host-lost"`).
     */
    receipts: (invocationId) => fetchReceipts(checked, invocationId, slackMs),
    /**
     * Refuses new runs, closes every pool made here and stops every sandbox
     * still running through this client; resolves once each has settled. Idempotent.
     */
    close: () => {
      closing ??= Promise.all([...[...pools].map((pool) => pool.close()), ...[...live].map((execution) => execution.stop())]).then(() => undefined);
      return closing;
    },
  });
}

module.exports = { connectRemote, CordonError, DEFAULT_SLACK_MS };
