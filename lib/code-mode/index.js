'use strict';

// createCodeMode: a capability-scoped Code Mode host over spawnIsolated and
// cordon-runner. lib/ never loads the native addon itself: index.js hands it
// the pieces it needs (`bindCodeMode({spawnIsolated, readOnly, runnerPath})`),
// which keeps the dependency one-way and lets the addon load exactly once.
//
// Everything a run depends on is validated and frozen here, at creation:
// tools (and their compiled schemas), limits, admission, runner, policy.

const { CordonError } = require('../errors');
const { defineTools, grantTools } = require('./tools');
const { resolveLimits, maxFrameBytes, runnerArgs } = require('./limits');
const { Admission } = require('./admission');
const { renderDeclarations, renderDescription } = require('./declarations');
const { runCode } = require('./run');
const { DEFAULT_STOP } = require('./execution');
const { resolveNetwork } = require('./network-options');

const OPTION_KEYS = new Set(['tools', 'limits', 'policy', 'admission', 'onEvent', 'onAudit', 'runner', 'pool', 'strictSchemas', 'network', 'resultBeforeTeardown']);
const RUNNER_KEYS = new Set(['path', 'stop', 'protocol']);
/** Runner dialects: which command-line flags the runner accepts (limits.js runnerArgs). */
const RUNNER_PROTOCOLS = new Set(['cordon', 'code-bridge-v1']);

function invalidArgument(message) {
  return new CordonError('ERR_CORDON_INVALID_OPTIONS', message);
}

function checkCallback(value, name) {
  if (value !== undefined && typeof value !== 'function') throw invalidArgument(`${name} must be a function`);
  return value;
}

function checkStop(stop) {
  if (stop === undefined) return undefined;
  const ok = stop !== null && typeof stop === 'object'
    && Object.keys(stop).every((key) => key === 'graceMs' || key === 'forceMs')
    && [stop.graceMs, stop.forceMs].every((ms) => Number.isSafeInteger(ms) && ms >= 0 && ms <= 60000);
  if (!ok) throw invalidArgument('runner.stop must be {graceMs, forceMs}, integers from 0 to 60000');
  return Object.freeze({ graceMs: stop.graceMs, forceMs: stop.forceMs });
}

/** A local runner is an absolute path (spawnIsolated does no $PATH lookup). */
function checkAbsoluteRunnerPath(path) {
  if (typeof path !== 'string' || !path.startsWith('/')) {
    throw invalidArgument(`runner.path must be an absolute path to cordon-runner, got ${JSON.stringify(path)}`);
  }
}

/**
 * `runner`: {path?, stop?, protocol?}; the path defaults to the packaged cordon-runner.
 * `protocol: 'code-bridge-v1'` names a reference runner: only the flags of spec §2 are passed.
 * `checkPath` is the binding's rule for runner.path (a remote host's: a program name).
 */
function resolveRunner(runner, defaultPath, checkPath = checkAbsoluteRunnerPath) {
  const options = runner === undefined ? {} : runner;
  if (options === null || typeof options !== 'object' || Array.isArray(options)) throw invalidArgument('runner must be an object such as {path}');
  for (const key of Object.keys(options)) {
    if (!RUNNER_KEYS.has(key)) throw invalidArgument(`unknown runner option "${key}"; known: path, stop, protocol`);
  }
  const protocol = options.protocol === undefined ? 'cordon' : options.protocol;
  if (!RUNNER_PROTOCOLS.has(protocol)) {
    throw invalidArgument(`runner.protocol must be "cordon" (cordon-runner) or "code-bridge-v1" (a reference runner: only the spec's flags), got ${JSON.stringify(protocol)}`);
  }
  const path = options.path === undefined ? defaultPath : options.path;
  checkPath(path);
  return Object.freeze({ path, stop: checkStop(options.stop), protocol });
}

/**
 * The `mode` of declarations()/description() options. Strict like run(): a typo
 * such as `{mood: 'inspect'}` would otherwise describe every tool to the model.
 */
function viewMode(options, method) {
  if (options === undefined) return undefined;
  if (options === null || typeof options !== 'object' || Array.isArray(options)) throw invalidArgument(`${method}() options must be an object such as {mode: "inspect"}`);
  for (const key of Object.keys(options)) {
    if (key !== 'mode') throw invalidArgument(`unknown ${method}() option "${key}"; known: mode`);
  }
  return options.mode;
}

/**
 * The run policy, checked by the launcher now (a bad one fails createCodeMode,
 * not the first run). A mediated network is refused: cordon-runner has no
 * network client, so the egress engine it would start could serve nothing.
 */
