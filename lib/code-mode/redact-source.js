'use strict';

// Best-effort secret redaction of model-written source for the audit record.
// It is hygiene, not a boundary: the sandbox is the boundary. It is a single
// left-to-right scan with no regular expressions, so its cost is linear in
// the input whatever the input is (a regex with nested quantifiers over a
// hostile 1 MiB string is how audit logging becomes a denial of service).
//
// Two rules:
// 1. A value assigned to a secret-looking key (`password: "…"`, `apiKey = …`,
//    `headers['Authorization'] = …`, `X-Api-Key: …`, a string key's pair
//    `h.set('Authorization', …)`, `['password', …]`) becomes [REDACTED]: a
//    quoted value up to its quote, an unquoted one up to whitespace, a quote,
//    `&` or a separator (after a scheme word, `Bearer X`, the word after
//    it); a URL's userinfo too. The content of a string literal is scanned
//    by this rule as well (a JSON body, a query string, `PASSWORD=X`).
// 2. Inside string literals, token-looking runs (≥ 20 characters of
//    [A-Za-z0-9_+=-] with both a letter and a digit: API keys, JWT parts,
//    bearer tokens) become [REDACTED]; outside strings the bar is 32.

const { isSecretKey, decodeUnicodeEscapes, urlUserinfo, AUTH_SCHEMES, REDACTED } = require('./redact');

const MIN_TOKEN_IN_STRING = 20;
const MIN_TOKEN_IN_CODE = 32;
/** Quoted text longer than this is data, not a key name; it never arms rule 1. */
const MAX_KEY_CHARS = 64;
/** Values that are never a secret: JSON's and JavaScript's literals. */
const LITERALS = new Set(['true', 'false', 'null', 'undefined']);
/** The longest auth scheme word (`negotiate`): a longer first word is part of the secret. */
const MAX_SCHEME_CHARS = 16;
/** String literals inside string literals scanned as code (three quote kinds: deeper cannot be written unescaped). */
const MAX_STRING_DEPTH = 3;

const isDigit = (c) => c >= 0x30 && c <= 0x39;
const isLetter = (c) => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
const isWordChar = (c) => isDigit(c) || isLetter(c) || c === 0x5f || c === 0x24; // _ $
const isTokenChar = (c) => isDigit(c) || isLetter(c) || c === 0x5f || c === 0x2d || c === 0x2b || c === 0x3d; // _ - + =
const isSpace = (c) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
/**
 * Where an unquoted secret value ends: whitespace, a quote, `&` (the next
 * query parameter) and the separators of shell and code. Anything else,
 * `/` `+` `=` of base64 included, is part of the value (round 5, R5-5: an
 * AWS secret key was kept after its first `/`).
 */
const endsValue = (c) => isSpace(c) || c === 0x22 || c === 0x27 || c === 0x60 || c === 0x26
  || c === 0x3b || c === 0x2c || c === 0x28 || c === 0x29 || c === 0x7d || c === 0x5d || c === 0x7c || c === 0x3c || c === 0x3e;
/** A character that may open an unquoted value (not a bracket: `{…}` and `[…]` are structure). */
const opensValue = (c) => !endsValue(c) && c !== 0x7b && c !== 0x5b;

/** Is text[start, end) token-like: long enough and mixing letters with digits? */
function looksLikeToken(text, start, end, minLength) {
  if (end - start < minLength) return false;
  let letter = false;
  let digit = false;
  for (let i = start; i < end && !(letter && digit); i += 1) {
    const c = text.charCodeAt(i);
    letter = letter || isLetter(c);
    digit = digit || isDigit(c);
  }
  return letter && digit;
}

/**
 * Output as untouched slices of the input plus replacements: copying is by
 * slice, never per character, so the constant factor stays small.
 */
class Splicer {
  constructor(text) {
    this.text = text;
    this.parts = [];
    this.copiedTo = 0;
    this.emitted = 0; // UTF-16 units in `parts`
  }

