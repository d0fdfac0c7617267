'use strict';

// The cost of validating one tool call's arguments, before and after
// validation moved off the event loop (docs/code-mode.md):
//   sync ajv        — the old path: ajv on the main thread, whatever the schema
//   fast path       — validateArguments on the main thread (linear schema, small frame)
//   pool            — validateArguments through a validator thread (schema with `pattern`)
//   pool ×8         — 8 calls validated at once through the pool (one run's concurrent fan-out)
// Per-call wall time in µs, median/p90/p99 over N calls (after a warm-up).
// Usage: node bench/validation.js [calls=2000]

const Ajv = require('ajv').default;
const addFormats = require('ajv-formats');
const { defineTools } = require('../lib/code-mode/tools');
const { validateArguments } = require('../lib/code-mode/validation');
const { sharedPool } = require('../lib/code-mode/validator-pool');
const { renderTable, sectionRows } = require('./stats');

const CALLS = Number(process.argv[2] ?? 2000);
const ARGS = { id: 'A-123', customer: 'ada', status: 'open', limit: 20 };
const FRAME_TEXT = JSON.stringify({ version: 'code-bridge-v1', type: 'tool.call', id: 1, name: 't', arguments: ARGS });
const LINEAR = { type: 'object', properties: { id: { type: 'string' }, customer: { type: 'string' }, status: { enum: ['open', 'shipped'] }, limit: { type: 'integer' } }, required: ['id'] };
const WITH_PATTERN = { ...LINEAR, properties: { ...LINEAR.properties, id: { type: 'string', pattern: '^A-[0-9]+$' } } };

const tool = (inputSchema) => defineTools([{ name: 't', description: 'd', effect: 'read', handler: () => null, inputSchema }]).get('t');

async function sample(fn, calls) {
  for (let i = 0; i < Math.min(200, calls); i += 1) await fn(); // warm-up: JIT, worker start, schema compile
  const out = [];
  for (let i = 0; i < calls; i += 1) {
    const start = process.hrtime.bigint();
    await fn();
    out.push(Number(process.hrtime.bigint() - start) / 1000);
  }
  return out;
}

async function main() {
  const ajv = new Ajv({ strict: false });
  addFormats(ajv);
  const syncValidate = ajv.compile(WITH_PATTERN);
  const linear = tool(LINEAR);
  const patterned = tool(WITH_PATTERN);
  const contestants = [
    ['sync ajv (before)', await sample(() => { if (!syncValidate(ARGS)) throw new Error('invalid'); }, CALLS)],
    ['fast path (main thread)', await sample(async () => { if (!(await validateArguments(linear, ARGS, { frameText: FRAME_TEXT })).ok) throw new Error('invalid'); }, CALLS)],
    ['pool (validator thread)', await sample(async () => { if (!(await validateArguments(patterned, ARGS, { frameText: FRAME_TEXT })).ok) throw new Error('invalid'); }, CALLS)],
    ['pool, 8 at once (per call)', (await sample(async () => {
      const verdicts = await Promise.all(Array.from({ length: 8 }, () => validateArguments(patterned, ARGS, { frameText: FRAME_TEXT })));
      if (!verdicts.every((v) => v.ok)) throw new Error('invalid');
    }, Math.ceil(CALLS / 8))).map((us) => us / 8)],
  ];
  console.log(renderTable(sectionRows('validation per call', 'µs', contestants)));
  sharedPool().endIdle();
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
