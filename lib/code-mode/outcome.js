'use strict';

// The one result shape, for success and failure alike:
//   {ok, result | error: {kind, code?, message}, logs, metrics, events, receipt, executionId, audit}
// `kind` says which part of the system decided the outcome; `code` (when
// present) is stable and what callers branch on. Runner kinds are passed
// through as the runner reported them (code-bridge-v1 §9); host kinds are:
//   limit       SOURCE_LIMIT_EXCEEDED, TOOL_RESULT_LIMIT_EXCEEDED, CUMULATIVE_RESULT_LIMIT_EXCEEDED
//   result_limit RESULT_LIMIT_EXCEEDED (the host's re-check of the final result),
//               RESULT_TOO_COMPLEX (more values or distinct keys than the host parses, frame-decoder.js)
//   source      SOURCE_EMPTY, SOURCE_HAS_NUL
//   protocol    BAD_FRAME, FRAME_TOO_LARGE, UNEXPECTED_FRAME, WRONG_EXECUTION_ID, WRONG_CALL_ID,
//               READY_LIMIT_RAISED, READY_TIMEOUT
//   runner_exit NO_TERMINAL_FRAME
//   timeout     HOST_DEADLINE_EXCEEDED
//   cancelled   (no code; also when aborted while queued)
//   sandbox     the launcher's ERR_CORDON_… code, or CONTAINMENT_UNCONFIRMED

const { deepFreeze } = require('../deep-freeze');

/** A failed termination; mutable until the run is finished (runner_exit gains exit details). */
function failed(kind, code, message) {
  const error = { kind, message };
  if (code !== undefined) error.code = code;
  return { ok: false, error };
}

/**
 * @param {{termination: object, logs: readonly object[], metrics: object, events: readonly object[], receipt: object,
 *   executionId: string, audit?: object, receiptPending?: readonly string[], final?: Promise<object>}} parts
 */
function buildResult({ termination, logs, metrics, events, receipt, executionId, audit, fetchReceipts = null, receiptPending, final }) {
  const result = { ok: termination.ok };
  if (termination.ok) result.result = termination.result;
  else result.error = { ...termination.error };
  // The sandbox keeps network "none" (docs/network.md › Code Mode): its receipt's
  // list is empty; the program's fetches, performed by this host, add theirs.
  const sandboxReceipts = Array.isArray(receipt?.networkReceipts) ? receipt.networkReceipts : [];
  const networkReceipts = fetchReceipts ? [...sandboxReceipts, ...fetchReceipts.receipts] : sandboxReceipts;
  Object.assign(result, { logs, metrics, events, receipt, networkReceipts, executionId });
  // Before teardown (resultBeforeTeardown): what the receipt still lacks, and the verdict to come; the
  // audit record needs the whole receipt, so it comes with `final`.
  if (final) Object.assign(result, { receiptPending, final });
  else result.audit = audit;
  if (fetchReceipts?.dropped > 0) result.networkReceiptsDropped = fetchReceipts.dropped;
  return deepFreeze(result);
}

module.exports = { failed, buildResult };
