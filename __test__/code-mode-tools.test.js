'use strict';

// Tool catalogue validation and capability scoping, without a sandbox.

const test = require('node:test');
const assert = require('node:assert/strict');
const { defineTools, grantTools } = require('../lib/code-mode/tools');
const { validateArguments } = require('../lib/code-mode/validation');

const readTool = (name = 'orders.get') => ({
  name,
  description: 'Get an order',
  effect: 'read',
  inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'], additionalProperties: false },
  handler: async () => ({}),
});
const writeTool = { ...readTool('orders.cancel'), effect: 'write', description: 'Cancel an order' };

function assertInvalidTool(tools, pattern) {
  assert.throws(() => defineTools(tools), (error) => error.code === 'ERR_CORDON_INVALID_TOOL' && pattern.test(error.message));
}

test('a tool name must be 1–256 UTF-8 bytes, NUL-free and unique', () => {
  assertInvalidTool([readTool('')], /1–256 UTF-8 bytes/);
  assertInvalidTool([readTool('é'.repeat(129))], /got 258/);
  assertInvalidTool([readTool('a\0b')], /NUL/);
  assertInvalidTool([readTool('x'), readTool('x')], /duplicate/);
  assert.equal(defineTools([readTool('é'.repeat(128))]).size, 1);
});

test('a tool needs a description, an effect word, an object inputSchema and a handler', () => {
  assertInvalidTool([{ ...readTool(), description: '' }], /description/);
  assertInvalidTool([{ ...readTool(), effect: 'Read Stuff' }], /effect/);
  assertInvalidTool([{ ...readTool(), inputSchema: { type: 'string' } }], /describe an object/);
  assertInvalidTool([{ ...readTool(), inputSchema: { type: 'object', properties: { a: { type: 'nonsense' } } } }], /not a valid JSON Schema/);
  assertInvalidTool([{ ...readTool(), handler: 'x' }], /handler/);
  assertInvalidTool([{ ...readTool(), project: 1 }], /project/);
  assertInvalidTool([{ ...readTool(), extra: true }], /unknown key "extra"/);
  assertInvalidTool('nope', /array/);
  assertInvalidTool(Array.from({ length: 513 }, (_, i) => readTool(`t${i}`)), /at most 512/);
});

test('the catalogue is frozen and does not follow later changes to the caller\'s schema', async () => {
  const tool = readTool();
  const catalogue = defineTools([tool]);
  tool.inputSchema.properties.id.type = 'number';
  const frozen = catalogue.get('orders.get');
  assert.ok(Object.isFrozen(frozen));
  assert.ok(Object.isFrozen(frozen.inputSchema.properties.id));
  assert.deepEqual(await validateArguments(frozen, { id: 'A1' }), { ok: true });
  assert.equal((await validateArguments(frozen, { id: 7 })).code, 'INVALID_ARGUMENTS');
});

test('format keywords in a schema are enforced, not silently ignored', async () => {
  const tool = { ...readTool(), inputSchema: { type: 'object', properties: { email: { type: 'string', format: 'email' } } } };
  const compiled = defineTools([tool]).get('orders.get');
  assert.deepEqual(await validateArguments(compiled, { email: 'a@example.com' }), { ok: true });
  assert.equal((await validateArguments(compiled, { email: 'not an email' })).code, 'INVALID_ARGUMENTS');
});

test('inspect mode grants only read tools; the default mode grants every tool', () => {
  const catalogue = defineTools([readTool(), writeTool]);
  assert.deepEqual([...grantTools(catalogue, 'inspect').keys()], ['orders.get']);
  assert.deepEqual([...grantTools(catalogue, undefined).keys()], ['orders.get', 'orders.cancel']);
  assert.deepEqual([...grantTools(catalogue, 'execute').keys()], ['orders.get', 'orders.cancel']);
  assert.throws(() => grantTools(catalogue, 'admin'), { code: 'ERR_CORDON_INVALID_OPTIONS' });
});
