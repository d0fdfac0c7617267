'use strict';

// Runner frame validation and the bounded line reader, without a sandbox.

const test = require('node:test');
const assert = require('node:assert/strict');
const { parseFrame, validateFrame, encodeFrame, FrameError } = require('../lib/code-mode/frames');
const { BoundedLineReader } = require('../lib/code-mode/line-reader');
const { findStructureProblem, MAX_FRAME_DEPTH } = require('../lib/code-mode/json-structure');

const line = (value) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value));
const base = { version: 'code-bridge-v1', executionId: 'e1' };

function assertFrameError(fn, code) {
  assert.throws(fn, (error) => error instanceof FrameError && error.code === code);
}

test('host frames are one compact JSON object per line with the protocol version', () => {
  const text = encodeFrame('cancel', { executionId: 'e1' });
  assert.equal(text, '{"version":"code-bridge-v1","type":"cancel","executionId":"e1"}\n');
});

test('a runner line that is not a UTF-8 JSON object of code-bridge-v1 is a BAD_FRAME', () => {
  for (const bad of ['garbage', '[1]', '"x"', '{"version":"code-bridge-v2","type":"ready"}', '{"type":"ready"}',
    Buffer.from([0x7b, 0xff, 0x7d]), Buffer.from('{"a":"\u0000"}'), Buffer.from('{"version":"code-bridge-v1",\0"type":"ready"}')]) {
    assertFrameError(() => parseFrame(Buffer.isBuffer(bad) ? bad : line(bad)), 'BAD_FRAME');
  }
});

test('a runner frame with a duplicate key at any depth is a BAD_FRAME naming the key (JSON.parse would keep the last)', () => {
  const frames = {
    ok: '{"version":"code-bridge-v1","type":"execution.result","executionId":"e1","ok":false,"error":{"kind":"internal","message":"x"},"ok":true,"result":1}',
    escaped: '{"version":"code-bridge-v1","type":"tool.call","id":1,"name":"a","arguments":{"user":1,"\\u0075ser":2}}',
    nested: '{"version":"code-bridge-v1","type":"tool.call","id":1,"name":"a","arguments":{"list":[{"k":1},{"k":2,"k":3}]}}',
    spaced: '{ "version" : "code-bridge-v1" , "type":"ready", "version" :"code-bridge-v1"}',
  };
  const keys = { ok: 'ok', escaped: 'user', nested: 'k', spaced: 'version' };
  for (const [name, text] of Object.entries(frames)) {
    assert.throws(() => parseFrame(line(text)), (error) => error instanceof FrameError && error.code === 'BAD_FRAME'
      && error.message === `runner frame has a duplicate key "${keys[name]}"`, name);
  }
  // Equal keys in different objects, and keys that differ only after escaping, are fine.
  const fine = parseFrame(line('{"version":"code-bridge-v1","type":"tool.call","id":1,"name":"a","arguments":{"a":{"a":1},"b":[{"a":2},{"a":3}],"a\\"":1,"a\\\\":2,"s":"\\\\\\"\\\\"}}'));
  assert.deepEqual(Object.keys(fine.arguments), ['a', 'b', 'a"', 'a\\', 's']);
});

test('a runner frame nested deeper than the frame bound is a BAD_FRAME, so nothing on the host recurses into it', () => {
  const deep = (n) => `{"version":"code-bridge-v1","type":"execution.result","executionId":"e1","ok":true,"result":${'['.repeat(n)}${']'.repeat(n)}}`;
  assert.equal(parseFrame(line(deep(MAX_FRAME_DEPTH - 1))).ok, true);
  assertFrameError(() => parseFrame(line(deep(MAX_FRAME_DEPTH))), 'BAD_FRAME');
  assertFrameError(() => parseFrame(line(deep(500000))), 'BAD_FRAME');
});

