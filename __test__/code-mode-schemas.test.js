'use strict';

// Tool schemas at createCodeMode: which drafts validate, which schema libraries
// are converted, what is refused and how; reserved argument keys; the
// validator pool's bounds (budget, queue, abandoned calls) with real worker
// threads. The end-to-end runs through the sandbox are in
// code-mode-untouchable.test.js.

const test = require('node:test');
const assert = require('node:assert/strict');
const { z } = require('zod');
const zod3 = require('zod/v3');
const { jsonSchema } = require('ai');
const { defineTools } = require('../lib/code-mode/tools');
const { validateArguments, validateResult, fitsFastPath } = require('../lib/code-mode/validation');
const { ValidatorPool } = require('../lib/code-mode/validator-pool');
const { FRAME_TEXT, parseFrame } = require('../lib/code-mode/frames');

const tool = (inputSchema, extra = {}) => ({ name: 't', description: 'a tool', effect: 'read', handler: () => null, inputSchema, ...extra });
const compile = (inputSchema, options) => defineTools([tool(inputSchema)], options).get('t');
const refused = (inputSchema, pattern, options) => assert.throws(() => compile(inputSchema, options), (error) => {
  assert.equal(error.code, 'ERR_CORDON_INVALID_TOOL');
  assert.match(error.message, pattern);
  return true;
});
/** Validate through the pool even when the fast path would take it (a frame text past its size). */
async function check(compiled, args) {
  return validateArguments(compiled, args);
}

test('a draft 2020-12 schema validates with 2020-12 semantics (prefixItems, $defs)', async () => {
  const compiled = compile({
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    properties: { pair: { type: 'array', prefixItems: [{ type: 'string' }, { $ref: '#/$defs/n' }], items: false } },
    $defs: { n: { type: 'number' } },
    required: ['pair'],
  });
  assert.equal(compiled.input.draft, '2020-12');
  assert.deepEqual(await check(compiled, { pair: ['a', 1] }), { ok: true });
  assert.equal((await check(compiled, { pair: ['a', 'b'] })).code, 'INVALID_ARGUMENTS');
  assert.equal((await check(compiled, { pair: ['a', 1, 2] })).code, 'INVALID_ARGUMENTS');
});

test('a draft-07 schema (and one without $schema) validates with draft-07 semantics (array items, definitions)', async () => {
  for (const $schema of ['http://json-schema.org/draft-07/schema#', undefined]) {
    const compiled = compile({
      ...($schema ? { $schema } : {}),
      type: 'object',
      properties: { pair: { type: 'array', items: [{ type: 'string' }, { $ref: '#/definitions/n' }], additionalItems: false } },
      definitions: { n: { type: 'number' } },
    });
    assert.equal(compiled.input.draft, 'draft-07');
    assert.deepEqual(await check(compiled, { pair: ['a', 1] }), { ok: true });
    assert.equal((await check(compiled, { pair: ['a', 1, 2] })).code, 'INVALID_ARGUMENTS');
  }
});

test('a $schema Ajv cannot honour (draft-04) is refused at createCodeMode, naming the supported drafts', () => {
  refused({ $schema: 'http://json-schema.org/draft-04/schema#', type: 'object' }, /\$schema .*draft-04.* is not supported; use draft 2020-12/);
});

test('a zod 4 schema is converted through Standard JSON Schema and validates', async () => {
  const compiled = compile(z.object({ id: z.string().min(2), qty: z.number().int().optional() }));
  assert.equal(compiled.inputSchema.type, 'object');
  assert.deepEqual(compiled.inputSchema.required, ['id']);
  assert.deepEqual(await check(compiled, { id: 'A1', qty: 2 }), { ok: true });
  assert.equal((await check(compiled, { id: 'A' })).code, 'INVALID_ARGUMENTS');
  assert.equal((await check(compiled, { id: 'A1', qty: 1.5 })).code, 'INVALID_ARGUMENTS');
});

test('a zod 4 outputSchema is converted and checked like a JSON Schema one', async () => {
  const catalogue = defineTools([tool({ type: 'object' }, { outputSchema: z.object({ total: z.number() }) })]);
  const compiled = catalogue.get('t');
  assert.equal(compiled.outputSchema.type, 'object');
  assert.deepEqual(await validateResult(compiled, { total: 1 }, { text: '{"total":1}' }), { ok: true });
  assert.equal((await validateResult(compiled, { total: 'x' }, { text: '{"total":"x"}' })).code, 'RESULT_SCHEMA_MISMATCH');
});

