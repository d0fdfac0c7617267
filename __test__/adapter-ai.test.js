'use strict';

// cordon/ai: a Code Mode instance as a Vercel AI SDK tool — the real `ai`
// package's tool() and jsonSchema(), the tool's own execute(), the real sandbox.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { asSchema, generateText, stepCountIs } = require('ai');
const { MockLanguageModelV3 } = require('ai/test');
const { createCodeMode } = require('..');
const { codeModeTool } = require('../lib/adapters/ai');

const tools = [
  {
    name: 'math.double', description: 'Double a number', effect: 'read',
    inputSchema: { type: 'object', properties: { value: { type: 'number' } }, required: ['value'], additionalProperties: false },
    handler: ({ value }) => ({ value: value * 2 }),
  },
  {
    name: 'notes.write', description: 'Write a note', effect: 'write',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    handler: ({ text }) => ({ saved: text.length }),
  },
];

test('the AI SDK tool runs the code in the sandbox and returns {ok, result}', async () => {
  const seen = [];
  const aiTool = codeModeTool(createCodeMode({ tools }), { onResult: (run) => seen.push(run) });
  const output = await aiTool.execute(
    { code: "const a = await tools['math.double']({ value: 21 }); return a.value;" },
    { toolCallId: 'call-1', messages: [] },
  );
  assert.deepEqual(output, { ok: true, result: 42 });
  assert.equal(seen.length, 1);
  assert.equal(seen[0].receipt.backend.name, 'bubblewrap', 'the run left a sandbox receipt');
  assert.equal(seen[0].events[0].parentId, 'call-1', 'the tool call id is the execution parent');
});

test('the model gets the program\'s console output with the result, and a marker when it was cut at logBytes', async () => {
  const aiTool = codeModeTool(createCodeMode({ tools, limits: { logBytes: 12 } }));
  const output = await aiTool.execute(
    { code: "console.log('a', 1); console.error('oops'); console.log('0123456789'); console.log('gone'); return 2;" },
    { toolCallId: 'call-2', messages: [] },
  );
  assert.deepEqual(output, { ok: true, result: 2, logs: ['a 1', '[error] oops', '01234', '[console output truncated at 12 bytes; 1 more line not shown]'] });
  const failed = await aiTool.execute({ code: "console.log('before'); throw new Error('x');" }, { toolCallId: 'call-3', messages: [] });
  assert.deepEqual([failed.ok, failed.logs], [false, ['before']]);
});

test('the tool input is the JSON Schema {code} and the description lists the granted tools', async () => {
  const aiTool = codeModeTool(createCodeMode({ tools }), { mode: 'inspect' });
  const schema = await asSchema(aiTool.inputSchema).jsonSchema;
  assert.deepEqual(schema.required, ['code']);
  assert.equal(schema.properties.code.type, 'string');
  assert.match(aiTool.description, /math\.double/);
  assert.doesNotMatch(aiTool.description, /notes\.write/, 'inspect mode does not describe write tools');
  assert.equal(schema.additionalProperties, false);
});

test('a failing program comes back as {ok:false, error} with its kind, and inspect mode withholds write tools', async () => {
  const aiTool = codeModeTool(createCodeMode({ tools }), { mode: 'inspect' });
  const output = await aiTool.execute({ code: "return await tools['notes.write']({ text: 'x' });" }, { toolCallId: 't', messages: [] });
  assert.equal(output.ok, false);
  assert.equal(output.error.kind, 'javascript');
  assert.match(output.error.message, /tools\["notes\.write"\] is not a granted tool \(granted: math\.double\)/);
  assert.equal('receipt' in output, false, 'the model does not get the receipt');
});

test('the AI SDK abort signal cancels the run', async () => {
  const aiTool = codeModeTool(createCodeMode({ tools, limits: { timeoutMs: 20000 } }));
  const controller = new AbortController();
  const started = Date.now();
  const pending = aiTool.execute({ code: 'while (true) {}' }, { toolCallId: 'c', messages: [], abortSignal: controller.signal });
  setTimeout(() => controller.abort(), 300);
  const output = await pending;
  assert.equal(output.ok, false);
  assert.equal(output.error.kind, 'cancelled');
  assert.ok(Date.now() - started < 10000);
});

/** A scripted model (the AI SDK's own test model): one tool call, then text. */
function scriptedModel(code) {
  let turn = 0;
  const usage = { inputTokens: { total: 1 }, outputTokens: { total: 1 } };
  return new MockLanguageModelV3({
    doGenerate: async () => {
      turn += 1;
      const content = turn === 1
        ? [{ type: 'tool-call', toolCallId: 'call-7', toolName: 'code', input: JSON.stringify({ code }) }]
        : [{ type: 'text', text: 'done' }];
      return { content, finishReason: { unified: turn === 1 ? 'tool-calls' : 'stop', raw: undefined }, usage, warnings: [] };
    },
  });
}

test('generateText calls the tool with the model\'s code and hands the result back to the model', async () => {
  const code = "return (await tools['math.double']({ value: 4 })).value + 1;";
  const result = await generateText({
    model: scriptedModel(code),
    tools: { code: codeModeTool(createCodeMode({ tools })) },
    stopWhen: stepCountIs(3),
    prompt: 'compute',
  });
  const toolResults = result.steps.flatMap((step) => step.toolResults);
  assert.equal(toolResults.length, 1);
  assert.deepEqual(toolResults[0].output, { ok: true, result: 9 });
  assert.equal(result.text, 'done');
});

test('bad adapter options are coded errors', () => {
  assert.throws(() => codeModeTool({}), { code: 'ERR_CORDON_INVALID_OPTIONS' });
  assert.throws(() => codeModeTool(createCodeMode({ tools }), { nope: 1 }), { code: 'ERR_CORDON_INVALID_OPTIONS' });
});

test('the description option replaces the generated description; mode defaults to execute, where write tools run', async () => {
  const described = codeModeTool(createCodeMode({ tools }), { description: 'Run JavaScript against the notes API.' });
  assert.equal(described.description, 'Run JavaScript against the notes API.');
  const generated = codeModeTool(createCodeMode({ tools }));
  assert.match(generated.description, /notes\.write/, 'execute mode describes write tools');
  const output = await generated.execute({ code: "return await tools['notes.write']({ text: 'abc' });" }, { toolCallId: 'w', messages: [] });
  assert.deepEqual(output, { ok: true, result: { saved: 3 } });
});

test('a run refused by admission control reaches the model as {ok:false} "busy, retry", not an SDK error', async () => {
  let release;
  const held = new Promise((resolve) => { release = resolve; });
  const codeMode = createCodeMode({
    tools: [{ name: 'wait', description: 'waits', effect: 'read', inputSchema: { type: 'object' }, handler: () => held }],
    admission: { maxConcurrent: 1, maxQueued: 0 },
  });
  const aiTool = codeModeTool(codeMode);
  const busy = codeMode.run('return await tools.wait({})');
  while (codeMode.stats().active === 0) await new Promise((resolve) => setImmediate(resolve));
  const output = await aiTool.execute({ code: 'return 1' }, { toolCallId: 'call-busy', messages: [] });
  assert.equal(output.ok, false);
  assert.equal(output.error.kind, 'busy');
  assert.equal(output.error.code, 'ERR_CORDON_ADMISSION');
  assert.match(output.error.message, /^busy: .*retry/);
  release(1);
  assert.equal((await busy).result, 1);
});