  replace(start, end, replacement) {
    this.parts.push(this.text.slice(this.copiedTo, start), replacement);
    this.emitted += start - this.copiedTo + replacement.length;
    this.copiedTo = end;
  }

  /** Length of the output for the input up to `index` (everything before it is final). */
  lengthAt(index) {
    return this.emitted + (index - this.copiedTo);
  }

  /** The output for text[0, end). */
  result(end = this.text.length) {
    if (this.copiedTo === 0 && end === this.text.length) return this.text;
    this.parts.push(this.text.slice(this.copiedTo, end));
    return this.parts.join('');
  }
}

/** Rule 2 over code[start, end), the content of a string literal. */
function redactTokensInString(out, code, start, end) {
  let i = start;
  while (i < end) {
    if (!isTokenChar(code.charCodeAt(i))) {
      i += 1;
      continue;
    }
    let j = i;
    while (j < end && isTokenChar(code.charCodeAt(j))) j += 1;
    if (looksLikeToken(code, i, j, MIN_TOKEN_IN_STRING)) out.replace(i, j, REDACTED);
    i = j;
  }
}

/** End of the string literal opened at `start` (exclusive of the closing quote), and whether it closed. */
function scanString(code, start) {
  const quote = code.charCodeAt(start);
  let j = start + 1;
  while (j < code.length) {
    const c = code.charCodeAt(j);
    if (c === 0x5c) j += 2; // backslash escapes the next character
    else if (c === quote) return { end: j, closed: true };
    else if (c === 0x0a && quote !== 0x60) return { end: j, closed: false }; // '…' and "…" end at a newline
    else j += 1;
  }
  return { end: code.length, closed: false };
}

/**
 * Redact secrets from source code in one linear pass.
 *
 * With `maxOutputChars`, the scan stops at the first token boundary where the
 * output already holds more than that many UTF-16 units: a caller that keeps
 * only a prefix (the audit record) pays for that prefix, not for the whole
 * input. Stopping only at a boundary keeps the prefix exactly what a full
 * scan would produce: each token's fate is decided by what precedes it and by
 * the whole token itself, never by what follows.
 * @param {string} code
 * @param {{maxOutputChars?: number}} [options]
 * @returns {string}
 */
function redactSource(code, { maxOutputChars = Infinity } = {}) {
  return scan(code, maxOutputChars, 0);
}

/**
 * A string literal's content: rule 1 over it as over code (a JSON body, a
 * query string, `PASSWORD=X` in a template, a URL's userinfo: round 13,
 * R13-2), then rule 2. A literal holds no unescaped quote of its own kind,
 * so the nesting is at most the three quote kinds deep.
 */
/** The length of a leading `Bearer ` (an auth scheme and its blank) in a quoted secret value, kept; else 0. */
function schemeLength(content) {
  const blank = content.slice(0, MAX_SCHEME_CHARS + 1).indexOf(' ');
  return blank > 0 && blank + 1 < content.length && AUTH_SCHEMES.has(content.slice(0, blank).toLowerCase()) ? blank + 1 : 0;
}

function redactString(content, depth) {
  const keyed = depth < MAX_STRING_DEPTH ? scan(content, Infinity, depth + 1) : content;
  const out = new Splicer(keyed);
  redactTokensInString(out, keyed, 0, keyed.length);
  return out.result();
}

