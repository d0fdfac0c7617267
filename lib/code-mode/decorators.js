'use strict';

// Decorators (`@name` before a class or a member) pass through type stripping
// unchanged (amaro's strip-only mode keeps them) and would reach the runner as
// a SyntaxError. They are found here, on the stripped program, so that the run
// is refused before any sandbox starts. A small scanner skips what can hold an
// `@` legitimately: strings, template literals, comments and regular
// expression literals (an email pattern such as /^[^@]+@/ is common).

/** After one of these (or at the start), `/` begins a regular expression, not a division. */
const REGEX_AFTER = new Set('(,=:[!&|?{};+-*%<>~^'.split(''));
const REGEX_AFTER_WORDS = /(?:^|[^\w$])(?:return|typeof|case|do|else|in|of|new|delete|void|throw|yield|await)$/;

/** Index just past the quoted string, template or regex starting at `i` (bounded by the source). */
function skipQuoted(code, i, quote) {
  let j = i + 1;
  let inClass = false;
  while (j < code.length) {
    const c = code[j];
    if (c === '\\') { j += 2; continue; }
    if (quote === '/') {
      if (c === '[') inClass = true;
      else if (c === ']') inClass = false;
      else if (c === '/' && !inClass) return j + 1;
      else if (c === '\n') return j;
    } else if (c === quote) {
      return j + 1;
    } else if (quote === '`' && c === '$' && code[j + 1] === '{') {
      // An expression inside a template: scan it as code up to its closing brace.
      j = skipCode(code, j + 2, '}');
      continue;
    }
    j += 1;
  }
  return j;
}

/** Scans code from `i` until `until` at depth 0 (or the end); returns the index past it, or -1-position of a decorator. */
function skipCode(code, i, until = null) {
  let depth = 0;
  let j = i;
  while (j < code.length) {
    const c = code[j];
    if (c === '/' && code[j + 1] === '/') { const end = code.indexOf('\n', j); j = end < 0 ? code.length : end; continue; }
    if (c === '/' && code[j + 1] === '*') { const end = code.indexOf('*/', j + 2); j = end < 0 ? code.length : end + 2; continue; }
    if (c === '"' || c === "'" || c === '`') { j = skipQuoted(code, j, c); continue; }
    if (c === '/') {
      const before = code.slice(Math.max(0, j - 12), j).trimEnd();
      const last = before[before.length - 1];
      if (last === undefined || REGEX_AFTER.has(last) || REGEX_AFTER_WORDS.test(before)) { j = skipQuoted(code, j, '/'); continue; }
    }
    if (c === '@' && /[A-Za-z_$]/.test(code[j + 1] ?? '')) throw Object.assign(new Error('decorator'), { at: j });
    if (c === '{') depth += 1;
    if (c === '}') {
      if (depth === 0 && until === '}') return j + 1;
      depth -= 1;
    }
    j += 1;
  }
  return j;
}

/**
 * The first decorator in a (type-stripped) program, or null.
 * @param {string} code
 * @returns {{line: number, text: string} | null}
 */
function findDecorator(code) {
  try {
    skipCode(code, 0);
    return null;
  } catch (error) {
    if (error.at === undefined) throw error;
    const line = code.slice(0, error.at).split('\n').length;
    const text = code.slice(error.at).split('\n')[0].trim().slice(0, 80);
    return { line, text };
  }
}

module.exports = { findDecorator };
