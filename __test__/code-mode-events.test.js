'use strict';

// Events, redaction of nested secrets, the audit record and the one result
// shape, through the real sandbox and cordon-runner.

const test = require('node:test');
const assert = require('node:assert/strict');
const { codeMode, orderTools, tool } = require('./code-mode-support');

const RESULT_KEYS = ['audit', 'events', 'executionId', 'logs', 'metrics', 'networkReceipts', 'ok', 'receipt'];

test('a run emits started, requested/completed per call, and finished, with ids, durations and sizes', async () => {
  const seen = [];
  const mode = codeMode({ tools: orderTools(), onEvent: (event) => seen.push(event) });
  const result = await mode.run(`
    const open = await tools['orders.search']({ status: 'open' });
    const order = await tools['orders.get']({ id: open[0].id });
    return order.id;`, { executionId: 'events-1', parentId: 'agent-turn-7' });
  assert.equal(result.ok, true, JSON.stringify(result.error));
  assert.deepEqual(result.events.map((e) => e.type), [
    'execution.started', 'tool.requested', 'tool.completed', 'tool.requested', 'tool.completed', 'execution.finished']);
  assert.deepEqual(seen, [...result.events], 'onEvent sees exactly the events of the result');
  for (const event of result.events) assert.equal(event.executionId, 'events-1');
  assert.equal(result.events[0].parentId, 'agent-turn-7');
  const [, req1, done1, req2, done2, finished] = result.events;
  assert.deepEqual([req1.callId, done1.callId, req2.callId, done2.callId], [1, 1, 2, 2]);
  assert.equal(done1.parentId, 'events-1', 'tool calls are children of the execution');
  assert.ok(Number.isInteger(done1.durationMs) && done1.durationMs >= 0);
  assert.equal(done1.resultBytes, Buffer.byteLength(JSON.stringify([{ id: 'A-1', status: 'open', total: 120.5 }, { id: 'A-3', status: 'open', total: 15.25 }])));
  assert.equal(finished.ok, true);
  assert.deepEqual(finished.metrics, result.metrics);
  assert.equal(result.metrics.cumulativeResultBytes, done1.resultBytes + done2.resultBytes);
});

test('nested secrets in arguments and results never reach an event; other strings become byte counts', async () => {
  // Values no event field could contain by chance: a random executionId (hex) once made 'c1' and 'ada' "leak".
  const echo = tool('echo', (args) => ({ account: { owner: 'owner-ada-lovelace', apiKey: 'sk-result-secret', sessions: [{ cookie: 'cookie-value-c1', n: 1 }] }, args }));
  const result = await codeMode({ tools: [echo] }).run(`
    return (await tools.echo({ user: 'user-ada-lovelace', auth: { password: 'hunter2', nested: [{ access_token: 'at-123-token' }] } })).account.owner;`,
  { executionId: 'redaction-events-1' });
  assert.equal(result.ok, true, JSON.stringify(result.error));
  const text = JSON.stringify(result.events);
  for (const secret of ['hunter2', 'at-123-token', 'sk-result-secret', 'cookie-value-c1', 'ada-lovelace']) assert.ok(!text.includes(secret), `${secret} leaked into events`);
  const requested = result.events.find((e) => e.type === 'tool.requested');
  assert.deepEqual(requested.arguments, { user: { type: 'string', utf8Bytes: 17 }, auth: { password: '[REDACTED]', nested: [{ access_token: '[REDACTED]' }] } });
  const completed = result.events.find((e) => e.type === 'tool.completed');
  assert.deepEqual(completed.result.account, { owner: { type: 'string', utf8Bytes: 18 }, apiKey: '[REDACTED]', sessions: [{ cookie: '[REDACTED]', n: 1 }] });
});

test('success and failure share one result shape', async () => {
  const mode = codeMode({ limits: { timeoutMs: 200 } });
  const ok = await mode.run('return { answer: 42 };');
  const failed = await mode.run('while (true) {}');
  assert.deepEqual(Object.keys(ok).sort(), [...RESULT_KEYS, 'result'].sort());
  assert.deepEqual(Object.keys(failed).sort(), [...RESULT_KEYS, 'error'].sort());
  assert.deepEqual(Object.keys(ok.metrics).sort(), ['cumulativeResultBytes', 'droppedLogLines', 'elapsedMs', 'logBytes', 'logLines', 'resultBytes', 'toolCalls']);
  assert.deepEqual(Object.keys(failed.metrics).sort(), Object.keys(ok.metrics).sort());
  assert.ok(Object.isFrozen(ok) && Object.isFrozen(ok.result) && Object.isFrozen(failed.error));
  assert.ok(Object.keys(ok.receipt).length > 0, 'a sandboxed run carries its receipt');
  assert.deepEqual(ok.networkReceipts, [], 'the runner keeps network "none": no streams');
});

test('each run yields an audit record with redacted source, outcome, metrics and the receipt digest', async () => {
  const records = [];
  const mode = codeMode({ tools: orderTools(), onAudit: (record) => records.push(record) });
  const result = await mode.run("const password = 'hunter2'; return (await tools['orders.get']({ id: 'A-2' })).status;");
  assert.equal(records.length, 1);
  const [record] = records;
  assert.deepEqual(record, result.audit);
  assert.equal(record.executionId, result.executionId);
  assert.ok(!record.code.includes('hunter2'));
  assert.match(record.code, /const password = '\[REDACTED\]'/);
  assert.deepEqual(record.outcome, { ok: true });
  assert.deepEqual(record.metrics, result.metrics);
  assert.match(record.receiptDigest, /^sha256:[0-9a-f]{64}$/);
  assert.deepEqual(record.tools, ['orders.search', 'orders.get', 'orders.cancel']);
});

test('a throwing onEvent or onAudit listener does not change the outcome', async () => {
  const mode = codeMode({ onEvent: () => { throw new Error('listener bug'); }, onAudit: () => { throw new Error('sink down'); } });
  const result = await mode.run('return 7;');
  assert.equal(result.result, 7);
});
