'use strict';

// Runner line → frame, with the provider's event loop bounded whatever the
// line holds. A line of at most MAIN_THREAD_FRAME_BYTES is parsed in place
// (parse + duplicate-key/depth scan over 64 KiB: a few ms at worst). A longer
// one goes to a validator thread first (validator-pool.js decode): it parses
// and scans the line and counts values and distinct keys; the main thread
// then parses the text itself only when the counts are within frame-weight.js
// bounds. An overweight frame never reaches JSON.parse here:
// - a tool.call becomes a stand-in with empty arguments and a refusal, so the
//   call fails with INVALID_ARGUMENTS (catchable by the model's code);
// - an execution.result becomes a result_limit failure, RESULT_TOO_COMPLEX;
// - anything else is a protocol failure (BAD_FRAME).
// The caller must deliver frames in line order: decodeLine returns a frame or
// a Promise of one, and the line reader holds later lines until it settles.

const { FrameError, parseFrame, parseFrameText, VERSION } = require('./frames');
const { overweight } = require('./frame-weight');
const { sharedPool } = require('./validator-pool');

/** Lines up to this many bytes are parsed on the main thread. */
const MAIN_THREAD_FRAME_BYTES = 64 * 1024;
/** On a stand-in tool.call: the answer to give instead of validating (calls.js). */
const ARGUMENTS_REFUSAL = Symbol('cordon.argumentsRefusal');
const FRAME_ERROR_CODES = new Set(['BAD_FRAME', 'UNEXPECTED_FRAME']);

function standIn(summary, why) {
  if (summary.version !== VERSION) throw new FrameError('BAD_FRAME', `runner frame version is ${JSON.stringify(summary.version)?.slice(0, 64)}, expected "${VERSION}"`);
  const base = { version: VERSION, type: summary.type };
  if (summary.executionId !== undefined) base.executionId = summary.executionId;
  if (summary.type === 'tool.call') {
    const frame = { ...base, id: summary.id, name: summary.name, arguments: {} };
    const name = String(summary.name).slice(0, 256);
    Object.defineProperty(frame, ARGUMENTS_REFUSAL, {
      value: Object.freeze({ ok: false, code: 'INVALID_ARGUMENTS', message: `arguments for "${name}" are too complex: ${why}` }),
    });
    return frame;
  }
  if (summary.type === 'execution.result') {
    return { ...base, ok: false, error: { kind: 'result_limit', code: 'RESULT_TOO_COMPLEX', message: `the result is too complex: ${why}` } };
  }
  throw new FrameError('BAD_FRAME', `runner ${JSON.stringify(summary.type)?.slice(0, 64)} frame is too complex: ${why}`);
}

/**
 * @param {Buffer} line
 * @param {import('./validator-pool').ValidatorPool} [pool]
 * @returns {object | Promise<object>} a frame (parseFrame's shape); throws / rejects with FrameError
 */
function decodeLine(line, pool = sharedPool()) {
  if (line.length <= MAIN_THREAD_FRAME_BYTES) return parseFrame(line);
  return pool.decode(line).then((reply) => {
    if (!reply.ok) throw new FrameError(FRAME_ERROR_CODES.has(reply.code) ? reply.code : 'BAD_FRAME', reply.message);
    const why = overweight(reply.weight);
    return why ? standIn(reply.summary, why) : parseFrameText(reply.text, { structureChecked: true });
  });
}

module.exports = { decodeLine, ARGUMENTS_REFUSAL, MAIN_THREAD_FRAME_BYTES };
