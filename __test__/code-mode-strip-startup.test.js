'use strict';

// The type-stripping worker's start-up (a thread, amaro's wasm: ~150 ms
// here, seconds on a loaded machine) is not a source's time: a source
// posted while the worker starts gets its whole budget once the worker is
// ready. Before, the first source of a process was timed by wall clock from
// its post, and a loaded CI machine failed a plain `return 1;` with
// STRIP_TIMEOUT after 5 s. Its own file: it needs the process's first worker.

const test = require('node:test');
const assert = require('node:assert/strict');
const { stripTypes } = require('../lib/code-mode/strip-types');

test('a source posted while the stripping worker starts is timed from the worker\'s ready, not from its post', async () => {
  // 50 ms: less than the worker's start-up, more than stripping one line takes.
  const first = await stripTypes('const a: number = 1;\nreturn a;', { stripDeadlineMs: 50 });
  assert.deepEqual(first, { code: 'const a         = 1;\nreturn a;' });
});
