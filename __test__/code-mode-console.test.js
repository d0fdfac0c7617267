'use strict';

// Console output of model-written code (the runner's console extension):
// `result.logs`, `console` events in order with tool events, the logBytes
// bound with its truncation marker, redaction in events and the audit, and a
// runner that breaks the console contract. Real runner, real sandbox.

const test = require('node:test');
const assert = require('node:assert/strict');
const { codeMode, tool } = require('./code-mode-support');

test('console.log/info/warn/error/debug come back in result.logs with level, text and time', async () => {
  const mode = codeMode();
  const before = Date.now();
  const result = await mode.run(`
    console.log('plain', 1, {a: [1, 2]});
    console.info('info'); console.warn('warn'); console.error('error'); console.debug('debug');
    console.log('two\\nlines');
    return 'done';`);
  assert.equal(result.result, 'done', JSON.stringify(result.error));
  assert.deepEqual(result.logs.map((l) => [l.level, l.text]), [
    ['log', 'plain 1 { a: [ 1, 2 ] }'], ['info', 'info'], ['warn', 'warn'], ['error', 'error'], ['debug', 'debug'], ['log', 'two\nlines'],
  ]);
  for (const line of result.logs) {
    assert.ok(line.time >= before && line.time <= Date.now(), 'time is the wall clock when the line arrived');
    assert.ok(Number.isSafeInteger(line.elapsedMs));
  }
  assert.deepEqual([result.metrics.logLines, result.metrics.droppedLogLines], [6, 0]);
});

test('console events are delivered as they happen, in program order with the tool events', async () => {
  const seen = [];
  const mode = codeMode({
    tools: [tool('echo', (args) => args)],
    onEvent: (event) => seen.push(event.type === 'console' ? `console:${event.text}` : event.type),
  });
  const result = await mode.run(`
    console.log('before');
    const r = await tools.echo({v: 1});
    console.log('after', r.v);
    return r.v;`);
  assert.equal(result.result, 1, JSON.stringify(result.error));
  assert.deepEqual(seen, ['execution.started', 'console:before', 'tool.requested', 'tool.completed', 'console:after 1', 'execution.finished']);
  assert.deepEqual(result.events.map((e) => (e.type === 'console' ? `console:${e.text}` : e.type)), seen);
});

test('logBytes bounds the console text: the line that crosses it is cut and marked truncated, later lines are dropped and counted', async () => {
  const mode = codeMode({ limits: { logBytes: 20 } });
  const result = await mode.run(`for (let i = 0; i < 5; i++) console.log('line-' + i + '!'); return 1;`);
  assert.equal(result.ok, true, JSON.stringify(result.error));
  // 'line-0!' is 7 bytes: two lines fit (14), the third is cut to the 6 bytes left.
  assert.deepEqual(result.logs.map((l) => l.text), ['line-0!', 'line-1!', 'line-2']);
  assert.equal(result.logs[2].truncated, true);
  assert.ok(!result.logs[0].truncated);
  assert.deepEqual([result.metrics.logBytes, result.metrics.droppedLogLines], [20, 2]);
});

test('secrets in console output are redacted in the events and the audit, and kept in result.logs for the provider', async () => {
  const audits = [];
  const mode = codeMode({ onAudit: (record) => audits.push(record) });
  const secret = 'sk_live_4eC39HqLyjWDarjtT1zdp7dc';
  const result = await mode.run(`console.log('using token: "${secret}"'); return 1;`);
  assert.equal(result.logs[0].text, `using token: "${secret}"`);
  const event = result.events.find((e) => e.type === 'console');
  assert.ok(!event.text.includes(secret), event.text);
  assert.match(event.text, /\[REDACTED\]/);
  assert.equal(audits[0].logs.length, 1);
  assert.ok(!JSON.stringify(audits[0]).includes(secret), 'the audit record never holds the secret');
});

test('description() tells the model that its console output is returned', () => {
  const text = codeMode().description();
  assert.match(text, /Output of `console` \(log\/info\/warn\/error\/debug, table, dir, group, count, time, assert, trace/);
  assert.match(text, /returned/);
});

test('description() tells the model about timers, their bound, and that there is no module loader', () => {
  const text = codeMode({ limits: { maxTimers: 7 } }).description();
  assert.match(text, /Timers work as in Node \(setTimeout\/setInterval\/clearTimeout, at most 7 pending\)/);
  assert.match(text, /AbortController/);
  assert.match(text, /runs as a script, not a module: there is no import\/require/);
});

test('a runner that breaks the console contract is a protocol failure', async () => {
  const mode = codeMode({ runner: 'hostile', limits: { logBytes: 64 } });
  const cases = [
    ['console-unconfirmed', 'UNEXPECTED_FRAME', /did not confirm the console extension/],
    ['console-past-budget', 'BAD_FRAME', /past the confirmed maxLogBytes 64/],
    ['console-after-truncated', 'BAD_FRAME', /after the one it marked truncated/],
  ];
  for (const [behaviour, code, message] of cases) {
    const result = await mode.run(behaviour);
    assert.deepEqual([result.error?.kind, result.error?.code], ['protocol', code], behaviour);
    assert.match(result.error.message, message);
  }
});
