'use strict';

// Plain JavaScript skips the type stripper's worker (lib/code-mode/
// plain-javascript.js): only a program the stripper would leave unchanged
// may, and a TypeScript program that is also valid JavaScript with another
// meaning (a call with explicit type arguments) must still be stripped.

const test = require('node:test');
const assert = require('node:assert/strict');
const { codeMode } = require('./code-mode-support');
const { stripTypes } = require('../lib/code-mode/strip-types');
const { isPlainJavaScript, MAX_LENGTH } = require('../lib/code-mode/plain-javascript');

const PLAIN = [
  'return 1',
  'return items.map((i) => ({ id: i.id, at: `${i.x}` }));',
  'const r = await tools["orders.get"]({ id: "A-1" });\nif (r.total >= 10 && r.n < 3) return r;\nreturn null;',
  'let s = 0; for (let i = 0; i < 10; i++) s += i; return s > 40 ? "big" : "small";',
  'const re = /a+b/g; return "aab".replace(re, (m) => m.length); // trailing comment',
  'class Point { #x = 1; static of() { return new Point(); } get x() { return this.#x; } }\nreturn Point.of().x;',
  'const { a = 1, ...rest } = { b: 2 }; return [a, rest?.b ?? 0];',
  'label: for (const x of [1, 2]) { if (x) break label; }\nreturn typeof x;',
];

const TYPESCRIPT = [
  'let x: number = 1; return x;',
  'const f = (x) => x; return f<number>(2);',
  'return tag<string>`x`;',
  // Found by a white-box review: a comment or a line break after the type arguments.
  'const f = (x) => x; return f<number>/**/(41) + 1;',
  'const f = (x) => x; return f<number>//c\n(41);',
  'const t = (s) => s; return t<string>/**/`x`;',
  'const a = 1, b = 2, c = 3; const r = a<b>\nc; return r;',
  'const f = (x) => x; return f<number>\v(41);',
  'return (value as string).length;',
  'interface A { x: number }\nreturn 1;',
  'enum Color { Red }\nreturn Color.Red;',
  'const o = { k: 1 } satisfies Record<string, number>; return o;',
  'function id<T>(x: T): T { return x; }\nreturn id(1);',
  'let n!: number; return 1;',
  '@dec class A {}\nreturn 1;',
  'import type { X } from "y";\nreturn 1;',
];

test('a plain program is one the stripper leaves byte for byte; TypeScript never passes', async () => {
  for (const code of PLAIN) {
    assert.equal(isPlainJavaScript(code), true, code);
    const stripped = await stripTypes(code);
    assert.equal(stripped.code, code, `the stripper changes ${JSON.stringify(code)}`);
  }
  for (const code of TYPESCRIPT) assert.equal(isPlainJavaScript(code), false, code);
  // Closing the wrapper is not a function body.
  assert.equal(isPlainJavaScript('}); (function () {'), false);
  // Past the bound the stripper's worker parses it, off the event loop.
  const long = `return ${JSON.stringify('x'.repeat(MAX_LENGTH))};`;
  assert.equal(isPlainJavaScript(long), false);
});

test('plain JavaScript is not sent to the stripper; TypeScript still is', async () => {
  // source-prep.js loaded afresh over a counting wrapper of the real stripTypes.
  const stripModule = require('../lib/code-mode/strip-types');
  const real = stripModule.stripTypes;
  const sent = [];
  stripModule.stripTypes = (code, options) => { sent.push(code); return real(code, options); };
  const prepPath = require.resolve('../lib/code-mode/source-prep');
  delete require.cache[prepPath];
  try {
    const { prepareSource: prepare } = require(prepPath);
    assert.deepEqual(await prepare(PLAIN[1]), { code: PLAIN[1] });
    assert.deepEqual(sent, []);
    const typed = await prepare(TYPESCRIPT[0]);
    assert.equal(typed.code, 'let x         = 1; return x;');
    assert.deepEqual(sent, [TYPESCRIPT[0]]);
  } finally {
    stripModule.stripTypes = real;
    delete require.cache[prepPath];
  }
});

test('a call with explicit type arguments runs as TypeScript, not as two comparisons', async () => {
  const mode = codeMode();
  const called = await mode.run('const id = (x) => x;\nreturn id<number>(41) + 1;');
  assert.equal(called.result, 42, JSON.stringify(called.error));
  const tagged = await mode.run('const tag = (s) => s.raw[0];\nreturn tag<string>`ok`;');
  assert.equal(tagged.result, 'ok', JSON.stringify(tagged.error));
  const plain = await mode.run('const a = 3, b = 2;\nreturn [a > (b), a > b];');
  assert.deepEqual(plain.result, [true, true], JSON.stringify(plain.error));
});
