'use strict';

// `codeMode.run(code, options)`: one Code Mode execution from the caller's
// point of view. Steps:
//   1. check options (programming errors throw ERR_CORDON_INVALID_OPTIONS)
//   2. grant tools for the mode; check the source (empty, NUL, sourceBytes)
//   3. admission: a slot, or ERR_CORDON_ADMISSION at once
//   4. prepare the source: one markdown fence removed, TypeScript types stripped (source-prep.js)
//   5. Execution in a sandbox (execution.js)
//   6. release the slot only when the sandbox's wait() has settled
//   7. one result: termination + metrics + events + receipt + audit

const crypto = require('node:crypto');
const { CordonError } = require('../errors');
const { grantTools, resolveMode } = require('./tools');
const { EventLog } = require('./events');
const { CallDispatcher } = require('./calls');
const { ConsoleLog } = require('./console-log');
const { Execution } = require('./execution');
const { FetchDispatcher } = require('./fetch-dispatcher');
const { prepareSource } = require('./source-prep');
const { AdmissionAbortedError } = require('./admission');
const { buildAuditRecord } = require('./audit');
const { failed, buildResult } = require('./outcome');
const { deepFreeze } = require('../deep-freeze');

const RUN_OPTION_KEYS = new Set(['signal', 'mode', 'executionId', 'context', 'parentId']);
/** Ids end up in receipts, logs and file names: a conservative alphabet and length. */
const ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

function invalidArgument(message) {
  return new CordonError('ERR_CORDON_INVALID_OPTIONS', message);
}

function checkId(value, name) {
  if (typeof value !== 'string' || !ID_PATTERN.test(value)) {
    throw invalidArgument(`${name} must be 1–128 characters of [A-Za-z0-9._:-], got ${JSON.stringify(value)?.slice(0, 80)}`);
  }
  return value;
}

function checkRunOptions(code, options) {
  if (typeof code !== 'string') throw invalidArgument('code must be a string of JavaScript (the body of an async function)');
  if (options === null || typeof options !== 'object' || Array.isArray(options)) throw invalidArgument('run options must be an object');
  for (const key of Object.keys(options)) {
    if (!RUN_OPTION_KEYS.has(key)) throw invalidArgument(`unknown run option "${key}"; known: ${[...RUN_OPTION_KEYS].join(', ')}`);
  }
  const { signal } = options;
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw invalidArgument('signal must be an AbortSignal');
  return {
    mode: resolveMode(options.mode),
    executionId: options.executionId === undefined ? crypto.randomUUID() : checkId(options.executionId, 'executionId'),
    parentId: options.parentId === undefined || options.parentId === null ? null : checkId(options.parentId, 'parentId'),
    signal,
    context: options.context,
  };
}

/** A source the runner must never see: decided on the host, no sandbox started. */
function checkSource(code, limits) {
  if (code.length === 0) return failed('source', 'SOURCE_EMPTY', 'code is empty');
  if (code.includes('\0')) return failed('source', 'SOURCE_HAS_NUL', 'code contains a NUL character');
  const bytes = Buffer.byteLength(code, 'utf8');
  if (bytes > limits.sourceBytes) return failed('limit', 'SOURCE_LIMIT_EXCEEDED', `code is ${bytes} bytes, the limit is ${limits.sourceBytes}`);
  return null;
}

async function admit(host, signal) {
  try {
    return { release: await host.admission.acquire(signal) };
  } catch (error) {
    if (error instanceof AdmissionAbortedError) return { termination: failed('cancelled', undefined, 'execution cancelled while queued') };
    throw error;
  }
}

async function execute(host, code, opts, granted, events, dispatcher, consoleLog, fetcher) {
  // `execution.started` is emitted once the run is admitted (or decided without a sandbox), so
  // every started event has a finished one; a run refused admission throws and emits neither.
  const started = () => events.started({ mode: opts.mode, tools: [...granted.keys()], limits: host.limits });
  const early = checkSource(code, host.limits) ?? (opts.signal?.aborted ? failed('cancelled', undefined, 'execution cancelled') : null);
  if (early) {
    started();
    return { termination: early, receipt: {} };
  }
  const admitted = await admit(host, opts.signal);
  started();
  if (!admitted.release) return { termination: admitted.termination, receipt: {} };
  let outcome;
  try {
    // Inside the slot: admission also bounds how many sources wait for the type stripper.
    const prepared = await prepareSource(code);
    if (prepared.termination) {
      admitted.release();
      return { termination: prepared.termination, receipt: {} };
    }
    outcome = await new Execution({ host, executionId: opts.executionId, code: prepared.code, granted, dispatcher, consoleLog, fetcher }).start(opts.signal);
  } catch (error) {
    admitted.release(); // spawnIsolated threw: nothing was started
    throw error;
  }
  // The slot belongs to the sandbox, not to this promise: free it once wait() has settled.
  outcome.settled.then(admitted.release, admitted.release);
  return outcome;
}

