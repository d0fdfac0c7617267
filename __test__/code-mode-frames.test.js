'use strict';

// Runner frame validation and the bounded line reader, without a sandbox.

const test = require('node:test');
const assert = require('node:assert/strict');
const { parseFrame, validateFrame, encodeFrame, FrameError } = require('../lib/code-mode/frames');
const { BoundedLineReader } = require('../lib/code-mode/line-reader');

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
