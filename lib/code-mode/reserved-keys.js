'use strict';

// Own `__proto__`, `constructor` and `prototype` keys in tool arguments.
// JSON.parse makes them ordinary own properties, but a handler that does
// `Object.assign(defaults, args)`, `{...defaults, ...args}` into a class
// instance, or a hand-written deep merge turns `{"__proto__": {...}}` into a
// prototype swap or pollution. A tool's arguments may carry one of these keys,
// at any depth, only when its inputSchema names that key (validation.js).
// The walk is iterative (the value can be as deep as the frame allows) and
// linear in the value.

const RESERVED_KEYS = Object.freeze(['__proto__', 'constructor', 'prototype']);
const RESERVED = new Set(RESERVED_KEYS);

/**
 * The JSON Pointer of the first reserved own key that `allowed` does not name, or null.
 * @param {unknown} value parsed JSON
 * @param {ReadonlySet<string>} allowed keys the schema names
 * @returns {string | null}
 */
function findReservedKey(value, allowed) {
  // Entries are {node, parent, key}; the pointer is built only for the key reported.
  const stack = [{ node: value, parent: null, key: '' }];
  while (stack.length > 0) {
    const entry = stack.pop();
    const { node } = entry;
    if (node === null || typeof node !== 'object') continue;
    const keys = Array.isArray(node) ? null : Object.keys(node);
    if (keys === null) {
      for (let i = node.length - 1; i >= 0; i -= 1) stack.push({ node: node[i], parent: entry, key: String(i) });
      continue;
    }
    for (let i = keys.length - 1; i >= 0; i -= 1) {
      const key = keys[i];
      if (RESERVED.has(key) && !allowed.has(key)) return pointer({ parent: entry, key });
      stack.push({ node: node[key], parent: entry, key });
    }
  }
  return null;
}

function pointer(entry) {
  const parts = [];
  for (let at = entry; at.parent !== null; at = at.parent) parts.push(at.key.replace(/~/g, '~0').replace(/\//g, '~1'));
  return `/${parts.reverse().join('/')}`;
}

module.exports = { findReservedKey, RESERVED_KEYS };
