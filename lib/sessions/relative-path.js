'use strict';

// Paths callers name inside a session workspace: relative, '/'-separated,
// no '..', no '.' segments past the first, no empty segments, no NUL,
// no lone UTF-16 surrogate.
// Refused with ERR_CORDON_SESSION_PATH_REFUSED before anything is touched.

const { CordonError } = require('../errors');

/** Longest accepted path (bytes) and segment count: PATH_MAX and a depth no one needs. */
const MAX_PATH_BYTES = 4096;
const MAX_SEGMENTS = 256;

function refused(label, value, why) {
  return new CordonError('ERR_CORDON_SESSION_PATH_REFUSED', `${label} ${JSON.stringify(String(value).slice(0, 200))} is refused: ${why}`);
}

/** The path's segments joined by '/', or a coded refusal. '' names the workspace itself. */
function checkRelativePath(value, label = 'path') {
  if (typeof value !== 'string') throw refused(label, value, 'not a string');
  if (value.includes('\0')) throw refused(label, value, 'contains NUL');
  // A lone UTF-16 surrogate (JSON.parse gives one for "\ud800") has no
  // UTF-8 form: encoded, it names the file called U+FFFD, another path than
  // the one allow() and the audit record saw (round 11, R11-7).
  if (!value.isWellFormed()) throw refused(label, value, 'not well-formed UTF-16 (a lone surrogate)');
  if (Buffer.byteLength(value, 'utf8') > MAX_PATH_BYTES) throw refused(label, value, `longer than ${MAX_PATH_BYTES} bytes`);
  if (value.startsWith('/')) throw refused(label, value, 'absolute paths are refused; name a path relative to the workspace');
  const segments = value.split('/').filter((s, i) => !(s === '.' && i === 0) && s !== '');
  if (segments.length > MAX_SEGMENTS) throw refused(label, value, `more than ${MAX_SEGMENTS} segments`);
  for (const segment of segments) {
    if (segment === '..') throw refused(label, value, "'..' is refused");
    if (segment === '.') throw refused(label, value, "'.' segments are refused");
  }
  return segments.join('/');
}

module.exports = { checkRelativePath, MAX_PATH_BYTES };
