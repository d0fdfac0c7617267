'use strict';

// Sessions through the adapters: the AI SDK tools `bash`, `readFile`,
// `writeFile` (cordon/ai) driven by the SDK's mock model, and the same tools
// over MCP (cordon/mcp), against a real session.

const test = require('node:test');
const assert = require('node:assert/strict');
const { generateText, stepCountIs } = require('ai');
const { MockLanguageModelV3 } = require('ai/test');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { InMemoryTransport } = require('@modelcontextprotocol/sdk/inMemory.js');
const { sessionTools } = require('../lib/adapters/ai');
const { createSessionMcpServer } = require('../lib/adapters/mcp');
const { sessionsSkipReason, managerFor, scope } = require('./sessions-support');

const skip = sessionsSkipReason();
const usage = { inputTokens: { total: 1 }, outputTokens: { total: 1 } };

/** A model that makes the given tool calls, one per step, then says "done". */
function scriptedModel(calls) {
  let step = 0;
  return new MockLanguageModelV3({
    doGenerate: async () => {
      const call = calls[step];
      step += 1;
      const content = call === undefined
        ? [{ type: 'text', text: 'done' }]
        : [{ type: 'tool-call', toolCallId: `call-${step}`, toolName: call[0], input: JSON.stringify(call[1]) }];
      return { content, finishReason: { unified: call === undefined ? 'stop' : 'tool-calls', raw: undefined }, usage, warnings: [] };
    },
  });
}

test('an AI SDK agent turn writes, runs and reads in a real session through the bash, writeFile and readFile tools', { skip }, async (t) => {
  const { manager } = managerFor(t);
  const session = await manager.acquire(scope('ai'), 'alice');
  const result = await generateText({
    model: scriptedModel([
      ['writeFile', { path: 'hello.py', content: 'print("hi from python")\n' }],
      ['bash', { command: 'python3 hello.py > out.txt; echo written; exit 4' }],
      ['readFile', { path: 'out.txt' }],
      ['readFile', { path: '../etc/passwd' }],
    ]),
    tools: sessionTools(session, { timeoutMs: 10_000 }),
    stopWhen: stepCountIs(6),
    prompt: 'say hi in python',
  });
  const outputs = result.steps.flatMap((step) => step.toolResults).map((r) => r.output);
  assert.deepEqual(outputs[0], { ok: true, bytes: 24 });
  assert.deepEqual(outputs[1], { ok: true, exitCode: 4, signal: null, stdout: 'written\n', stderr: '', truncated: false, timedOut: false });
  assert.deepEqual(outputs[2], { ok: true, content: 'hi from python\n', bytes: 15 });
  assert.equal(outputs[3].ok, false);
  assert.equal(outputs[3].error.code, 'ERR_CORDON_SESSION_PATH_REFUSED');
  assert.equal(result.text, 'done');
});

test('the session tools over MCP: listed with schemas, called by a client, errors returned as isError', { skip }, async (t) => {
  const { manager } = managerFor(t);
  const session = await manager.acquire(scope('mcp'), 'alice');
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'test-client', version: '1.0.0' });
  await Promise.all([createSessionMcpServer(session).connect(serverSide), client.connect(clientSide)]);
  t.after(() => client.close());
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((tool) => [tool.name, tool.inputSchema.required]), [['bash', ['command']], ['readFile', ['path']], ['writeFile', ['path', 'content']]]);
  const wrote = await client.callTool({ name: 'writeFile', arguments: { path: 'n.txt', content: 'note' } });
  assert.deepEqual(wrote.structuredContent, { ok: true, bytes: 4 });
  const ran = await client.callTool({ name: 'bash', arguments: { command: 'cat n.txt; echo -n " more" >> n.txt' } });
  assert.equal(ran.structuredContent.stdout, 'note');
  const read = await client.callTool({ name: 'readFile', arguments: { path: 'n.txt' } });
  assert.equal(read.structuredContent.content, 'note more');
  const refused = await client.callTool({ name: 'readFile', arguments: { path: '/etc/passwd' } });
  assert.equal(refused.isError, true);
  assert.equal(refused.structuredContent.error.code, 'ERR_CORDON_SESSION_PATH_REFUSED');
  const bad = await client.callTool({ name: 'bash', arguments: {} });
  assert.equal(bad.isError, true);
});

test('session tool options are checked with coded errors', () => {
  assert.throws(() => sessionTools({}), { code: 'ERR_CORDON_INVALID_OPTIONS' });
  assert.throws(() => sessionTools({ exec() {}, readFile() {} }, { colour: 1 }), { code: 'ERR_CORDON_INVALID_OPTIONS' });
});