test('the duplicate-key and depth scan is linear: a 1 MiB frame of keys, escapes and nesting takes well under a second', (t) => {
  const MiB = 1 << 20;
  const inputs = {
    'many keys': `{${Array.from({ length: MiB / 16 }, (_, i) => `"k${i}":${i}`).join(',')}}`,
    'escaped quotes': JSON.stringify({ s: '\\"'.repeat(MiB / 3) }),
    'backslash run': JSON.stringify({ s: '\\'.repeat(MiB) }),
    'small objects': JSON.stringify(Array.from({ length: MiB / 16 }, (_, i) => ({ a: i, b: [i] }))),
  };
  for (const [name, text] of Object.entries(inputs)) {
    JSON.parse(text);
    const started = performance.now();
    assert.equal(findStructureProblem(text), null, name);
    const ms = performance.now() - started;
    t.diagnostic(`structure scan ${name} (${text.length} chars): ${ms.toFixed(1)} ms`);
    assert.ok(ms < 1000, `${name} took ${ms} ms`);
  }
});

test('a runner frame of a type the runner never sends is an UNEXPECTED_FRAME', () => {
  assertFrameError(() => parseFrame(line({ ...base, type: 'tool.result' })), 'UNEXPECTED_FRAME');
  assertFrameError(() => parseFrame(line({ ...base, type: 'execute' })), 'UNEXPECTED_FRAME');
});

test('ready and execution.result must carry our executionId; a tool.call may omit it but not change it', () => {
  const ready = { ...base, type: 'ready', effectiveLimits: {} };
  validateFrame(ready, 'e1');
  assertFrameError(() => validateFrame({ ...ready, executionId: 'other' }, 'e1'), 'WRONG_EXECUTION_ID');
  assertFrameError(() => validateFrame({ ...ready, executionId: undefined }, 'e1'), 'WRONG_EXECUTION_ID');
  const call = { version: 'code-bridge-v1', type: 'tool.call', id: 1, name: 'a', arguments: {} };
  validateFrame(call, 'e1');
  assertFrameError(() => validateFrame({ ...call, executionId: 'e2' }, 'e1'), 'WRONG_EXECUTION_ID');
});

test('tool.call and execution.result fields are checked', () => {
  const call = { version: 'code-bridge-v1', type: 'tool.call', id: 1, name: 'a', arguments: {} };
  for (const bad of [{ id: 0 }, { id: 1.5 }, { id: '1' }, { name: 3 }, { arguments: [] }, { arguments: null }]) {
    assertFrameError(() => validateFrame({ ...call, ...bad }, 'e1'), 'BAD_FRAME');
  }
  const result = { ...base, type: 'execution.result' };
  validateFrame({ ...result, ok: true, result: null }, 'e1');
  validateFrame({ ...result, ok: false, error: { kind: 'timeout', message: 'execution timed out' } }, 'e1');
  for (const bad of [{ ok: 'yes' }, { ok: true }, { ok: false }, { ok: false, error: { kind: 'weird', message: 'x' } },
    { ok: false, error: { kind: 'limit', message: 'x', code: 5 } }]) {
    assertFrameError(() => validateFrame({ ...result, ...bad }, 'e1'), 'BAD_FRAME');
  }
});

test('the line reader splits frames across chunk boundaries', () => {
  const lines = [];
  const reader = new BoundedLineReader({ maxLineBytes: 100, onLine: (l) => lines.push(l.toString()), onOverflow: assert.fail });
  reader.push(Buffer.from('{"a":1}\n{"b"'));
  reader.push(Buffer.from(':2}\n'));
  reader.push(Buffer.from('\n{"c":3}'));
  assert.deepEqual(lines, ['{"a":1}', '{"b":2}', '']);
  assert.equal(reader.partialBytes, 7);
});

test('a line not strictly shorter than the bound overflows once and is never buffered past it', () => {
  const overflows = [];
  const lines = [];
  const reader = new BoundedLineReader({ maxLineBytes: 10, onLine: (l) => lines.push(l.toString()), onOverflow: (e) => overflows.push(e) });
  reader.push(Buffer.from('123456789\n'));
  for (let i = 0; i < 1000; i += 1) reader.push(Buffer.alloc(1 << 16, 0x61));
  reader.push(Buffer.from('\n{"late":1}\n'));
  assert.deepEqual(lines, ['123456789']);
  assert.equal(overflows.length, 1);
  assert.equal(reader.partialBytes, 0);
  assert.ok(reader.droppedBytes >= 1000 * (1 << 16) - 10);
});
