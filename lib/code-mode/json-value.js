'use strict';

// Strict JSON values. What a tool returns crosses into untrusted code, so it
// must be exactly JSON: JSON.stringify would silently turn NaN into null, drop
// functions, call toJSON, flatten a Map into {} and loop on a cycle. Every one
// of those is refused here with the path that caused it. `undefined` is the
// exception, because every JSON API treats it one way and handlers lean on it
// (`{id, note: row.note}` with no note): it is what JSON.stringify makes of it
// — an object field left out, an array element null. The
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

/** The path of a walk entry, built only when something is reported (a string per value costs more than the check). */
function pathOf(entry) {
  const parts = [];
  for (let at = entry; at.parent !== null; at = at.parent) parts.push(typeof at.key === 'number' ? `[${at.key}]` : `.${at.key}`);
  return entry.root + parts.reverse().join('');
}

/** Why a scalar is not JSON, or null (`undefined` is fine: JSON.stringify drops it or writes null). */
function scalarProblem(value) {
  if (value === null || value === undefined || typeof value === 'string' || typeof value === 'boolean') return null;
  if (typeof value === 'number') return Number.isFinite(value) ? null : describeNonJson(value);
  return typeof value === 'object' ? undefined : describeNonJson(value); // undefined: a container, walk it
}

/**
 * A cycle shows up as nesting past MAX_JSON_DEPTH (depth-first, the walk goes round it at once):
 * the shallowest value on the too-deep path that repeats one of its ancestors is where it closes.
 * Only called on that error, so its quadratic scan is over at most MAX_JSON_DEPTH entries.
 */
function cycleAt(entry) {
  const chain = [];
  for (let at = entry; at !== null; at = at.parent) chain.push(at);
  chain.reverse();
  for (let i = 1; i < chain.length; i += 1) {
    for (let j = 0; j < i; j += 1) if (chain[j].value === chain[i].value) return chain[i];
  }
  return null;
}

/**
 * True when `root` is strictly JSON. The common case, so it allocates nothing per value: two
 * parallel stacks of containers and depths, scalars checked in place. Shared references are fine;
 * a cycle fails the depth bound.
 */
function isStrictJson(root) {
  if (scalarProblem(root) === null) return true;
  const containers = [root];
  const depths = [0];
  while (containers.length > 0) {
    const value = containers.pop();
    const depth = depths.pop();
    if (depth >= MAX_JSON_DEPTH) return false;
    const isArray = Array.isArray(value);
    if (!isArray && !isPlainObject(value)) return false;
    const keys = isArray ? null : Object.keys(value);
    const length = isArray ? value.length : keys.length;
    for (let i = 0; i < length; i += 1) {
      const child = isArray ? value[i] : value[keys[i]];
      const problem = scalarProblem(child);
      if (problem === null) continue;
      if (problem !== undefined) return false;
      containers.push(child);
      depths.push(depth + 1);
    }
  }
  return true;
}

/**
 * Throws NotJsonError naming the first offending value, in document order. Only run once
 * isStrictJson said no: it builds an entry per container to report the path.
 */
function assertJson(root, rootPath) {
  const stack = [{ value: root, parent: null, key: null, depth: 0, root: rootPath }];
  while (stack.length > 0) {
    const entry = stack.pop();
    const { value, depth } = entry;
    const problem = scalarProblem(value);
    if (problem === null) continue;
    if (problem !== undefined) throw new NotJsonError(pathOf(entry), problem);
    if (depth >= MAX_JSON_DEPTH) {
      const cycle = cycleAt(entry);
      if (cycle) throw new NotJsonError(pathOf(cycle), 'a cycle back to one of its ancestors');
      throw new NotJsonError(pathOf(entry), `nested deeper than ${MAX_JSON_DEPTH} levels`);
    }
    const isArray = Array.isArray(value);
    if (!isArray && !isPlainObject(value)) throw new NotJsonError(pathOf(entry), describeNonJson(value));
    const keys = isArray ? null : Object.keys(value);
    const length = isArray ? value.length : keys.length;
    // Children in reverse, so the first offending value in document order is the one reported.
    for (let i = length - 1; i >= 0; i -= 1) {
      const key = isArray ? i : keys[i];
      const child = value[key];
      if (scalarProblem(child) === null) continue;
      stack.push({ value: child, parent: entry, key, depth: depth + 1, root: rootPath });
    }
  }
}

/**
 * `JSON.stringify` spells a lone UTF-16 surrogate as an escape (`\ud800`):
 * valid for JavaScript, but not JSON text any UTF-8 reader accepts — the
 * runner's frame reader refused the whole tool.result frame, ending the run as
 * `internal`. The escape in the text is the cheap sign; a backslash before it
 * can make a false one (`"\\ud800"` is a backslash and "ud800"), so the
 * values are then walked for the string or key that really holds one.
 */
const LONE_SURROGATE_SIGN = /\\ud[89a-f]/i;

/** Throws NotJsonError at the first string or key (document order) that is not well-formed UTF-16. */
function assertWellFormed(root, rootPath) {
  const stack = [{ value: root, parent: null, key: null, root: rootPath }];
  const lone = (text) => `a string holding a lone UTF-16 surrogate (at index ${[...text].findIndex((c) => !c.isWellFormed())})`;
  while (stack.length > 0) {
    const entry = stack.pop();
    const { value } = entry;
    if (typeof value === 'string') {
      if (!value.isWellFormed()) throw new NotJsonError(pathOf(entry), lone(value));
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    const isArray = Array.isArray(value);
    const keys = isArray ? null : Object.keys(value);
    const length = isArray ? value.length : keys.length;
    for (let i = length - 1; i >= 0; i -= 1) {
      const key = isArray ? i : keys[i];
      if (!isArray && !key.isWellFormed()) throw new NotJsonError(`${pathOf(entry)} key ${JSON.stringify(key)}`, lone(key));
      stack.push({ value: value[key], parent: entry, key, root: rootPath });
    }
  }
}

/**
 * Serialize a strict JSON value.
 * @param {unknown} value
 * @param {string} path how the value is named in error messages, e.g. "result"
 * @returns {{text: string, bytes: number}} compact JSON and its UTF-8 length
 * @throws {NotJsonError}
 */
function toJsonText(value, path) {
  if (!isStrictJson(value)) {
    assertJson(value, path);
    throw new NotJsonError(path, 'not strict JSON'); // unreachable unless the two walks disagree
  }
  const text = JSON.stringify(value);
  if (LONE_SURROGATE_SIGN.test(text)) assertWellFormed(value, path);
  return { text, bytes: Buffer.byteLength(text, 'utf8') };
}

module.exports = { toJsonText, NotJsonError, MAX_JSON_DEPTH };
