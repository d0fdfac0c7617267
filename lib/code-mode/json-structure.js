'use strict';

// Structure checks that JSON.parse does not make, run over a runner line that
// JSON.parse has already accepted:
// - duplicate object keys: code-bridge-v1 §1 rejects them, but JSON.parse keeps
//   the last one silently, so `{"ok":false,…,"ok":true}` would read as whichever
//   copy the parser kept — the runner refuses such frames, and so does the host;
// - nesting depth: JSON.parse is iterative, but JSON.stringify (the result
//   re-check), ajv and a provider's handler recurse, so a 500 000-deep array
//   from a broken runner would overflow the host's stack outside any try.
// One left-to-right pass: strings are skipped with indexOf, each open object
// holds a Set of its keys until it closes. Time and memory are linear in the line.

/**
 * Deepest nesting accepted in a runner frame. The real runner decodes with
 * serde_json (at most 127 nested levels), so its frames stay far below this.
 */
const MAX_FRAME_DEPTH = 256;
/** A duplicate key is quoted in the error message up to this many characters. */
const MAX_QUOTED_KEY_CHARS = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const isJsonSpace = (c) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;

/** Index of the quote closing the string opened at `start`, or -1 (not valid JSON after all). */
function stringEnd(text, start) {
  let end = text.indexOf('"', start + 1);
  while (end !== -1) {
    // A quote preceded by an odd run of backslashes is escaped. Each run is
    // counted once: it ends at the quote it precedes.
    let backslashes = 0;
    while (text.charCodeAt(end - 1 - backslashes) === BACKSLASH) backslashes += 1;
    if (backslashes % 2 === 0) return end;
    end = text.indexOf('"', end + 1);
  }
  return -1;
}

/** The index of the first non-whitespace character at or after `from`. */
function skipSpace(text, from) {
  let i = from;
  while (i < text.length && isJsonSpace(text.charCodeAt(i))) i += 1;
  return i;
}

/** The key as JSON.parse decoded it, so `"a"` and `"\u0061"` are the same key. */
function decodeKey(text, start, end) {
  const raw = text.slice(start + 1, end);
  return raw.includes('\\') ? JSON.parse(text.slice(start, end + 1)) : raw;
}

/**
 * Why a parsed JSON text breaks the frame rules, or null.
 * @param {string} text a line JSON.parse accepted
 * @param {number} [maxDepth]
 * @returns {string | null}
 */
function findStructureProblem(text, maxDepth = MAX_FRAME_DEPTH) {
  const open = []; // per open container: a Set of keys for an object, null for an array
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = stringEnd(text, i);
      if (end === -1) return 'runner frame has an unterminated string';
      const next = skipSpace(text, end + 1);
      if (text.charCodeAt(next) === 0x3a) { // ':' — this string is a key of the innermost object
        const keys = open[open.length - 1];
        const key = decodeKey(text, i, end);
        if (keys.has(key)) return `runner frame has a duplicate key ${JSON.stringify(key.slice(0, MAX_QUOTED_KEY_CHARS))}`;
        keys.add(key);
      }
      i = next;
    } else if (c === 0x7b || c === 0x5b) { // { [
      if (open.length >= maxDepth) return `runner frame is nested deeper than ${maxDepth} levels`;
      open.push(c === 0x7b ? new Set() : null);
      i += 1;
    } else {
      if (c === 0x7d || c === 0x5d) open.pop(); // } ]
      i += 1;
    }
  }
  return null;
}

module.exports = { findStructureProblem, MAX_FRAME_DEPTH };
