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

/** A key's name with its `\uXXXX` escapes decoded (JSON's and JavaScript's spelling of the same key). */
function decodeUnicodeEscapes(name) {
  return name.includes('\\u') ? name.replace(/\\u([0-9a-fA-F]{4})/g, (_, hex) => String.fromCharCode(parseInt(hex, 16))) : name;
}

/** Authorization schemes: the word after one is the credential (`Bearer X`), the scheme itself is kept. */
const AUTH_SCHEMES = new Set(['bearer', 'basic', 'token', 'digest', 'negotiate', 'bot', 'apikey']);

/** URL userinfo without a colon this long or longer is a token (`https://TOKEN@host`), shorter a user name (`git@`). */
const MIN_TOKEN_USERINFO_CHARS = 16;
/**
 * Schemes whose whole userinfo is redacted, user name too: tokens are
 * written there as the user (`https://TOKEN@`, `https://TOKEN:x-oauth-basic@`)
 * as often as the password. Elsewhere (`postgres://ada:X@`, `ssh://git@`)
 * the user name is kept.
 */
const TOKEN_USERINFO_SCHEMES = new Set(['http', 'https', 'ftp', 'ftps', 'ws', 'wss']);
/** Where a URL's authority ends (its userinfo ends at the last `@` before this). */
const endsAuthority = (c) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d || c === 0x22 || c === 0x27 || c === 0x60
  || c === 0x2f || c === 0x3f || c === 0x23;

/**
 * The URL at `text[at]` (the `:` of `://`, after `scheme`): `range`, the
 * `[start, end)` of its userinfo's secret part or null, and `end`, where the
 * authority ends. The userinfo runs to the authority's last `@`
 * (`ada:p@TOKEN@h`: the password is `p@TOKEN`, as URL parsers read it);
 * over TOKEN_USERINFO_SCHEMES it is redacted whole, elsewhere what follows
 * its first `:` (or `%3A`), or all of it when it has no colon and is
 * token-long. Linear: one pass to the authority's end.
 */
function urlUserinfo(text, at, scheme) {
  const from = at + 3;
  let j = from;
  let colon = -1; // the index just before the password
  let last = -1; // the last `@`
  while (j < text.length) {
    const d = text.charCodeAt(j);
    if (d === 0x40) last = j;
    else if (endsAuthority(d)) break;
    else if (colon < 0 && d === 0x3a) colon = j;
    // `%3A`: a percent-encoded colon separates user and password too.
    else if (colon < 0 && d === 0x25 && text.charCodeAt(j + 1) === 0x33 && (text.charCodeAt(j + 2) | 0x20) === 0x61) colon = j + 2;
    j += 1;
  }
  let range = null;
  if (last > from && TOKEN_USERINFO_SCHEMES.has(scheme.toLowerCase())) range = [from, last];
  else if (last > 0 && colon >= 0 && colon + 1 < last) range = [colon + 1, last];
  else if (last > 0 && (colon < 0 || colon > last) && last - from >= MIN_TOKEN_USERINFO_CHARS) range = [from, last];
  return { range, end: j };
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

module.exports = { redactValue, isSecretKey, decodeUnicodeEscapes, urlUserinfo, AUTH_SCHEMES, REDACTED, SECRET_KEY_FRAGMENTS, MAX_REDACT_NODES };