test('a super-linear outputSchema is checked in a validator thread, with the same budget', async () => {
  const pool = new ValidatorPool({ threads: 1, budgetMs: 300 });
  const compiled = defineTools([tool({ type: 'object' }, { outputSchema: { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } } })]).get('t');
  assert.equal(compiled.output.weight, null);
  const evil = { s: `${'a'.repeat(40)}!` };
  assert.equal((await validateResult(compiled, evil, { text: JSON.stringify(evil), pool })).code, 'VALIDATION_TIMEOUT');
  assert.equal((await validateResult(compiled, { s: 'b' }, { text: '{"s":"b"}', pool })).code, 'RESULT_SCHEMA_MISMATCH');
  assert.deepEqual(await validateResult(compiled, { s: 'aa' }, { text: '{"s":"aa"}', pool }), { ok: true });
  pool.endIdle();
});

test('an AI SDK jsonSchema() value is unwrapped and validates', async () => {
  const compiled = compile(jsonSchema({ type: 'object', properties: { q: { type: 'string' } }, required: ['q'] }));
  assert.deepEqual(await check(compiled, { q: 'x' }), { ok: true });
  assert.equal((await check(compiled, {})).code, 'INVALID_ARGUMENTS');
});

test('a raw zod 3 schema is refused at createCodeMode: it has no JSON Schema converter', () => {
  refused(zod3.z.object({ a: zod3.z.string() }), /inputSchema it is a Standard Schema from "zod" without a JSON Schema converter/);
});

test('a class instance or an object holding functions is refused, not silently accepted', () => {
  class Schema { constructor() { this.type = 'object'; } }
  refused(new Schema(), /inputSchema it is not a plain object/);
  refused({ type: 'object', properties: { a: { type: 'string', check: () => true } } }, /not JSON Schema data: \/properties\/a\/check is a function/);
});

test('a typo\'d keyword or format is refused under strict schemas (the default) and ignored with strictSchemas: false', async () => {
  refused({ type: 'object', propertees: { a: { type: 'string' } } }, /unknown keyword: "propertees"/);
  refused({ type: 'object', properties: { a: { type: 'string', format: 'emial' } } }, /unknown format "emial"/);
  const lax = compile({ type: 'object', propertees: { a: { type: 'string' } } }, { strictSchemas: false });
  assert.deepEqual(await check(lax, { a: 1 }), { ok: true });
  assert.throws(() => defineTools([], { strictSchemas: 'yes' }), { code: 'ERR_CORDON_INVALID_OPTIONS' });
});

test('x-… annotation keywords are accepted under strict schemas', async () => {
  const compiled = compile({ type: 'object', 'x-origin': 'mcp', properties: { a: { type: 'string', 'x-ui': { widget: 'text' } } } });
  assert.deepEqual(await check(compiled, { a: 'x' }), { ok: true });
});

test('own __proto__, constructor and prototype keys are refused at any depth unless the schema names them', async () => {
  const open = compile({ type: 'object' });
  for (const text of ['{"__proto__":{"isAdmin":true}}', '{"a":[{"b":{"constructor":{"prototype":{}}}}]}', '{"x":{"prototype":1}}']) {
    const verdict = await check(open, JSON.parse(text));
    assert.equal(verdict.code, 'INVALID_ARGUMENTS', text);
    assert.match(verdict.message, /reserved key "\/.*(__proto__|constructor|prototype)"/);
  }
  const naming = compile({ type: 'object', properties: { constructor: { type: 'string' } } });
  assert.deepEqual(await check(naming, JSON.parse('{"constructor":"Ford"}')), { ok: true });
  assert.equal((await check(naming, JSON.parse('{"__proto__":{}}'))).code, 'INVALID_ARGUMENTS');
});

test('the reserved-key refusal also holds on the pool path (a frame too big for the fast path)', async () => {
  const compiled = compile({ type: 'object' });
  const text = `{"version":"code-bridge-v1","type":"tool.call","id":1,"name":"t","arguments":{"pad":"${'x'.repeat(40_000)}","__proto__":{"polluted":true}}}`;
  const frame = parseFrame(Buffer.from(text));
  assert.equal(fitsFastPath(compiled.input, frame.arguments, frame[FRAME_TEXT]), false);
  const verdict = await validateArguments(compiled, frame.arguments, { frameText: frame[FRAME_TEXT] });
  assert.equal(verdict.code, 'INVALID_ARGUMENTS');
  assert.match(verdict.message, /reserved key "\/__proto__"/);
});

