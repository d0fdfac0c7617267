'use strict';

// The strict plain-JSON snapshot taken of every policy and option object
// handed to spawnIsolated, local or remote (docs/policy.md). Pure: it never
// loads the native addon, so cordon/remote can use it.

const { CordonError } = require('./errors');

/** Nesting deeper than this is not a policy: refuse rather than recurse. */
const MAX_DEPTH = 32;

function isPlainObject(value) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * A JSON-safe deep copy of `value` taken from own, enumerable data
 * properties only: getters, symbols, inherited keys, class instances,
 * functions, undefined, non-finite numbers and sparse arrays are refused
 * with `code`, naming the path.
 */
function toPlainJson(value, where, code, depth = 0) {
  const fail = (why) => {
    throw new CordonError(code, `${where} ${why}`);
  };
  if (depth > MAX_DEPTH) fail(`is nested deeper than ${MAX_DEPTH} levels`);
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : fail('must be a finite number');
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype) fail('must be a plain array');
    const out = [];
    for (let i = 0; i < value.length; i += 1) {
      const desc = Object.getOwnPropertyDescriptor(value, i);
      if (desc === undefined || !('value' in desc)) fail(`[${i}] must be a plain data element`);
      out.push(toPlainJson(desc.value, `${where}[${i}]`, code, depth + 1));
    }
    return out;
  }
  if (!isPlainObject(value)) fail('must be a plain object (own data properties only)');
  const out = {};
  for (const key of Reflect.ownKeys(value)) {
    if (typeof key === 'symbol') fail('must not have symbol keys');
    const desc = Object.getOwnPropertyDescriptor(value, key);
    if (!('value' in desc)) fail(`.${key} must be a data property, not an accessor`);
    if (!desc.enumerable) fail(`.${key} must be enumerable`);
    // defineProperty, not assignment: an own "__proto__" key (JSON.parse
    // makes one) stays a key, so the strict native validation refuses it
    // instead of it silently becoming the copy's prototype and vanishing.
    Object.defineProperty(out, key, {
      value: toPlainJson(desc.value, `${where}.${key}`, code, depth + 1),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

module.exports = { toPlainJson, isPlainObject };
