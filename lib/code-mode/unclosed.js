'use strict';

// The brackets a program leaves open at its end, for the model's error
// message. cordon-runner compiles the program inside a wrapper function, so
// a program that stops before a `}` or `)` is closed makes QuickJS complain
// about the wrapper's own closing line ("Unexpected token '}'" at a line the
// model never wrote); model-errors.js says "unexpected end of program" and
// names what is still open, from this scan.
//
// A lexical scan, not a parse: strings, template literals (with `${}`
// nesting), comments and regular expression literals (guessed from the
// preceding token, as tokenizers do) are skipped. Bounded: one pass over the
// source, a stack no deeper than its brackets.

const OPENERS = { '(': ')', '[': ']', '{': '}' };
const CLOSERS = new Set([')', ']', '}']);
/** After these (or at the start), a `/` starts a regular expression, not a division. */
const BEFORE_REGEX = new Set(['', '(', ',', '=', ':', '[', '!', '&', '|', '?', '{', '}', ';', '+', '-', '*', '%', '<', '>', '~', '^']);

/** Index just past the quoted string starting at `i` (quote `q`), or the end. */
function skipString(code, i, q) {
  for (let j = i + 1; j < code.length; j += 1) {
    if (code[j] === '\\') j += 1;
    else if (code[j] === q || code[j] === '\n') return j + 1;
  }
  return code.length;
}

/** Index just past the regular expression literal starting at `i`, or the end of its line. */
function skipRegex(code, i) {
  let inClass = false;
  for (let j = i + 1; j < code.length; j += 1) {
    const c = code[j];
    if (c === '\\') j += 1;
    else if (c === '\n') return j;
    else if (c === '[') inClass = true;
    else if (c === ']') inClass = false;
    else if (c === '/' && !inClass) return j + 1;
  }
  return code.length;
}

/** 1-based line and column of index `i`. */
function position(code, i) {
  const before = code.slice(0, i);
  const line = before.split('\n').length;
  return { line, column: i - before.lastIndexOf('\n') };
}

/**
 * What is still open at the end of `code`: brackets (innermost last), an
 * unterminated template literal or block comment.
 * @param {string} code
 * @returns {Array<{what: string, line: number, column: number}>}
 */
function unclosedAtEnd(code) {
  const stack = []; // {char, at}; a template literal is {char: '`'}
  let previous = '';
  let i = 0;
  while (i < code.length) {
    const top = stack[stack.length - 1];
    const c = code[i];
    if (top?.char === '`') {
      if (c === '\\') i += 2;
      else if (c === '`') { stack.pop(); previous = 'x'; i += 1; }
      else if (c === '$' && code[i + 1] === '{') { stack.push({ char: '${', at: i }); previous = '{'; i += 2; }
      else i += 1;
      continue;
    }
    if (/\s/.test(c)) { i += 1; continue; }
    if (c === '/' && code[i + 1] === '/') { const end = code.indexOf('\n', i); i = end < 0 ? code.length : end; continue; }
    if (c === '/' && code[i + 1] === '*') {
      const end = code.indexOf('*/', i + 2);
      if (end < 0) return [...stack.map(describe(code)), { what: 'a /* comment', ...position(code, i) }];
      i = end + 2;
      continue;
    }
    if (c === '"' || c === "'") { i = skipString(code, i, c); previous = 'x'; continue; }
    if (c === '/' && BEFORE_REGEX.has(previous)) { i = skipRegex(code, i); previous = 'x'; continue; }
    if (c === '`') { stack.push({ char: '`', at: i }); i += 1; continue; }
    if (OPENERS[c]) stack.push({ char: c, at: i });
    else if (CLOSERS.has(c) && stack.length > 0) stack.pop(); // `}` also ends a `${`
    previous = tokenClass(code, i);
    i += 1;
  }
  return stack.map(describe(code));
}

/** Keywords after which a `/` starts a regular expression. */
const REGEX_KEYWORDS = new Set(['return', 'typeof', 'case', 'do', 'else', 'in', 'of', 'new', 'delete', 'void', 'throw', 'yield', 'await']);

/** The character at `i` as the token before a `/`: a word character is 'x' (division), unless it ends such a keyword (''). */
function tokenClass(code, i) {
  if (!/[\w$]/.test(code[i])) return code[i];
  return REGEX_KEYWORDS.has(wordBefore(code, i + 1)) ? '' : 'x';
}

/** The identifier or keyword ending at index `end` (exclusive). */
function wordBefore(code, end) {
  let start = end;
  while (start > 0 && /[\w$]/.test(code[start - 1])) start -= 1;
  return code.slice(start, end);
}

function describe(code) {
  return ({ char, at }) => {
    const what = char === '`' ? 'a template literal (`)' : char === '${' ? 'a template `${`' : `\`${char}\``;
    return { what, ...position(code, at) };
  };
}

module.exports = { unclosedAtEnd };