test('the main-thread fast path is taken only for linear schemas and small arguments', () => {
  const simple = compile({ type: 'object', properties: { id: { type: 'string' }, n: { type: 'integer' } } }).input;
  assert.equal(fitsFastPath(simple, { id: 'a', n: 1 }, undefined), true);
  assert.equal(fitsFastPath(simple, { id: 'a' }, '{"id":"a"}'), true);
  assert.equal(fitsFastPath(simple, { id: 'x'.repeat(20_000) }, undefined), false);
  assert.equal(fitsFastPath(simple, { a: Array.from({ length: 100 }, () => 'x'.repeat(1000)) }, undefined), false, 'strings count in total');
  assert.equal(fitsFastPath(simple, { list: Array.from({ length: 20_000 }, () => 0) }, undefined), false);
  for (const slow of [
    { type: 'object', properties: { tags: { type: 'array', uniqueItems: true } } },
    { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } },
    { type: 'object', properties: { s: { type: 'string', format: 'email' } } },
    { type: 'object', patternProperties: { '^a': { type: 'string' } } },
    { type: 'object', properties: { n: { $ref: '#' } } },
  ]) {
    assert.equal(compile(slow).input.weight, null, JSON.stringify(slow));
    assert.equal(fitsFastPath(compile(slow).input, {}, '{}'), false);
  }
});

test('a catastrophic pattern is stopped at the budget: VALIDATION_TIMEOUT, the worker is replaced, the next call is answered', async () => {
  const pool = new ValidatorPool({ threads: 1, budgetMs: 300 });
  const compiled = compile({ type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } });
  const started = performance.now();
  const verdict = await validateArguments(compiled, { s: `${'a'.repeat(40)}!` }, { pool });
  assert.equal(verdict.code, 'VALIDATION_TIMEOUT');
  assert.match(verdict.message, /within 300 ms/);
  assert.ok(performance.now() - started < 30_000, 'answered (the budget, not the regex, decided)');
  assert.equal(pool.stats.timedOut, 1);
  assert.deepEqual(await validateArguments(compiled, { s: 'aaa' }, { pool }), { ok: true });
  assert.equal(pool.stats.started, 2, 'a fresh worker took over');
  pool.endIdle();
});

test('the pool queue is bounded (VALIDATION_BUSY) and an abandoned call leaves the queue (RUN_ENDED)', async () => {
  const pool = new ValidatorPool({ threads: 1, budgetMs: 2000, maxQueued: 2 });
  const slow = compile({ type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } });
  const stuck = validateArguments(slow, { s: `${'a'.repeat(40)}!` }, { pool });
  const controller = new AbortController();
  const queued = [validateArguments(slow, { s: 'a' }, { pool, signal: controller.signal }), validateArguments(slow, { s: 'a' }, { pool })];
  const busy = await validateArguments(slow, { s: 'a' }, { pool });
  assert.equal(busy.code, 'VALIDATION_BUSY');
  controller.abort();
  assert.equal((await queued[0]).code, 'RUN_ENDED');
  assert.equal((await stuck).code, 'VALIDATION_TIMEOUT');
  assert.deepEqual(await queued[1], { ok: true });
  pool.endIdle();
});

test('abandoning a call that a worker is running terminates that worker at once (RUN_ENDED)', async () => {
  const pool = new ValidatorPool({ threads: 1, budgetMs: 60_000 });
  const slow = compile({ type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } });
  const controller = new AbortController();
  const running = validateArguments(slow, { s: `${'a'.repeat(60)}!` }, { pool, signal: controller.signal });
  while (!pool.slots[0].ready) await new Promise((resolve) => setTimeout(resolve, 20));
  controller.abort();
  assert.equal((await running).code, 'RUN_ENDED');
  assert.equal(pool.liveWorkers(), 0, 'the stuck worker was terminated, not left to its 60 s budget');
  assert.deepEqual(await validateArguments(slow, { s: 'aa' }, { pool }), { ok: true });
  pool.endIdle();
});

test('a worker that runs out of heap fails its call with VALIDATION_FAILED and the pool recovers', async () => {
  const pool = new ValidatorPool({ threads: 1, budgetMs: 60_000, heapMb: 16 });
  const compiled = compile({ type: 'object', properties: { tags: { type: 'array', uniqueItems: true } } });
  // ~24 MB of small arrays: parsing it needs far more than a 16 MiB heap.
  const frameText = `{"version":"code-bridge-v1","type":"tool.call","id":1,"name":"t","arguments":{"tags":[${'[0],'.repeat(6_000_000)}[0]]}}`;
  const verdict = await validateArguments(compiled, {}, { pool, frameText });
  assert.equal(verdict.code, 'VALIDATION_FAILED');
  assert.equal(pool.stats.crashed, 1);
  assert.deepEqual(await validateArguments(compiled, { tags: [[0], [1]] }, { pool }), { ok: true });
  pool.endIdle();
});
