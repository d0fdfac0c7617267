'use strict';

// One tool call, from the runner's `tool.call` to the answer the host sends
// back. Steps, in order — each refusal answers ok:false with a code and the
// handler never runs for a call refused before step 3:
//   1. granted?            TOOL_NOT_GRANTED (the allowlist is re-checked here, not trusted)
//   2. arguments valid?    INVALID_ARGUMENTS (reserved keys, the tool's inputSchema), or
//                          VALIDATION_TIMEOUT / VALIDATION_BUSY / VALIDATION_FAILED (validation.js);
//                          a Standard Schema then parses them (standard-parse.js): INVALID_ARGUMENTS
//   3. handler(args, ctx)  TOOL_FAILED when it throws or rejects; args are the Standard Schema's output
//   4. project(result)     PROJECTION_FAILED when it throws
//   5. strict JSON?        RESULT_NOT_JSON (functions, BigInt, cycles, NaN/Infinity, class instances)
//   6. outputSchema?       RESULT_SCHEMA_MISMATCH (validation.js, off the main thread when not provably cheap)
//   7. sizes               TOOL_RESULT_LIMIT_EXCEEDED / CUMULATIVE_RESULT_LIMIT_EXCEEDED (these latch the run)

const { toJsonText, NotJsonError } = require('./json-value');
const { parseArguments } = require('./standard-parse');
const { validateArguments, validateResult } = require('./validation');
const { FRAME_TEXT } = require('./frames');
const { ARGUMENTS_REFUSAL } = require('./frame-decoder');

/** Handler and projection error messages reach the model's code; they are cut to this. */
const MAX_TOOL_ERROR_CHARS = 1024;

/**
 * A refused call. `message` is what the model's code reads ("tool failed: CODE: message");
 * `providerHint`, when given, is advice for the provider (its tool.failed event), not the model.
 */
/**
 * A failed call's error for the program. Its texts are made well-formed (a lone
 * surrogate becomes U+FFFD): a handler's error message can hold one, and its
 * JSON escape would make the runner refuse the frame (see json-value.js).
 */
function failure(code, message, latch = false, providerHint = undefined) {
  const text = String(message).slice(0, MAX_TOOL_ERROR_CHARS).toWellFormed();
  const out = { ok: false, error: { code, message: `${code}: ${text}` }, latch };
  if (providerHint !== undefined) out.providerHint = String(providerHint).slice(0, MAX_TOOL_ERROR_CHARS).toWellFormed();
  return out;
}

function errorText(error) {
  return error instanceof Error ? error.message : String(error);
}

class CallDispatcher {
  /**
   * @param {{catalogue: ReadonlyMap<string, object>, granted: ReadonlyMap<string, object>,
   *   limits: object, events: import('./events').EventLog, ctxBase: object}} options
   *   ctxBase: {executionId, mode, context} passed to handlers with callId and signal
   */
  constructor({ catalogue, granted, limits, events, ctxBase }) {
    this.catalogue = catalogue;
    this.granted = granted;
    this.limits = limits;
    this.events = events;
    this.ctxBase = ctxBase;
    this.calls = 0;
    this.cumulativeBytes = 0;
    /** callId → {callId, name, started, reported}: the calls whose handlers are running. */
    this.inFlight = new Map();
  }

  /**
   * Run one call to completion. Never throws.
   * @param {{id: number, name: string, arguments: object}} frame a validated tool.call
   * @param {AbortSignal} signal aborted when the run ends or the call is abandoned
   * @returns {Promise<{ok: true, result: unknown, text: string, bytes: number} | {ok: false, error: {code: string, message: string}, latch: boolean}>}
   */
  async dispatch(frame, signal) {
    this.calls += 1;
    const { id: callId, name, arguments: args } = frame;
    const call = { callId, name, started: performance.now(), reported: false };
    this.inFlight.set(callId, call);
    this.events.toolRequested({ callId, name, args });
    let outcome = await this.evaluate(frame, signal);
    this.inFlight.delete(callId);
    if (call.reported) return outcome; // abandoned: already reported as failed
    call.reported = true;
    // Checked and counted in one synchronous step: with several calls outstanding,
    // two results finishing together cannot both pass against the same total.
    if (outcome.ok) outcome = this.checkCumulative(outcome);
    const durationMs = Math.round(performance.now() - call.started);
    if (outcome.ok) {
      this.events.toolCompleted({ callId, name, durationMs, resultBytes: outcome.bytes, result: outcome.result });
    } else {
      this.events.toolFailed({ callId, name, durationMs, error: outcome.error, providerHint: outcome.providerHint });
    }
    return outcome;
  }