function checkedPolicy(api, policy) {
  if (policy === undefined) return api.readOnly();
  if (api.checkPolicy(policy) === 'mediated') {
    throw new CordonError('ERR_CORDON_UNSUPPORTED', 'a Code Mode policy cannot have network.mode "mediated": cordon-runner has no network client '
      + '(model code reaches the network only through your tools); use readOnly(), workspaceWrite() or a policy with network {mode: "none"}');
  }
  return policy;
}

/**
 * `pool: {size}`: prewarmed runners started with this instance's policy and
 * CLI ceilings (fixed per pool). Their frame ceiling is the limits' own; an
 * execute frame larger than that (a huge source) takes the cold path.
 */
function createRunnerPool(api, { pool, runner, limits, policy, network }) {
  if (pool === undefined) return null;
  const frameBytes = maxFrameBytes(limits, network);
  const sandboxes = api.createPool({
    command: [runner.path, ...runnerArgs(limits, frameBytes, runner.protocol, network)],
    policy,
    stop: runner.stop ?? DEFAULT_STOP,
  }, pool);
  return Object.freeze({ frameBytes, take: sandboxes.take, stats: sandboxes.stats, close: sandboxes.close });
}

/**
 * Bind the Code Mode host to the native layer.
 * @param {{spawnIsolated: Function, createPool: Function, readOnly: () => object,
 *   checkPolicy: (policy: object) => string, runnerPath: string,
 *   checkRunnerPath?: (path: unknown) => void}} api
 */
function bindCodeMode(api) {
  /**
   * @param {{tools: object[], limits?: object, policy?: object, admission?: object,
   *   onEvent?: (event: object) => void, onAudit?: (record: object) => void, runner?: {path?: string, stop?: object}}} options
   */
  function createCodeMode(options) {
    if (options === null || typeof options !== 'object' || Array.isArray(options)) {
      throw invalidArgument('createCodeMode needs an options object with at least {tools}');
    }
    for (const key of Object.keys(options)) {
      if (!OPTION_KEYS.has(key)) throw invalidArgument(`unknown createCodeMode option "${key}"; known: ${[...OPTION_KEYS].join(', ')}`);
    }
    const catalogue = defineTools(options.tools, { strictSchemas: options.strictSchemas });
    const limits = resolveLimits(options.limits);
    const policy = checkedPolicy(api, options.policy);
    const runner = resolveRunner(options.runner, api.runnerPath, api.checkRunnerPath);
    const admission = new Admission(options.admission);
    const onEvent = checkCallback(options.onEvent, 'onEvent');
    const onAudit = checkCallback(options.onAudit, 'onAudit');
    const network = resolveNetwork(options.network, api.networkRules.networkDestination);
    if (network && runner.protocol === 'code-bridge-v1') {
      throw new CordonError('ERR_CORDON_UNSUPPORTED', 'network (the program\'s fetch) needs cordon-runner\'s fetch extension; a reference code-bridge-v1 runner has none');
    }
    const resultBeforeTeardown = options.resultBeforeTeardown ?? false;
    if (typeof resultBeforeTeardown !== 'boolean') throw invalidArgument('resultBeforeTeardown must be a boolean');
    const pool = createRunnerPool(api, { pool: options.pool, runner, limits, policy, network });
    const host = Object.freeze({
      catalogue, limits, policy, admission, onEvent, onAudit, runner, pool, network, networkRules: api.networkRules, spawnIsolated: api.spawnIsolated,
      resultBeforeTeardown,
    });
    let closed = null;
    return Object.freeze({
      /** Run model-written code; resolves one result shape, rejects only for caller errors and admission. */
      run: (code, runOptions) => {
        if (closed) return Promise.reject(new CordonError('ERR_CORDON_CLOSED', 'this Code Mode instance is closed'));
        return runCode(host, code, runOptions);
      },
      /** Refuse new runs and stop the pool's waiting sandboxes (awaiting their end); runs in flight finish on their own. */
      close: () => {
        closed ??= pool ? pool.close() : Promise.resolve();
        return closed;
      },
      /** The prewarmed pool's counters, or null without a pool. */
      poolStats: () => (pool ? pool.stats() : null),
      /** TypeScript declarations of the `tools` a mode grants, for the model's prompt. */
      declarations: (viewOptions) => renderDeclarations(grantTools(catalogue, viewMode(viewOptions, 'declarations'))),
      /** A ready tool description for an LLM, with the declarations and limits. */
      description: (viewOptions) => renderDescription(grantTools(catalogue, viewMode(viewOptions, 'description')), limits, network),
      /** Current admission load: {active, queued, maxConcurrent, maxQueued, queueTimeoutMs}. */
      stats: () => host.admission.stats(),
      limits,
      network,
    });
  }
  return { createCodeMode };
}

module.exports = { bindCodeMode };
