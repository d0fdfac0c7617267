'use strict';

// cordon/mcp both ways, over the real @modelcontextprotocol/sdk with its
// in-memory transport pair and the real sandbox.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { z } = require('zod');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { InMemoryTransport } = require('@modelcontextprotocol/sdk/inMemory.js');
const { createCodeMode } = require('..');
const { Server } = require('@modelcontextprotocol/sdk/server/index.js');
const { ListToolsRequestSchema, CallToolRequestSchema } = require('@modelcontextprotocol/sdk/types.js');
const { toolsFromMcpClient, createCodeModeMcpServer, addCodeModeTool } = require('../lib/adapters/mcp');

/** A real MCP server with a read tool (structured), a write tool (text) and a failing tool. */
function inventoryServer(calls) {
  const server = new McpServer({ name: 'inventory', version: '1.0.0' });
  server.registerTool('stock', {
    description: 'Units in stock for a sku',
    inputSchema: { sku: z.string() },
    outputSchema: { sku: z.string(), units: z.number() },
    annotations: { readOnlyHint: true },
  }, async ({ sku }) => {
    calls.push(['stock', sku]);
    const out = { sku, units: sku.length * 10 };
    return { structuredContent: out, content: [{ type: 'text', text: JSON.stringify(out) }] };
  });
  server.registerTool('reorder', {
    description: 'Reorder a sku',
    inputSchema: { sku: z.string(), units: z.number() },
  }, async ({ sku, units }) => {
    calls.push(['reorder', sku, units]);
    return { content: [{ type: 'text', text: `ordered ${units} of ${sku}` }] };
  });
  server.registerTool('report', {
    description: 'A JSON report sent as text only',
    inputSchema: {},
    annotations: { readOnlyHint: true },
  }, async () => ({ content: [{ type: 'text', text: '{"skus":["a","b"],"total":2}' }] }));
  server.registerTool('broken', { description: 'Always fails', inputSchema: {} }, async () => ({
    isError: true, content: [{ type: 'text', text: 'warehouse offline' }],
  }));
  return server;
}

async function connect(server) {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'test-client', version: '1.0.0' });
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
  return client;
}

test('the tools of a connected MCP client become Code Mode tools the sandboxed code can call', async (t) => {
  const calls = [];
  const client = await connect(inventoryServer(calls));
  t.after(() => client.close());
  const tools = await toolsFromMcpClient(client, { prefix: 'inv.' });
  assert.deepEqual(tools.map((tool) => [tool.name, tool.effect]), [['inv.stock', 'read'], ['inv.reorder', 'write'], ['inv.report', 'read'], ['inv.broken', 'write']]);
  const codeMode = createCodeMode({ tools });
  const run = await codeMode.run(`
    const s = await tools['inv.stock']({ sku: 'KB-1' });
    const r = await tools['inv.reorder']({ sku: s.sku, units: 100 - s.units });
    let failure = null;
    try { await tools['inv.broken']({}); } catch (e) { failure = e.message; }
    return { s, r, failure };
  `);
  assert.equal(run.ok, true, JSON.stringify(run.error));
  assert.deepEqual(run.result, { s: { sku: 'KB-1', units: 40 }, r: 'ordered 60 of KB-1', failure: 'tool failed: TOOL_FAILED: warehouse offline' });
  assert.deepEqual(calls, [['stock', 'KB-1'], ['reorder', 'KB-1', 60]]);
});

test('imported MCP tools keep the host checks: schema violations never reach the MCP server, inspect mode hides write tools', async (t) => {
  const calls = [];
  const client = await connect(inventoryServer(calls));
  t.after(() => client.close());
  const codeMode = createCodeMode({ tools: await toolsFromMcpClient(client) });
  const bad = await codeMode.run("try { await tools.stock({ sku: 42 }); } catch (e) { return e.message; } return 'called';");
  assert.equal(bad.ok, true);
  assert.match(bad.result, /tool failed/);
  const scoped = await codeMode.run('return Object.keys(tools);', { mode: 'inspect' });
  assert.deepEqual(scoped.result, ['stock', 'report']);
  assert.deepEqual(calls, []);
});

