'use strict';

// Every program of fixtures/corpus/node-parity.js runs in plain Node
// (fixtures/corpus/run-in-node.js) and in Code Mode (the real sandbox) with
// the same tools, and the two must agree: the same result (as JSON) and the
// same console lines, or both failing.

const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { codeMode, runAll, sandboxCensus } = require('./code-mode-support');
const programs = require('./fixtures/corpus/node-parity');
const { shopTools } = require('./fixtures/corpus/tools');

const CONCURRENCY = 4;
const NODE_RUNNER = path.join(__dirname, 'fixtures', 'corpus', 'run-in-node.js');

/** The program in plain Node, in a child process (an uncaught timer error must not reach this test). */
function runInNode(index) {
  const child = spawnSync(process.execPath, [NODE_RUNNER, String(index)], { encoding: 'utf8', timeout: 30000 });
  if (child.status !== 0) return { ok: false, message: `node exited ${child.status}: ${child.stderr}` };
  return JSON.parse(child.stdout);
}

test('the Node-parity corpus has distinct names and covers timers, abort, console and errors', () => {
  assert.equal(new Set(programs.map((p) => p.name)).size, programs.length);
  const all = programs.map((p) => p.code).join('\n');
  for (const word of ['setTimeout', 'setInterval', 'clearTimeout', 'AbortController', 'AbortSignal.timeout', 'AbortSignal.any',
    'console.table', 'console.group', 'console.count', 'console.assert', 'console.dir', 'console.time', 'import ', 'require(']) {
    assert.ok(all.includes(word), word);
  }
});

test('every Node-parity program gives in Code Mode what it gives in plain Node', async (t) => {
  const mode = codeMode({ tools: shopTools(), pool: { size: 2 }, admission: { maxConcurrent: CONCURRENCY, maxQueued: programs.length } });
  t.after(() => mode.close());
  const runs = await runAll(mode, programs.map((p) => p.code), CONCURRENCY);
  const failures = [];
  for (const [index, program] of programs.entries()) {
    const node = runInNode(index);
    const run = runs[index];
    try {
      if (program.fails) {
        assert.equal(node.ok, false, 'Node fails too');
        assert.equal(run.ok, false, JSON.stringify(run.result));
        if (program.fails.code) assert.equal(run.error.code, program.fails.code);
        if (program.fails.sameFirstLine) assert.equal(run.error.message.split('\n')[0], node.message.split('\n')[0]);
        if (program.fails.messageIncludes) {
          assert.ok(run.error.message.includes(program.fails.messageIncludes), run.error.message);
          assert.ok(node.message.includes(program.fails.messageIncludes), node.message);
        }
        continue;
      }
      assert.equal(node.ok, true, node.message);
      assert.equal(run.ok, true, JSON.stringify(run.error));
      assert.deepEqual(run.result, node.result);
      const normalize = program.normalize ?? ((line) => line);
      assert.deepEqual(run.logs.map((line) => normalize(line.text)), node.logs.map(normalize));
    } catch (error) {
      failures.push(`${program.name}: ${error.message}`);
    }
  }
  assert.deepEqual(failures, [], `${failures.length} of ${programs.length} programs differ from Node`);
  await mode.close();
  assert.deepEqual(sandboxCensus(), { bwrap: 0, runners: 0 });
});
