'use strict';

// Redaction of tool arguments and results for events. Events go to logs and
// dashboards, which must never learn a secret or the content of a document:
// values under secret-looking keys become "[REDACTED]" whatever their type,
// and every other string becomes its size. Numbers, booleans, null and the
// shape (keys, array lengths) stay, because that is what debugging needs.
// Output is bounded in depth, breadth and total size, and the walk is linear
// in the input.

const REDACTED = '[REDACTED]';
/** Key fragments, compared after lower-casing and removing everything but a–z and 0–9. */
const SECRET_KEY_FRAGMENTS = Object.freeze([
  'token', 'secret', 'password', 'passwd', 'apikey', 'authorization', 'cookie', 'credential', 'privatekey',
]);
/** Redacted output keeps this many levels; deeper values become a marker. */
const MAX_REDACT_DEPTH = 16;
/** Arrays and objects keep this many entries; the rest are counted, not copied. */
const MAX_REDACT_ENTRIES = 64;
/**
 * Values copied per redacted value; past it, arrays and objects become markers.
 * Depth × breadth alone is no bound (64³ numbers fit in a 512 KiB tool.call and
 * made a 2 MiB copy per event, kept in result.events and sent to every log).
 */
const MAX_REDACT_NODES = 1024;
/** Longer keys are secrets or data in disguise; they are cut to this many characters. */
const MAX_KEY_CHARS = 128;

/** Lower-case a key and keep only [a-z0-9]: "X-Api-Key", "api_key" and "apiKey" all become "apikey". */
function normalizeKey(key) {
  // A negated character class cannot backtrack: one linear native pass.
  return key.toLowerCase().replace(/[^a-z0-9]+/g, '');
}

/** True when a key names something secret (token, password, api_key, cookie, …). */
function isSecretKey(key) {
  const normalized = normalizeKey(String(key));
  return SECRET_KEY_FRAGMENTS.some((fragment) => normalized.includes(fragment));
}

function stringMarker(value) {
  return { type: 'string', utf8Bytes: Buffer.byteLength(value, 'utf8') };
}

function redactArray(value, depth, budget) {
  const out = value.slice(0, MAX_REDACT_ENTRIES).map((item) => redactAt(item, depth + 1, budget));
  if (value.length > MAX_REDACT_ENTRIES) out.push({ type: 'omitted', entries: value.length - MAX_REDACT_ENTRIES });
  return out;
}

function redactObject(value, depth, budget) {
  const out = {};
  const keys = Object.keys(value);
  for (const key of keys.slice(0, MAX_REDACT_ENTRIES)) {
    const shownKey = key.length > MAX_KEY_CHARS ? `${key.slice(0, MAX_KEY_CHARS)}…` : key;
    // defineProperty, not assignment: an own "__proto__" key (JSON.parse makes one) must stay a key,
    // not become the redacted copy's prototype and vanish from the event.
    Object.defineProperty(out, shownKey, {
      value: isSecretKey(key) ? REDACTED : redactAt(value[key], depth + 1, budget), enumerable: true, writable: true, configurable: true,
    });
  }
  if (keys.length > MAX_REDACT_ENTRIES) out['…'] = { type: 'omitted', entries: keys.length - MAX_REDACT_ENTRIES };
  return out;
}

/** `budget.nodes` counts down per value copied; once spent, containers are not entered. */
function redactAt(value, depth, budget) {
  budget.nodes -= 1;
  if (typeof value === 'string') return stringMarker(value);
  if (value === null || typeof value === 'number' || typeof value === 'boolean') return value;
  if (typeof value !== 'object') return { type: typeof value };
  if (depth >= MAX_REDACT_DEPTH || budget.nodes <= 0) return { type: Array.isArray(value) ? 'array' : 'object', truncated: true };
  return Array.isArray(value) ? redactArray(value, depth, budget) : redactObject(value, depth, budget);
}

/**
 * A redacted copy of a JSON value, safe to log.
 * @param {unknown} value
 */
function redactValue(value) {
  return redactAt(value, 0, { nodes: MAX_REDACT_NODES });
}

module.exports = { redactValue, isSecretKey, REDACTED, SECRET_KEY_FRAGMENTS, MAX_REDACT_NODES };