test('MCP text content that is JSON reaches the code as a value, other text as a string, and outputSchema types the call', async (t) => {
  const client = await connect(inventoryServer([]));
  t.after(() => client.close());
  const imported = await toolsFromMcpClient(client, { prefix: 'inv.' });
  const stock = imported.find((tool) => tool.name === 'inv.stock');
  assert.deepEqual(stock.outputSchema.required, ['sku', 'units'], 'the server\'s outputSchema is kept');
  const codeMode = createCodeMode({ tools: imported });
  assert.match(codeMode.declarations(), /"inv\.stock": \(args: \{[^]*\}\) => Promise<\{\s*sku: string;\s*units: number;\s*\}>/);
  const run = await codeMode.run(`
    const report = await tools['inv.report']();
    const done = await tools['inv.reorder']({ sku: 'ab', units: 3 });
    const s = await tools['inv.stock']({ sku: 'abc' });
    return { skus: report.skus, total: report.total, done, units: s.units };`);
  assert.deepEqual(run.result, { skus: ['a', 'b'], total: 2, done: 'ordered 3 of ab', units: 30 }, JSON.stringify(run.error));
});

test('the served Code Mode tool advertises an outputSchema, and its output (with the console lines) matches it', async (t) => {
  const codeMode = createCodeMode({ tools: [] });
  const client = await connect(createCodeModeMcpServer(codeMode));
  t.after(() => client.close());
  const { tools } = await client.listTools();
  assert.equal(tools[0].outputSchema.type, 'object');
  assert.deepEqual(tools[0].outputSchema.required, ['ok']);
  // The SDK client validates structuredContent against the advertised outputSchema.
  const out = await client.callTool({ name: 'run_code', arguments: { code: 'console.log("step", 1); console.warn("careful"); return 7;' } });
  assert.deepEqual(out.structuredContent, { ok: true, result: 7, logs: ['step 1', '[warn] careful'] });
  const undef = await client.callTool({ name: 'run_code', arguments: { code: 'const x = 1;' } });
  assert.equal(undef.isError, true);
  assert.match(undef.structuredContent.error.message, /return <value>/);
});

test('an MCP server serves a Code Mode tool: list it, call it with code, get structured output', async (t) => {
  const codeMode = createCodeMode({
    tools: [{
      name: 'math.square', description: 'Square a number', effect: 'read',
      inputSchema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
      handler: ({ n }) => n * n,
    }],
  });
  const runs = [];
  const client = await connect(createCodeModeMcpServer(codeMode, { toolName: 'code', onResult: (run) => runs.push(run) }));
  t.after(() => client.close());
  const { tools } = await client.listTools();
  assert.equal(tools.length, 1);
  assert.equal(tools[0].name, 'code');
  assert.deepEqual(tools[0].inputSchema.required, ['code']);
  assert.match(tools[0].description, /math\.square/);
  const ok = await client.callTool({ name: 'code', arguments: { code: "return await tools['math.square']({ n: 12 });" } });
  assert.equal(ok.isError, false);
  assert.deepEqual(ok.structuredContent, { ok: true, result: 144 });
  assert.deepEqual(JSON.parse(ok.content[0].text), { ok: true, result: 144 });
  assert.equal(runs[0].receipt.backend.name, 'bubblewrap');
  const failed = await client.callTool({ name: 'code', arguments: { code: 'throw new Error("boom")' } });
  assert.equal(failed.isError, true);
  assert.equal(failed.structuredContent.error.kind, 'javascript');
  const unknown = await client.callTool({ name: 'other', arguments: {} });
  assert.equal(unknown.isError, true);
});

test('bad adapter arguments are coded errors', async () => {
  await assert.rejects(toolsFromMcpClient({}), { code: 'ERR_CORDON_INVALID_OPTIONS' });
  assert.throws(() => createCodeModeMcpServer(createCodeMode({ tools: [] }), { port: 1 }), { code: 'ERR_CORDON_INVALID_OPTIONS' });
});

test('import options: filter drops tools before the sandbox sees them, effect overrides the readOnlyHint mapping', async (t) => {
  const calls = [];
  const client = await connect(inventoryServer(calls));
  t.after(() => client.close());
  const seen = [];
  const filtered = await toolsFromMcpClient(client, { filter: (tool) => { seen.push(tool.name); return tool.name !== 'reorder'; } });
  const all = (await toolsFromMcpClient(client)).map((tool) => tool.name);
  assert.ok(all.includes('reorder') && all.length >= 3, `${all}`);
  assert.deepEqual(seen, all, 'filter sees every listed MCP tool');
  const kept = all.filter((name) => name !== 'reorder');
  assert.deepEqual(filtered.map((tool) => tool.name), kept);
  const run = await createCodeMode({ tools: filtered }).run('return [Object.keys(tools), typeof tools.reorder];');
  assert.deepEqual(run.result, [kept, 'undefined']);
  // Every tool declared "read" by the effect option: all granted in inspect mode.
  const allRead = await toolsFromMcpClient(client, { effect: () => 'read' });
  assert.deepEqual(allRead.map((tool) => tool.effect), all.map(() => 'read'));
  const inspect = await createCodeMode({ tools: allRead }).run(
    "return [Object.keys(tools), await tools.reorder({ sku: 'A', units: 1 })];", { mode: 'inspect' });
  assert.deepEqual(inspect.result, [all, 'ordered 1 of A']);
  assert.deepEqual(calls, [['reorder', 'A', 1]]);
});

