'use strict';

// Strict JSON values. What a tool returns crosses into untrusted code, so it
// must be exactly JSON: JSON.stringify would silently turn NaN into null, drop
// undefined and functions, call toJSON, flatten a Map into {} and loop on a
// cycle. Every one of those is refused here with the path that caused it. The
// message is what the model's code reads; `providerHint` (shape the value in
// `project()`) is advice for the provider and goes to its tool.failed event.

/**
 * Nested arrays/objects allowed in a tool result. The runner decodes frames
 * with serde_json, which refuses a 128th nested level, and the tool.result
 * frame is one level itself: a 127-deep result would reach the runner as an
 * unreadable frame (an uncatchable protocol failure) instead of a catchable
 * RESULT_NOT_JSON. It also keeps JSON.stringify's recursion on the host shallow.
 */
const MAX_JSON_DEPTH = 126;

class NotJsonError extends Error {
  constructor(path, what) {
    super(`${path} is ${what}; the tool's result is not plain JSON (a fault of the tool, not of the code)`);
    this.path = path;
    this.providerHint = `${path} is ${what}; tool results must be plain JSON (shape them in project())`;
  }
}

function describeNonJson(value) {
  switch (typeof value) {
    case 'function': return 'a function';
    case 'bigint': return 'a BigInt';
    case 'symbol': return 'a symbol';
    case 'undefined': return 'undefined';
    case 'number': return Number.isNaN(value) ? 'NaN' : 'a non-finite number';
    default: break;
  }
  const name = value?.constructor?.name;
  return name ? `a ${name} (not a plain object or array)` : 'not a plain object';
}

function isPlainObject(value) {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** Throws NotJsonError unless `value` is strictly JSON. `ancestors` detects cycles, not shared refs. */
function assertJson(value, path, depth, ancestors) {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new NotJsonError(path, describeNonJson(value));
    return;
  }
  if (typeof value !== 'object') throw new NotJsonError(path, describeNonJson(value));
  if (depth >= MAX_JSON_DEPTH) throw new NotJsonError(path, `nested deeper than ${MAX_JSON_DEPTH} levels`);
  if (ancestors.has(value)) throw new NotJsonError(path, 'a cycle back to one of its ancestors');
  const isArray = Array.isArray(value);
  if (!isArray && !isPlainObject(value)) throw new NotJsonError(path, describeNonJson(value));
  ancestors.add(value);
  if (isArray) {
    for (let i = 0; i < value.length; i += 1) assertJson(value[i], `${path}[${i}]`, depth + 1, ancestors);
  } else {
    for (const key of Object.keys(value)) assertJson(value[key], `${path}.${key}`, depth + 1, ancestors);
  }
  ancestors.delete(value);
}

/**
 * Serialize a strict JSON value.
 * @param {unknown} value
 * @param {string} path how the value is named in error messages, e.g. "result"
 * @returns {{text: string, bytes: number}} compact JSON and its UTF-8 length
 * @throws {NotJsonError}
 */
function toJsonText(value, path) {
  assertJson(value, path, 0, new Set());
  const text = JSON.stringify(value);
  return { text, bytes: Buffer.byteLength(text, 'utf8') };
}

module.exports = { toJsonText, NotJsonError, MAX_JSON_DEPTH };
