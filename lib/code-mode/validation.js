'use strict';

// Tool-argument validation with a time bound the model cannot break:
//
//   await validateArguments(tool, args, {signal, frameText})
//     → {ok: true} | {ok: false, code, message}      (never rejects)
//   await validateResult(tool, projected, {signal, text})   (outputSchema; same shape)
//
// codes: INVALID_ARGUMENTS (schema mismatch, reserved key, unparseable),
// VALIDATION_TIMEOUT (the worker's budget ran out), VALIDATION_BUSY (the
// pool's queue is full), VALIDATION_FAILED (the worker died), RUN_ENDED
// (`signal` aborted while queued).
//
// Two paths:
// - fast (main thread): only when the bound is provable from what was seen at
//   createCodeMode and the size of this call — the schema has no super-linear
//   keyword (schema-shape.js) and weight × values ≤ FAST_PATH_MAX_WORK, where
//   values ≤ the frame's length (FAST_PATH_MAX_FRAME_CHARS at most). That is
//   a few hundred thousand O(1) checks: well under a millisecond of work.
// - pool (validator-pool.js): everything else, with a hard per-call budget.
//
// `frameText` is the JSON text of the tool.call frame the arguments came
// from (frames.js attaches it as FRAME_TEXT). With it the pool gets a string
// (a memcpy) instead of a structured clone of the arguments, which costs the
// main thread as much as parsing them did.

const crypto = require('node:crypto');
const { checkArguments, checkResult } = require('./argument-check');
const { describeSchema } = require('./schema-shape');
const { sharedPool } = require('./validator-pool');

/** Frames longer than this (UTF-16 units) are validated in the pool whatever the schema. */
const FAST_PATH_MAX_FRAME_CHARS = 16 * 1024;
/** weight × values allowed on the main thread. */
const FAST_PATH_MAX_WORK = 256 * 1024;

/**
 * What validation needs of a tool's input or output schema, prepared once at createCodeMode.
 * @param {{schema: object, validate: Function, draft: string, strict: boolean}} compiled
 */
function prepareValidation({ schema, validate, draft, strict }) {
  const { weight, namedKeys } = describeSchema(schema);
  const schemaText = JSON.stringify(schema);
  const schemaId = crypto.createHash('sha256').update(`${draft}\0${strict}\0${schemaText}`).digest('hex');
  return Object.freeze({ validate, namedKeys, weight, schemaText, schemaId, draft, strict });
}

/**
 * Values in `args` if there are at most `max` and their strings total at most
 * FAST_PATH_MAX_FRAME_CHARS, else Infinity. Bounded: stops after max + 1 values.
 * Used only without frame text, when the arguments' size is not known yet.
 */
function boundedValueCount(args, max) {
  let count = 0;
  let chars = 0; // string keywords (minLength, …) walk the string: bound the total as a frame would
  const stack = [args];
  while (stack.length > 0) {
    count += 1;
    if (count > max) return Infinity;
    const node = stack.pop();
    if (node === null || typeof node !== 'object') {
      if (typeof node === 'string') chars += node.length;
      if (chars > FAST_PATH_MAX_FRAME_CHARS) return Infinity;
      continue;
    }
    // for…in stops early; Object.keys on a 100 000-key object would not.
    let seen = 0;
    for (const key in node) {
      if (!Object.prototype.hasOwnProperty.call(node, key)) continue;
      seen += 1;
      if (count + seen + stack.length > max) return Infinity;
      stack.push(node[key]);
    }
  }
  return count;
}

/**
 * @param {ReturnType<typeof prepareValidation>} prepared
 * @param {unknown} value
 * @param {string} [text] JSON text holding `value` (the frame, or the value's own serialization)
 */
function fitsFastPath(prepared, value, text) {
  if (prepared.weight === null) return false;
  const maxValues = Math.floor(FAST_PATH_MAX_WORK / prepared.weight);
  if (text !== undefined) return text.length <= FAST_PATH_MAX_FRAME_CHARS && text.length <= maxValues * 2;
  return boundedValueCount(value, Math.min(maxValues, FAST_PATH_MAX_FRAME_CHARS / 2)) !== Infinity;
}

function poolRequest(prepared, name, role) {
  return {
    role, name, schemaId: prepared.schemaId, schemaText: prepared.schemaText, draft: prepared.draft, strict: prepared.strict,
    namedKeys: [...prepared.namedKeys],
  };
}

/**
 * @param {{name: string, input: ReturnType<typeof prepareValidation>}} tool
 * @param {unknown} args the parsed arguments
 * @param {{signal?: AbortSignal, frameText?: string, pool?: import('./validator-pool').ValidatorPool}} [options]
 * @returns {Promise<{ok: true} | {ok: false, code: string, message: string}>}
 */
async function validateArguments(tool, args, { signal, frameText, pool = sharedPool() } = {}) {
  const { input, name } = tool;
  if (fitsFastPath(input, args, frameText)) return checkArguments(input, args, name);
  const request = poolRequest(input, name, 'input');
  if (frameText !== undefined) request.frameText = frameText;
  else request.value = args;
  return pool.validate(request, signal);
}

/**
 * A projected tool result against the tool's outputSchema, on the same two paths: a result may
 * echo what the model sent, so a super-linear outputSchema must not run on the main thread either.
 * @param {{name: string, output: ReturnType<typeof prepareValidation>}} tool with an outputSchema
 * @param {unknown} value the projected result
 * @param {{signal?: AbortSignal, text: string, pool?: import('./validator-pool').ValidatorPool}} options
 *   text: the result's JSON serialization (calls.js has it already)
 * @returns {Promise<{ok: true} | {ok: false, code: string, message: string}>} codes: RESULT_SCHEMA_MISMATCH,
 *   VALIDATION_TIMEOUT, VALIDATION_BUSY, VALIDATION_FAILED, RUN_ENDED
 */
async function validateResult(tool, value, { signal, text, pool = sharedPool() }) {
  const { output, name } = tool;
  if (fitsFastPath(output, value, text)) return checkResult(output, value, name);
  return pool.validate({ ...poolRequest(output, name, 'output'), valueText: text }, signal);
}

module.exports = { validateArguments, validateResult, prepareValidation, fitsFastPath, FAST_PATH_MAX_FRAME_CHARS, FAST_PATH_MAX_WORK };
