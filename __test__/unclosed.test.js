'use strict';

// unclosed.js: what a program leaves open at its end, skipping what is not
// code (strings, comments, template text, regular expression literals).

const test = require('node:test');
const assert = require('node:assert/strict');
const { unclosedAtEnd } = require('../lib/code-mode/unclosed');

const open = (code) => unclosedAtEnd(code).map(({ what, line, column }) => `${what}@${line}:${column}`);

test('open brackets are listed outermost first with their positions', () => {
  assert.deepEqual(open('if (1) {\n  f([1, 2'), ['`{`@1:8', '`(`@2:4', '`[`@2:5']);
  assert.deepEqual(open('return { a: [1] }'), []);
});

test('brackets inside strings, comments, template text and regular expressions do not count', () => {
  assert.deepEqual(open('const s = "(" + \'[\'; // {\n/* ( */ const r = /[(]/g; return `{${s}`'), []);
  assert.deepEqual(open('return a / (b) / c'), [], 'division is not a regular expression');
});

test('an unterminated template literal or block comment is named', () => {
  assert.deepEqual(open('return `a${b'), ['a template literal (`)@1:8', 'a template `${`@1:10']);
  assert.deepEqual(open('f(); /* never ends'), ['a /* comment@1:6']);
});