function scan(code, maxOutputChars, depth) {
  const out = new Splicer(code);
  let keyIsSecret = false; // the last key-like token named a secret
  let valueIsSecret = false; // …and was followed by `:` or `=`: the next value is redacted
  let pairIsSecret = false; // the last token was a string naming a secret: after `,` its value follows (`h.set('Authorization', X)`)
  let wordFrom = -1; // the last word run, from its hyphenated start (`X-Api-Key` is one name)
  let wordEnd = -1;
  let i = 0;
  while (i < code.length) {
    if (out.lengthAt(i) > maxOutputChars) return out.result(i);
    const c = code.charCodeAt(i);
    if (isSpace(c)) {
      i += 1;
    } else if (c === 0x22 || c === 0x27 || c === 0x60) { // " ' `
      const { end, closed } = scanString(code, i);
      const content = code.slice(i + 1, end);
      if (valueIsSecret) out.replace(i + 1 + schemeLength(content), end, REDACTED);
      else {
        const redacted = redactString(content, depth);
        if (redacted !== content) out.replace(i + 1, end, redacted);
      }
      keyIsSecret = !valueIsSecret && end - i - 1 <= MAX_KEY_CHARS && isSecretKey(decodeUnicodeEscapes(content));
      pairIsSecret = keyIsSecret;
      valueIsSecret = false;
      i = closed ? end + 1 : end;
    } else if (valueIsSecret && opensValue(c)) {
      let j = i;
      while (j < code.length && !endsValue(code.charCodeAt(j))) j += 1;
      // `Authorization: Bearer X`: the scheme is kept, the word after it is the secret
      // (round 13, R13-2: the scheme was redacted and the token kept).
      if (code.charCodeAt(j) === 0x20 && (opensValue(code.charCodeAt(j + 1)) || code.startsWith(REDACTED, j + 1)) && AUTH_SCHEMES.has(code.slice(i, j).toLowerCase())) {
        i = j + 1;
        continue;
      }
      // `"passwordless": true` names no secret value: the literals are kept.
      if (!LITERALS.has(code.slice(i, j))) out.replace(i, j, REDACTED);
      keyIsSecret = false;
      valueIsSecret = false;
      pairIsSecret = false;
      i = j;
    } else if (isWordChar(c)) {
      let j = i;
      while (j < code.length && isWordChar(code.charCodeAt(j))) j += 1;
      const from = i > 0 && code.charCodeAt(i - 1) === 0x2d && wordEnd === i - 1 ? wordFrom : i;
      if (valueIsSecret || looksLikeToken(code, i, j, MIN_TOKEN_IN_CODE)) out.replace(i, j, REDACTED);
      keyIsSecret = !valueIsSecret && j - from <= MAX_KEY_CHARS && isSecretKey(code.slice(from, j));
      [wordFrom, wordEnd] = [from, j];
      valueIsSecret = false;
      pairIsSecret = false;
      i = j;
    } else if (c === 0x3a && code.charCodeAt(i + 1) === 0x2f && code.charCodeAt(i + 2) === 0x2f) { // "://"
      // A URL's userinfo (round 13, R13-2), as the session audit reads it.
      const scheme = wordEnd === i ? code.slice(wordFrom, i) : '';
      const { range, end } = urlUserinfo(code, i, scheme);
      if (range !== null) out.replace(range[0], range[1], REDACTED);
      keyIsSecret = false;
      valueIsSecret = false;
      pairIsSecret = false;
      i = range === null ? i + 3 : end;
    } else {
      const next = code.charCodeAt(i + 1);
      const assigns = c === 0x3a || (c === 0x3d && next !== 0x3d && next !== 0x3e); // ":" or "=" but not "==" / "=>"
      const closesKey = c === 0x5d || c === 0x29; // `]` in headers['Authorization'] = …
      // `password: ('X')`: an opening parenthesis keeps the value to come secret.
      valueIsSecret = (assigns && keyIsSecret) || (c === 0x2c && pairIsSecret) || (c === 0x28 && valueIsSecret);
      keyIsSecret = closesKey && keyIsSecret;
      pairIsSecret = false;
      i += 1;
    }
  }
  return out.result();
}

/**
 * Cut a string to at most `maxBytes` UTF-8 bytes without splitting a character.
 * @returns {{text: string, truncated: boolean}}
 */
function truncateUtf8(text, maxBytes) {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return { text, truncated: false };
  let end = maxBytes;
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end -= 1; // back off continuation bytes
  return { text: bytes.subarray(0, end).toString('utf8'), truncated: true };
}

module.exports = { redactSource, truncateUtf8 };