  /**
   * The run stopped waiting for its calls (deadline, cancel, end): report every
   * call still in flight failed now, so no event follows execution.finished; the
   * handlers' late results are dropped.
   * @param {string} code DEADLINE_EXCEEDED, CANCELLED or RUN_ENDED
   */
  abandon(code) {
    for (const call of this.inFlight.values()) {
      if (call.reported) continue;
      call.reported = true;
      this.events.toolFailed({ callId: call.callId, name: call.name, durationMs: Math.round(performance.now() - call.started), error: { code } });
    }
    this.inFlight.clear();
  }

  async evaluate(frame, signal) {
    const { id: callId, name, arguments: args } = frame;
    const tool = this.granted.get(name);
    if (!tool) {
      const why = this.catalogue.has(name) ? `"${name}" is not granted in ${this.ctxBase.mode} mode` : `"${name}" is not a granted tool`;
      return failure('TOOL_NOT_GRANTED', why.slice(0, 400));
    }
    // A frame too complex to parse on the main thread arrives as a stand-in carrying its refusal.
    const verdict = frame[ARGUMENTS_REFUSAL] ?? await validateArguments(tool, args, { signal, frameText: frame[FRAME_TEXT] });
    if (!verdict.ok) return failure(verdict.code, verdict.message);
    let handlerArgs = args;
    if (tool.parse) {
      const parsed = await parseArguments(tool.parse, args, name);
      if (!parsed.ok) return failure(parsed.code, parsed.message);
      handlerArgs = parsed.value;
    }
    if (signal.aborted) return failure('RUN_ENDED', 'the run ended before the tool started');
    let value;
    try {
      value = await tool.handler(handlerArgs, Object.freeze({ ...this.ctxBase, callId, signal }));
    } catch (error) {
      return failure('TOOL_FAILED', errorText(error));
    }
    if (signal.aborted) return failure('RUN_ENDED', 'the run ended before the tool finished');
    return this.shape(tool, value === undefined ? null : value, signal);
  }

  async shape(tool, value, signal) {
    let projected = value;
    if (tool.project) {
      try {
        projected = tool.project(value);
      } catch (error) {
        return failure('PROJECTION_FAILED', errorText(error));
      }
    }
    let json;
    try {
      json = toJsonText(projected === undefined ? null : projected, 'result');
    } catch (error) {
      // Anything else (a throwing getter, a stack overflow) is just as much "not JSON".
      if (error instanceof NotJsonError) return failure('RESULT_NOT_JSON', error.message, false, error.providerHint);
      return failure('RESULT_NOT_JSON', `result cannot be serialized: ${errorText(error)}`, false, 'shape the handler\'s result into plain JSON in project()');
    }
    if (tool.output) {
      const verdict = await validateResult(tool, projected, { signal, text: json.text });
      if (!verdict.ok) return failure(verdict.code, verdict.message);
    }
    return this.checkSizes(projected, json);
  }

  checkSizes(result, { text, bytes }) {
    const { toolResultBytes } = this.limits;
    if (bytes > toolResultBytes) {
      return failure('TOOL_RESULT_LIMIT_EXCEEDED', `tool result is ${bytes} bytes, the limit is ${toolResultBytes}`, true);
    }
    return { ok: true, result, text, bytes };
  }

  /** Count a delivered result against cumulativeResultBytes, or refuse it (latching the run). */
  checkCumulative(outcome) {
    const { cumulativeResultBytes } = this.limits;
    const total = this.cumulativeBytes + outcome.bytes;
    if (total > cumulativeResultBytes) {
      return failure('CUMULATIVE_RESULT_LIMIT_EXCEEDED', `tool results would total ${total} bytes, the limit is ${cumulativeResultBytes}`, true);
    }
    this.cumulativeBytes = total;
    return outcome;
  }
}

module.exports = { CallDispatcher };
