'use strict';

// Tool results must be strict JSON before they reach model code.

const test = require('node:test');
const assert = require('node:assert/strict');
const { toJsonText, MAX_JSON_DEPTH } = require('../lib/code-mode/json-value');

test('plain JSON values serialize compactly with their UTF-8 size', () => {
  assert.deepEqual(toJsonText({ a: [1, 'é', null, true] }, 'result'), { text: '{"a":[1,"é",null,true]}', bytes: 24 });
  const shared = { x: 1 };
  assert.equal(toJsonText({ a: shared, b: shared }, 'result').text, '{"a":{"x":1},"b":{"x":1}}');
});

test('an undefined field is left out and an undefined array element is null, as JSON.stringify does', () => {
  assert.equal(toJsonText({ id: 1, note: undefined, tags: [undefined, 'a'] }, 'result').text, '{"id":1,"tags":[null,"a"]}');
  assert.equal(toJsonText({ nested: { gone: undefined } }, 'result').text, '{"nested":{}}');
});

test('functions, BigInt, symbols, NaN, Infinity, cycles and class instances are refused with their path', () => {
  const cycle = { a: {} };
  cycle.a.back = cycle;
  const cases = [
    [{ f() {} }, /result\.f is a function/],
    [{ n: 10n }, /result\.n is a BigInt/],
    [[Symbol('s')], /result\[0\] is a symbol/],
    [{ n: NaN }, /result\.n is NaN/],
    [{ n: -Infinity }, /non-finite/],
    [cycle, /result\.a\.back is a cycle/],
    [{ d: new Date(0) }, /result\.d is a Date/],
    [new Map(), /result is a Map/],
  ];
  for (const [value, pattern] of cases) assert.throws(() => toJsonText(value, 'result'), pattern);
});

test('absurdly deep values are refused instead of overflowing the host stack', () => {
  let deep = 1;
  for (let i = 0; i < 10000; i += 1) deep = [deep];
  assert.throws(() => toJsonText(deep, 'result'), /nested deeper than 126/);
});

test('the deepest accepted result still fits the runner: 126 nested levels pass, 127 are refused', () => {
  const nested = (levels) => {
    let value = 1;
    for (let i = 0; i < levels; i += 1) value = [value];
    return value;
  };
  assert.equal(MAX_JSON_DEPTH, 126);
  assert.equal(toJsonText(nested(126), 'result').bytes, 2 * 126 + 1);
  assert.throws(() => toJsonText(nested(127), 'result'), /nested deeper than 126/);
});
