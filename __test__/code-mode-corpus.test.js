'use strict';

// The corpus (fixtures/corpus/programs.js): programs written the way models
// write them, each with the result or error it must produce, run through the
// real sandbox. One Code Mode instance with a small prewarmed pool, four runs
// at a time, keeps the suite's wall time modest.

const test = require('node:test');
const assert = require('node:assert/strict');
const { codeMode, runAll, sandboxCensus } = require('./code-mode-support');
const programs = require('./fixtures/corpus/programs');
const { shopTools } = require('./fixtures/corpus/tools');

const CONCURRENCY = 4;

function check(program, run) {
  const where = `${program.name}: ${JSON.stringify(run.ok ? run.result : run.error)}`;
  if (program.error) {
    assert.equal(run.ok, false, where);
    assert.equal(run.error.kind, program.error.kind, where);
    if (program.error.code) assert.equal(run.error.code, program.error.code, where);
    if (program.error.message) assert.match(run.error.message, program.error.message, where);
  } else {
    assert.equal(run.ok, true, where);
    if (program.result instanceof RegExp) assert.match(run.result, program.result, where);
    else assert.deepEqual(run.result, program.result, where);
  }
  if (program.logs) assert.deepEqual(run.logs.map((line) => line.text), program.logs, where);
}

test('the corpus has at least 50 programs with distinct names', () => {
  assert.ok(programs.length >= 50, `${programs.length} programs`);
  assert.equal(new Set(programs.map((p) => p.name)).size, programs.length);
});

test('every corpus program gives its expected result or error in the real sandbox', async (t) => {
  const mode = codeMode({ tools: shopTools(), pool: { size: 2 }, admission: { maxConcurrent: CONCURRENCY, maxQueued: programs.length } });
  t.after(() => mode.close());
  const runs = await runAll(mode, programs.map((p) => p.code), CONCURRENCY);
  const failures = [];
  programs.forEach((program, index) => {
    try {
      check(program, runs[index]);
    } catch (error) {
      failures.push(error.message);
    }
  });
  assert.deepEqual(failures, [], `${failures.length} of ${programs.length} corpus programs failed`);
  await mode.close();
  assert.deepEqual(sandboxCensus(), { bwrap: 0, runners: 0 });
});
