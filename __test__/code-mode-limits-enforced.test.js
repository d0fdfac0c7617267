'use strict';

// Every limit, enforced end to end: the host's (source, per-result,
// cumulative) and the runner's (tool calls, result bytes, time, memory).

const test = require('node:test');
const assert = require('node:assert/strict');
const { codeMode, tool } = require('./code-mode-support');

const sized = (bytes) => tool(`bytes${bytes}`, () => 'x'.repeat(bytes - 2)); // JSON string: 2 quote bytes

test('source over sourceBytes is refused on the host, before any sandbox starts', async () => {
  const mode = codeMode({ limits: { sourceBytes: 32 } });
  const result = await mode.run(`return ${'1 + '.repeat(20)}1;`);
  assert.equal(result.ok, false);
  assert.deepEqual([result.error.kind, result.error.code], ['limit', 'SOURCE_LIMIT_EXCEEDED']);
  assert.deepEqual(result.receipt, {});
  assert.equal((await mode.run('return 1;')).result, 1);
});

test('empty source and source with NUL never reach the runner', async () => {
  const mode = codeMode();
  assert.equal((await mode.run('')).error.code, 'SOURCE_EMPTY');
  assert.equal((await mode.run('return 1;\0')).error.code, 'SOURCE_HAS_NUL');
});

test('the tool call limit is enforced by the runner and cannot be caught', async () => {
  const mode = codeMode({ tools: [tool('ping', () => 'pong')], limits: { toolCalls: 3 } });
  const result = await mode.run("for (let i = 0; i < 10; i++) { try { await tools.ping({}); } catch {} } return 'escaped';");
  assert.equal(result.ok, false);
  assert.deepEqual([result.error.kind, result.error.code], ['limit', 'TOOL_CALL_LIMIT_EXCEEDED']);
  assert.equal(result.metrics.toolCalls, 3);
});

test('a zero tool call budget runs code without tools and refuses the first call', async () => {
  const mode = codeMode({ tools: [tool('ping', () => 'pong')], limits: { toolCalls: 0 } });
  assert.equal((await mode.run('return 1;')).result, 1);
  const result = await mode.run('try { await tools.ping({}); } catch {} return 2;');
  assert.deepEqual([result.ok, result.error.code, result.metrics.toolCalls], [false, 'TOOL_CALL_LIMIT_EXCEEDED', 0]);
});

test('a tool result over toolResultBytes is withheld from the code and fails the run even when caught', async () => {
  const mode = codeMode({ tools: [sized(2000)], limits: { toolResultBytes: 1024, cumulativeResultBytes: 4096 } });
  const result = await mode.run("try { await tools.bytes2000({}); } catch (e) { return e.message; } return 'got it';");
  assert.equal(result.ok, false);
  assert.deepEqual([result.error.kind, result.error.code], ['limit', 'TOOL_RESULT_LIMIT_EXCEEDED']);
  assert.match(result.error.message, /2000 bytes, the limit is 1024/);
  assert.equal(result.metrics.cumulativeResultBytes, 0);
});

test('tool results are counted across calls against cumulativeResultBytes', async () => {
  const mode = codeMode({ tools: [sized(1000)], limits: { toolResultBytes: 1000, cumulativeResultBytes: 2500 } });
  const result = await mode.run("let n = 0; for (let i = 0; i < 5; i++) { try { n += (await tools.bytes1000({})).length; } catch {} } return n;");
  assert.equal(result.ok, false);
  assert.deepEqual([result.error.kind, result.error.code], ['limit', 'CUMULATIVE_RESULT_LIMIT_EXCEEDED']);
  assert.equal(result.metrics.cumulativeResultBytes, 2000);
  assert.equal(result.metrics.toolCalls, 3);
  const completed = result.events.filter((e) => e.type === 'tool.completed');
  assert.deepEqual(completed.map((e) => e.resultBytes), [1000, 1000]);
});

test('a final result over resultBytes is a result_limit failure', async () => {
  const result = await codeMode({ limits: { resultBytes: 100 } }).run("return 'y'.repeat(200);");
  assert.equal(result.ok, false);
  assert.equal(result.error.kind, 'result_limit');
  const fits = await codeMode({ limits: { resultBytes: 100 } }).run("return 'y'.repeat(90);");
  assert.equal(fits.metrics.resultBytes, 92);
});

test('code that runs past timeoutMs ends as timeout, even if it catches', async () => {
  const started = Date.now();
  const result = await codeMode({ limits: { timeoutMs: 300 } }).run('try { while (true) {} } catch {} return 1;');
  assert.equal(result.ok, false);
  assert.equal(result.error.kind, 'timeout');
  assert.ok(Date.now() - started < 10_000, `took ${Date.now() - started} ms`); // a hang, not a slow start
});

test('code that allocates past memoryBytes ends as a memory failure', async () => {
  const result = await codeMode({ limits: { memoryBytes: 8 * 1024 * 1024 } }).run("const a = []; while (true) a.push('x'.repeat(1 << 16) + a.length);");
  assert.equal(result.ok, false);
  assert.equal(result.error.kind, 'memory', JSON.stringify(result.error));
});

test('a ready frame that raises a limit is refused as READY_LIMIT_RAISED', async () => {
  const result = await codeMode({ runner: 'hostile', limits: { timeoutMs: 1000 } }).run('raise-limit');
  assert.equal(result.ok, false);
  assert.deepEqual([result.error.kind, result.error.code], ['protocol', 'READY_LIMIT_RAISED']);
  assert.match(result.error.message, /timeoutMs 1001 exceeds the requested 1000/);
});

test('a runner result over resultBytes is caught by the host even when the runner lets it through', async () => {
  const result = await codeMode({ runner: 'hostile', limits: { resultBytes: 1000 } }).run('result-too-big');
  assert.deepEqual([result.error.kind, result.error.code], ['result_limit', 'RESULT_LIMIT_EXCEEDED']);
});

test('invalid limits are refused when the host is created', () => {
  assert.throws(() => codeMode({ limits: { toolResultBytes: 2048, cumulativeResultBytes: 1024 } }), { code: 'ERR_CORDON_INVALID_LIMITS' });
  assert.throws(() => codeMode({ limits: { timeoutMs: -1 } }), { code: 'ERR_CORDON_INVALID_LIMITS' });
});
