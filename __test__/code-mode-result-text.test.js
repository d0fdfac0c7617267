'use strict';

// Values crossing the bridge as JSON text, at the edges of what that text can
// carry: a program's result or a tool call's arguments whose JSON is far
// larger than the runner's memory ceiling (issue 18 B6), and tool results or errors holding lone UTF-16
// surrogates, which JSON.stringify spells as escapes no UTF-8 JSON reader
// accepts (issue 18 B7). Each ended the run before (`runner_exit` after the
// runner aborted on allocation; `internal`, uncatchable).

const test = require('node:test');
const assert = require('node:assert/strict');
const { codeMode, tool } = require('./code-mode-support');

test('a result whose JSON is ~40 MB from a few KB of shared arrays ends as result_limit, with its size, and the runner stays inside its ceiling', async () => {
  // Serialising 40 MB takes seconds on a loaded machine: time is not what is tested.
  const mode = codeMode({ limits: { timeoutMs: 60_000 } });
  // 20 000 references to one 1000-element array: ~8 KB of heap, 40 MB of
  // JSON text (inside the 64 MiB QuickJS ceiling), ~640 MB as parsed values.
  const result = await mode.run('const row = Array(1000).fill(0); return Array(20000).fill(row);');
  assert.equal(result.ok, false);
  assert.equal(result.error.kind, 'result_limit', JSON.stringify(result.error));
  assert.match(result.error.message, /\(40040001 bytes > 524288\)/);
  const next = await mode.run('return 1');
  assert.equal(next.result, 1, 'the same host runs the next program');
});

test('tool arguments whose JSON is ~40 MB fail that one call with a catchable RangeError, and the run goes on', async () => {
  const mode = codeMode({ tools: [tool('echo', () => 'echoed')], limits: { timeoutMs: 60_000 } });
  const result = await mode.run(`
    const row = Array(1000).fill(0);
    let refused;
    try { await tools.echo({ rows: Array(20000).fill(row) }); } catch (e) { refused = e.name + ': ' + e.message; }
    return [refused, await tools.echo({})];`);
  assert.equal(result.ok, true, JSON.stringify(result.error));
  assert.match(result.result[0], /^RangeError: tool arguments are 40040010 bytes of JSON: a tool\.call frame must be shorter than --max-frame-bytes \d+$/);
  assert.equal(result.result[1], 'echoed');
});

test('a result just past resultBytes is still measured exactly (canonical JSON), and one that fits passes', async () => {
  const mode = codeMode({ limits: { resultBytes: 1000 } });
  const over = await mode.run('return Array(500).fill(0);'); // 1001 bytes
  assert.equal(over.error?.kind, 'result_limit');
  assert.match(over.error.message, /\(1001 bytes > 1000\)/, 'parsed and measured, not cut off by its text length');
  const fits = await mode.run('return Array(499).fill(0);'); // 999 bytes
  assert.equal(fits.ok, true, JSON.stringify(fits.error));
  assert.equal(fits.metrics.resultBytes, 999);
});

test('a tool result holding a lone surrogate fails that one call with a catchable RESULT_NOT_JSON naming where it is', async () => {
  const mode = codeMode({
    tools: [
      tool('lone', () => ({ rows: [{ name: 'a\ud800b' }] })),
      tool('loneKey', () => ({ ['k\udc00']: 1 })),
      tool('fine', () => ({ name: 'ok' })),
    ],
  });
  const result = await mode.run(`
    const seen = [];
    for (const call of [() => tools.lone({}), () => tools.loneKey({})]) {
      try { seen.push(await call()); } catch (e) { seen.push(e.message); }
    }
    seen.push(await tools.fine({}));
    return seen;`);
  assert.equal(result.ok, true, JSON.stringify(result.error));
  assert.match(result.result[0], /RESULT_NOT_JSON: result\.rows\[0\]\.name is a string holding a lone UTF-16 surrogate/);
  assert.match(result.result[1], /RESULT_NOT_JSON: result key "k\\udc00" is a string holding a lone UTF-16 surrogate/);
  assert.deepEqual(result.result[2], { name: 'ok' }, 'the run goes on after the refused calls');
});

test('well-formed text that merely looks like a surrogate escape, and surrogate pairs, reach the program unchanged', async () => {
  const mode = codeMode({ tools: [tool('text', () => ({ escaped: '\\ud800', pair: '\ud83d\ude00', both: '\\\ud83d\ude00' }))] });
  const result = await mode.run('return await tools.text({});');
  assert.equal(result.ok, true, JSON.stringify(result.error));
  assert.deepEqual(result.result, { escaped: '\\ud800', pair: '\ud83d\ude00', both: '\\\ud83d\ude00' });
});

test('a handler error message holding a lone surrogate reaches the program as a catchable error, the surrogate replaced', async () => {
  const mode = codeMode({ tools: [tool('throws', () => { throw new Error('bad \udc00 input'); })] });
  const result = await mode.run('try { await tools.throws({}); } catch (e) { return e.message; }');
  assert.equal(result.ok, true, JSON.stringify(result.error));
  assert.match(result.result, /TOOL_FAILED: bad \ufffd input/);
});