/**
 * @param {object} host the frozen state built by createCodeMode
 * @param {string} code
 * @param {object} [options]
 */
async function runCode(host, code, options = {}) {
  const opts = checkRunOptions(code, options);
  const granted = grantTools(host.catalogue, opts.mode);
  const events = new EventLog({ executionId: opts.executionId, parentId: opts.parentId, onEvent: host.onEvent });
  const dispatcher = new CallDispatcher({
    catalogue: host.catalogue,
    granted,
    limits: host.limits,
    events,
    ctxBase: { executionId: opts.executionId, mode: opts.mode, context: opts.context },
  });
  const consoleLog = new ConsoleLog({ events });
  const fetcher = host.network ? new FetchDispatcher({ network: host.network, rules: host.networkRules, events, invocationId: opts.executionId }) : null;
  const startedAt = Date.now();
  const t0 = performance.now();
  const outcome = await execute(host, code, opts, granted, events, dispatcher, consoleLog, fetcher);
  const { termination, receipt } = requireReceipt(outcome);
  const metrics = {
    elapsedMs: Math.round(performance.now() - t0),
    toolCalls: dispatcher.calls,
    resultBytes: termination.ok ? termination.resultBytes : 0,
    cumulativeResultBytes: dispatcher.cumulativeBytes,
    ...consoleLog.metrics(),
  };
  // Only with network: a run without it keeps exactly the metrics it always had.
  if (fetcher) metrics.networkRequests = fetcher.requests;
  events.finished({ ok: termination.ok, error: termination.error, metrics });
  const audit = (ended) => emitAudit(host, buildAuditRecord({
    executionId: opts.executionId, parentId: opts.parentId, mode: opts.mode, code, tools: [...granted.keys()],
    limits: host.limits, ok: ended.termination.ok, error: ended.termination.error, metrics, receipt: ended.receipt, receiptDigest: ended.receiptDigest, startedAt, logs: consoleLog.auditLines(),
  }));
  const fetchReceipts = fetcher ? { receipts: fetcher.receipts, dropped: fetcher.receiptsDropped } : null;
  const parts = { termination, logs: consoleLog.snapshot(), metrics, events: events.snapshot(), receipt, executionId: opts.executionId, fetchReceipts };
  if (!outcome.final) return buildResult({ ...parts, audit: audit({ termination, receipt, receiptDigest: outcome.receiptDigest }) });
  // resultBeforeTeardown: the receipt so far, and the sandbox's verdict (with the audit record) once it is gone.
  const final = outcome.final.then((ended) => {
    const settled = requireReceipt(ended);
    return deepFreeze({ ok: settled.termination.ok, ...(settled.termination.ok ? {} : { error: { ...settled.termination.error } }), receipt: settled.receipt, audit: audit(settled) });
  });
  return buildResult({ ...parts, receiptPending: RECEIPT_PENDING, final });
}

/** The receipt fields a result before teardown does not have yet (docs/receipts.md › "Before the end"). */
const RECEIPT_PENDING = Object.freeze(['endedAt', 'durationMs', 'outcome', 'stop', 'bytes', 'networkReceipts', 'confinement.cgroupOutcome']);

function emitAudit(host, record) {
  if (host.onAudit) {
    try { host.onAudit(record); } catch { /* an audit sink failure must not change the outcome */ }
  }
  return record;
}

/** A run whose sandbox left no receipt is never `ok` (docs/receipts.md). */
function requireReceipt(outcome) {
  if (!outcome.termination.ok || Object.keys(outcome.receipt ?? {}).length > 0) return outcome;
  const termination = failed('sandbox', 'ERR_CORDON_RECEIPT_UNAVAILABLE', 'the sandbox left no receipt: the run is not accounted for');
  return { ...outcome, termination };
}

module.exports = { runCode };