test('serve options: name and version identify the server, mode "inspect" withholds write tools from the served code', async (t) => {
  const writes = [];
  const codeMode = createCodeMode({
    tools: [
      { name: 'kv.get', description: 'Read a key', effect: 'read', inputSchema: { type: 'object' }, handler: () => 'value' },
      { name: 'kv.set', description: 'Write a key', effect: 'write', inputSchema: { type: 'object' }, handler: (args) => { writes.push(args); return 'ok'; } },
    ],
  });
  const client = await connect(createCodeModeMcpServer(codeMode, { name: 'kv-code', version: '2.3.4', mode: 'inspect' }));
  t.after(() => client.close());
  assert.deepEqual(client.getServerVersion(), { name: 'kv-code', version: '2.3.4' });
  const { tools } = await client.listTools();
  assert.equal(tools[0].name, 'run_code', 'the default tool name');
  assert.match(tools[0].description, /kv\.get/);
  assert.doesNotMatch(tools[0].description, /kv\.set/);
  const out = await client.callTool({ name: 'run_code', arguments: { code: "return [Object.keys(tools), typeof tools['kv.set']];" } });
  assert.deepEqual(out.structuredContent, { ok: true, result: [['kv.get'], 'undefined'] });
  assert.deepEqual(writes, []);
  const defaults = await connect(createCodeModeMcpServer(codeMode));
  t.after(() => defaults.close());
  assert.equal(defaults.getServerVersion().name, 'cordon-code-mode');
  const execute = await defaults.callTool({ name: 'run_code', arguments: { code: "return await tools['kv.set']({ k: 1 });" } });
  assert.deepEqual(execute.structuredContent, { ok: true, result: 'ok' }, 'the default mode is execute');
});

/** A low-level MCP server listing raw JSON Schemas: one usable, one draft-04, one with an OpenAPI discriminator. */
function thirdPartyServer() {
  const server = new Server({ name: 'third-party', version: '1.0.0' }, { capabilities: { tools: {} } });
  const tools = [
    { name: 'ping', description: 'ping', inputSchema: { type: 'object', properties: {} } },
    { name: 'legacy', description: 'draft-04', inputSchema: { $schema: 'http://json-schema.org/draft-04/schema#', type: 'object' } },
    {
      name: 'pets', description: 'OpenAPI',
      inputSchema: { type: 'object', properties: { pet: { type: 'object', discriminator: { propertyName: 'kind' } } } },
    },
  ];
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async () => ({ content: [{ type: 'text', text: '"pong"' }] }));
  return server;
}

test('an MCP import skips the tools whose schema Code Mode cannot use, reports them, and imports the rest', async (t) => {
  const client = await connect(thirdPartyServer());
  t.after(() => client.close());
  const reported = [];
  const imported = await toolsFromMcpClient(client, { onSkipped: (skipped) => reported.push(skipped.name) });
  assert.deepEqual(imported.map((tool) => tool.name), ['ping']);
  assert.deepEqual(imported.skipped.map((s) => s.name), ['legacy', 'pets']);
  assert.deepEqual(reported, ['legacy', 'pets']);
  assert.match(imported.skipped[0].reason, /draft-04/);
  assert.match(imported.skipped[1].reason, /discriminator/);
  assert.ok(imported.skipped.every((s) => s.code.startsWith('ERR_CORDON_')));
  const run = await createCodeMode({ tools: imported }).run('return await tools.ping({})');
  assert.equal(run.result, 'pong');
});

test('the code tool can be added to an existing McpServer beside its own tools', async (t) => {
  const server = new McpServer({ name: 'mine', version: '1.0.0' });
  server.registerTool('hello', { description: 'hello', inputSchema: {} }, async () => ({ content: [{ type: 'text', text: 'hi' }] }));
  addCodeModeTool(server, createCodeMode({ tools: [] }), { toolName: 'run_code' });
  const client = await connect(server);
  t.after(() => client.close());
  const { tools: listed } = await client.listTools();
  assert.deepEqual(listed.map((tool) => tool.name).sort(), ['hello', 'run_code']);
  const answer = await client.callTool({ name: 'run_code', arguments: { code: 'return 6 * 7' } });
  assert.deepEqual(answer.structuredContent, { ok: true, result: 42 });
  assert.equal(answer.isError, false);
});
