'use strict';

// A session's key: HMAC-SHA256 of the caller's scope under a secret only the
// server holds. Scopes are the caller's words (tenant, space, conversation);
// knowing one conversation id, or every id, reveals no other session's key,
// and the key names the session's workspace on disk without naming the scope.

const crypto = require('node:crypto');
const { CordonError } = require('../errors');

/** Shortest accepted secret: 256 bits, the HMAC's own strength. */
const MIN_SECRET_BYTES = 32;
/** The parts of a scope, in the order they are hashed. */
const SCOPE_KEYS = Object.freeze(['tenant', 'space', 'conversation']);
/** Longest scope part (UTF-8 bytes): an id, not a document. */
const MAX_SCOPE_PART_BYTES = 256;

function invalid(message) {
  return new CordonError('ERR_CORDON_INVALID_OPTIONS', message);
}

/** The secret as a Buffer of at least MIN_SECRET_BYTES, or a coded error. */
function checkSecret(secret) {
  const bytes = typeof secret === 'string' ? Buffer.from(secret, 'utf8') : secret;
  if (!Buffer.isBuffer(bytes) || bytes.length < MIN_SECRET_BYTES) {
    throw invalid(`sessions: secret must be a Buffer or string of at least ${MIN_SECRET_BYTES} bytes (e.g. crypto.randomBytes(32), kept by the server)`);
  }
  return Buffer.from(bytes);
}

/**
 * A frozen copy of `{tenant, conversation, space?}` (non-empty strings, no
 * other keys), or ERR_CORDON_INVALID_OPTIONS.
 */
function checkScope(scope) {
  if (scope === null || typeof scope !== 'object' || Array.isArray(scope)) throw invalid('scope must be an object {tenant, space?, conversation}');
  for (const key of Object.keys(scope)) {
    if (!SCOPE_KEYS.includes(key)) throw invalid(`unknown scope key "${key}"; known: ${SCOPE_KEYS.join(', ')}`);
  }
  const out = {};
  for (const key of SCOPE_KEYS) {
    const value = scope[key];
    if (value === undefined && key === 'space') continue;
    if (typeof value !== 'string' || value.length === 0 || Buffer.byteLength(value, 'utf8') > MAX_SCOPE_PART_BYTES) {
      throw invalid(`scope.${key} must be a non-empty string of at most ${MAX_SCOPE_PART_BYTES} bytes`);
    }
    out[key] = value;
  }
  return Object.freeze(out);
}

/** The hex HMAC of the scope; parts are length-prefixed so no two scopes hash alike. */
function sessionKey(secret, scope) {
  const hmac = crypto.createHmac('sha256', secret);
  for (const key of SCOPE_KEYS) {
    const value = Buffer.from(scope[key] ?? '', 'utf8');
    const length = Buffer.alloc(4);
    length.writeUInt32BE(scope[key] === undefined ? 0xffffffff : value.length);
    hmac.update(length).update(value);
  }
  return hmac.digest('hex');
}

module.exports = { checkSecret, checkScope, sessionKey, MIN_SECRET_BYTES };
