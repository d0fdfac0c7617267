'use strict';

// The per-run stop triggers: an AbortSignal (JavaScript's own) and, for a
// pooled run, a deadline, each starting the stop ladder with its own reason
// (the receipt's `stop.reason`: "signal" or "deadline", docs/receipts.md).
// One module for spawnIsolated and the pool, so a pooled run is stopped and
// recorded exactly as a direct one. Every deadline is the launcher's timer:
// spawnIsolated's `deadlineMs` is part of the launch request; a pooled run's
// counts from take(), after the sandbox was spawned, so it is armed on the
// running execution (native `stopAfter`). No JS timer is the backstop.
// Every other option is the launcher's to check.

const { CordonError } = require('./errors');
/** The per-run options of a pooled sandbox (lib/pool.js's take()). */
const STOP_TRIGGER_KEYS = Object.freeze(['deadlineMs', 'signal']);

function invalid(message) {
  return new CordonError('ERR_CORDON_INVALID_OPTIONS', message);
}

/**
 * Checks `deadlineMs` and `signal` of `options`; `where` prefixes the
 * field in error messages ("options." or ""). `maxDeadlineMs()` is the
 * ceiling of whoever enforces the deadline (the launcher's, exported by the
 * addon; a remote host's client passes its own), asked only when a deadline
 * is given: this module never loads the addon, so cordon/remote can use it.
 * @returns {{deadlineMs?: number, signal?: AbortSignal}}
 */
function checkStopTriggers(options, where, maxDeadlineMs) {
  const { deadlineMs, signal } = options;
  const MAX_DEADLINE_MS = deadlineMs === undefined ? 0 : maxDeadlineMs();
  if (deadlineMs !== undefined
    && !(Number.isInteger(deadlineMs) && deadlineMs >= 1 && deadlineMs <= MAX_DEADLINE_MS)) {
    throw invalid(`${where}deadlineMs must be an integer from 1 to ${MAX_DEADLINE_MS}`);
  }
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw invalid(`${where}signal must be an AbortSignal`);
  }
  return { deadlineMs, signal };
}

/**
 * Stops `execution` with `reason` when `arm(fire)` fires; `arm` returns
 * its disarm function, called once the execution has settled.
 */
function stopOn(execution, reason, arm) {
  const disarm = arm(() => execution._requestStop(reason));
  execution.wait().then(disarm, disarm);
}

/** Arms checked stop triggers (see checkStopTriggers) on a started execution. */
function armStopTriggers(execution, { deadlineMs, signal }) {
  if (deadlineMs !== undefined) execution._stopAfter(deadlineMs);
  if (signal !== undefined) {
    stopOn(execution, 'signal', (fire) => {
      if (signal.aborted) {
        fire();
        return () => {};
      }
      signal.addEventListener('abort', fire, { once: true });
      return () => signal.removeEventListener('abort', fire);
    });
  }
}

module.exports = { STOP_TRIGGER_KEYS, checkStopTriggers, armStopTriggers };
