'use strict';

// Tool-argument validation with a time bound the model cannot break:
//
//   await validateArguments(tool, args, {signal, frameText})
//     → {ok: true} | {ok: false, code, message}      (never rejects)
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
const { checkArguments } = require('./argument-check');
const { describeSchema } = require('./schema-shape');
const { sharedPool } = require('./validator-pool');

/** Frames longer than this (UTF-16 units) are validated in the pool whatever the schema. */
const FAST_PATH_MAX_FRAME_CHARS = 16 * 1024;
/** weight × values allowed on the main thread. */
const FAST_PATH_MAX_WORK = 256 * 1024;

/**
 * What validation needs of a tool's input schema, prepared once at createCodeMode.
 * @param {{schema: object, validate: Function, draft: string, strict: boolean}} compiled
 */
function prepareInputValidation({ schema, validate, draft, strict }) {
  const { weight, namedKeys } = describeSchema(schema);
  const schemaText = JSON.stringify(schema);
  const schemaId = crypto.createHash('sha256').update(`${draft}\0${strict}\0${schemaText}`).digest('hex');
  return Object.freeze({ validate, namedKeys, weight, schemaText, schemaId, draft, strict });
}

/**
 * Values in `args` if there are at most `max`, else Infinity. Bounded: stops after max + 1 values.
 * Used only without frame text, when the arguments' size is not known yet.
 */
function boundedValueCount(args, max) {
  let count = 0;
  const stack = [args];
  while (stack.length > 0) {
    count += 1;
    if (count > max) return Infinity;
    const node = stack.pop();
    if (node === null || typeof node !== 'object') {
      if (typeof node === 'string' && node.length > FAST_PATH_MAX_FRAME_CHARS) return Infinity;
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

function fitsFastPath(input, args, frameText) {
  if (input.weight === null) return false;
  const maxValues = Math.floor(FAST_PATH_MAX_WORK / input.weight);
  if (frameText !== undefined) return frameText.length <= FAST_PATH_MAX_FRAME_CHARS && frameText.length <= maxValues * 2;
  return boundedValueCount(args, Math.min(maxValues, FAST_PATH_MAX_FRAME_CHARS / 2)) !== Infinity;
}

/**
 * @param {{name: string, input: ReturnType<typeof prepareInputValidation>}} tool
 * @param {unknown} args the parsed arguments
 * @param {{signal?: AbortSignal, frameText?: string, pool?: import('./validator-pool').ValidatorPool}} [options]
 * @returns {Promise<{ok: true} | {ok: false, code: string, message: string}>}
 */
async function validateArguments(tool, args, { signal, frameText, pool = sharedPool() } = {}) {
  const { input, name } = tool;
  if (fitsFastPath(input, args, frameText)) return checkArguments(input, args, name);
  const request = {
    schemaId: input.schemaId, schemaText: input.schemaText, draft: input.draft, strict: input.strict,
    namedKeys: [...input.namedKeys], name,
  };
  if (frameText !== undefined) request.frameText = frameText;
  else request.args = args;
  return pool.validate(request, signal);
}

module.exports = { validateArguments, prepareInputValidation, fitsFastPath, FAST_PATH_MAX_FRAME_CHARS, FAST_PATH_MAX_WORK };
