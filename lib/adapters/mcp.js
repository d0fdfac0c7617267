'use strict';

// `cordon/mcp`: Model Context Protocol both ways (`@modelcontextprotocol/sdk` 1.x).
// - toolsFromMcpClient(client): the tools of a connected MCP client as Code
//   Mode tools, so model-written code can call them through `tools[name]`;
//   every call still passes the Code Mode host's grant and schema checks.
//   A tool whose schema Code Mode cannot use (draft-04, an OpenAPI
//   `discriminator`, …) is left out and reported, the others imported.
// - createCodeModeMcpServer(codeMode): an MCP server whose one tool runs
//   `{code}` in the sandbox; addCodeModeTool(mcpServer, codeMode) adds that
//   tool to an McpServer of your own.

const { CordonError } = require('../errors');
const { defineTools } = require('../code-mode/tools');
const { requirePeer, runForModel, CODE_INPUT_SCHEMA, MODEL_OUTPUT_SCHEMA } = require('./peer');
const { sessionToolSpecs } = require('./session-tools');

const SDK = '@modelcontextprotocol/sdk';
/** listTools pages followed at most: a server cannot make us loop forever. */
const MAX_LIST_PAGES = 100;
const IMPORT_KEYS = new Set(['prefix', 'effect', 'filter', 'onSkipped']);
const SERVE_KEYS = new Set(['name', 'version', 'toolName', 'mode', 'onResult']);
const ADD_KEYS = new Set(['toolName', 'mode', 'onResult']);

function invalid(message) {
  return new CordonError('ERR_CORDON_INVALID_OPTIONS', message);
}

function checkKeys(options, known, what) {
  for (const key of Object.keys(options)) {
    if (!known.has(key)) throw invalid(`unknown ${what} option "${key}"; known: ${[...known].join(', ')}`);
  }
}

/** MCP `annotations.readOnlyHint: true` → "read" (granted in inspect mode); else "write". */
function defaultEffect(mcpTool) {
  return mcpTool.annotations?.readOnlyHint === true ? 'read' : 'write';
}

/** Text that is a JSON document becomes its value; any other text stays a string. */
function parseJsonText(text) {
  const trimmed = text.trim();
  if (!/^[[{"]|^-?\d|^(true|false|null)$/.test(trimmed)) return text;
  try {
    return JSON.parse(trimmed);
  } catch {
    return text;
  }
}

/**
 * A call result as the code sees it: `structuredContent` when the server sent
 * it (MCP requires it with an outputSchema), else the text — parsed when it is
 * JSON, as most servers send their data — else the content list.
 */
function callValue(result) {
  if (result.structuredContent !== undefined) return result.structuredContent;
  const content = Array.isArray(result.content) ? result.content : [];
  if (content.every((item) => item.type === 'text')) return parseJsonText(content.map((item) => item.text).join(''));
  return content;
}

function errorText(result) {
  const content = Array.isArray(result.content) ? result.content : [];
  const text = content.filter((item) => item.type === 'text').map((item) => item.text).join(' ');
  return text || 'the MCP tool reported an error';
}

async function listAllTools(client) {
  const tools = [];
  let cursor;
  for (let page = 0; page < MAX_LIST_PAGES; page += 1) {
    const answer = await client.listTools(cursor === undefined ? {} : { cursor });
    tools.push(...answer.tools);
    cursor = answer.nextCursor;
    if (cursor === undefined) return tools;
  }
  throw new CordonError('ERR_CORDON_MCP', `the MCP server returned more than ${MAX_LIST_PAGES} pages of tools`);
}

/**
 * @param {import('@modelcontextprotocol/sdk/client/index.js').Client} client a connected client
 * @param {{prefix?: string, effect?: (tool: object) => string, filter?: (tool: object) => boolean,
 *          onSkipped?: (skipped: {name: string, code: string, reason: string}) => void}} [options]
 * @returns {Promise<import('../../index').CodeModeTool[]>} with `.skipped`: the tools left out, and why
 */
async function toolsFromMcpClient(client, options = {}) {
  checkKeys(options, IMPORT_KEYS, 'toolsFromMcpClient');
  if (client === null || typeof client?.listTools !== 'function' || typeof client.callTool !== 'function') {
    throw invalid('toolsFromMcpClient(client): pass a connected @modelcontextprotocol/sdk Client');
  }
  if (options.onSkipped !== undefined && typeof options.onSkipped !== 'function') throw invalid('onSkipped must be a function');
  const prefix = options.prefix ?? '';
  const effectOf = options.effect ?? defaultEffect;
  const keep = options.filter ?? (() => true);
  const listed = (await listAllTools(client)).filter(keep);
  const tools = [];
  const skipped = [];
  for (const mcpTool of listed) {
    const codeModeTool = asCodeModeTool(client, mcpTool, `${prefix}${mcpTool.name}`, effectOf(mcpTool));
    const problem = unusable(codeModeTool);
    if (problem === null) {
      tools.push(codeModeTool);
      continue;
    }
    const report = Object.freeze({ name: codeModeTool.name, code: problem.code, reason: problem.message });
    skipped.push(report);
    options.onSkipped?.(report);
  }
  // The array createCodeMode takes, with what was left out beside it.
  Object.defineProperty(tools, 'skipped', { value: Object.freeze(skipped), enumerable: false });
  return tools;
}

/** Why Code Mode cannot take `tool` (its createCodeMode error), or null. Checked as createCodeMode will, with strict schemas. */
function unusable(tool) {
  try {
    defineTools([tool]);
    return null;
  } catch (error) {
    if (typeof error?.code !== 'string' || !error.code.startsWith('ERR_CORDON_')) throw error;
    return error;
  }
}

function asCodeModeTool(client, mcpTool, name, effect) {
  return {
    name,
    description: mcpTool.description ?? mcpTool.title ?? mcpTool.name,
    inputSchema: mcpTool.inputSchema ?? { type: 'object' },
    // Declared to the model as the call's return type and checked by the host on every result.
    ...(mcpTool.outputSchema ? { outputSchema: mcpTool.outputSchema } : {}),
    effect,
    async handler(args, ctx) {
      const result = await client.callTool({ name: mcpTool.name, arguments: args }, undefined, { signal: ctx.signal });
      if (result.isError) throw new Error(errorText(result));
      return callValue(result);
    },
  };
}

/**
 * @param {import('../../index').CodeMode} codeMode
 * @param {{name?: string, version?: string, toolName?: string, mode?: 'execute'|'inspect',
 *          onResult?: (run: object) => void}} [options]
 * @returns {import('@modelcontextprotocol/sdk/server/index.js').Server} connect it to a transport
 */
function createCodeModeMcpServer(codeMode, options = {}) {
  checkKeys(options, SERVE_KEYS, 'createCodeModeMcpServer');
  if (codeMode === null || typeof codeMode?.run !== 'function') throw invalid('createCodeModeMcpServer(codeMode): pass the object createCodeMode() returned');
  const { Server } = requirePeer(`${SDK}/server/index.js`, SDK);
  const { ListToolsRequestSchema, CallToolRequestSchema } = requirePeer(`${SDK}/types.js`, SDK);
  const mode = options.mode ?? 'execute';
  const toolName = options.toolName ?? 'run_code';
  const server = new Server(
    { name: options.name ?? 'cordon-code-mode', version: options.version ?? '0.1.0' },
    { capabilities: { tools: {} } },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [{ name: toolName, description: codeMode.description({ mode }), inputSchema: CODE_INPUT_SCHEMA, outputSchema: MODEL_OUTPUT_SCHEMA }],
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name, arguments: args } = request.params;
    if (name !== toolName) return { isError: true, content: [{ type: 'text', text: `unknown tool ${name}` }] };
    if (typeof args?.code !== 'string') return { isError: true, content: [{ type: 'text', text: 'arguments.code must be a string' }] };
    return answerCall(codeMode, args.code, { mode, signal: extra?.signal, onResult: options.onResult });
  });
  return server;
}

/** One call of the code tool, as an MCP CallTool result (structured output: modelOutput). */
async function answerCall(codeMode, code, { mode, signal, onResult }) {
  const output = await runForModel(codeMode, code, { mode, signal }, onResult);
  return { isError: !output.ok, structuredContent: output, content: [{ type: 'text', text: JSON.stringify(output) }] };
}

/**
 * Adds the code tool to an McpServer of your own (`@modelcontextprotocol/sdk/server/mcp.js`),
 * beside its other tools. Its schemas are zod (what McpServer.registerTool takes; zod is a
 * dependency of the MCP SDK).
 * @param {import('@modelcontextprotocol/sdk/server/mcp.js').McpServer} mcpServer
 * @param {import('../../index').CodeMode} codeMode
 * @param {{toolName?: string, mode?: 'execute'|'inspect', onResult?: (run: object) => void}} [options]
 * @returns the McpServer's RegisteredTool
 */
function addCodeModeTool(mcpServer, codeMode, options = {}) {
  checkKeys(options, ADD_KEYS, 'addCodeModeTool');
  if (mcpServer === null || typeof mcpServer?.registerTool !== 'function') throw invalid('addCodeModeTool(mcpServer, …): pass an McpServer from @modelcontextprotocol/sdk/server/mcp.js');
  if (codeMode === null || typeof codeMode?.run !== 'function') throw invalid('addCodeModeTool(…, codeMode): pass the object createCodeMode() returned');
  const { z } = requirePeer('zod', 'zod');
  const mode = options.mode ?? 'execute';
  const error = z.object({ kind: z.string(), code: z.string().optional(), message: z.string() });
  return mcpServer.registerTool(options.toolName ?? 'run_code', {
    description: codeMode.description({ mode }),
    inputSchema: { code: z.string().describe(CODE_INPUT_SCHEMA.properties.code.description) },
    outputSchema: { ok: z.boolean(), result: z.unknown().optional(), error: error.optional(), logs: z.array(z.string()).optional() },
  }, ({ code }, extra) => answerCall(codeMode, code, { mode, signal: extra?.signal, onResult: options.onResult }));
}

/**
 * A session (sessions.acquire()) as an MCP server with the tools `bash`,
 * `readFile` and `writeFile` (docs/sessions.md); connect it to a transport.
 * @param {import('../../index').Session} session
 * @param {{name?: string, version?: string, timeoutMs?: number, maxReadBytes?: number, onResult?: Function}} [options]
 */
function createSessionMcpServer(session, options = {}) {
  const { name, version, ...toolOptions } = options;
  const specs = sessionToolSpecs(session, toolOptions);
  const { Server } = requirePeer(`${SDK}/server/index.js`, SDK);
  const { ListToolsRequestSchema, CallToolRequestSchema } = requirePeer(`${SDK}/types.js`, SDK);
  const server = new Server({ name: name ?? 'cordon-session', version: version ?? '0.1.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: specs.map((spec) => ({ name: spec.name, description: spec.description, inputSchema: spec.inputSchema })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const spec = specs.find((s) => s.name === request.params.name);
    if (spec === undefined) return { isError: true, content: [{ type: 'text', text: `unknown tool ${request.params.name}` }] };
    const args = request.params.arguments ?? {};
    const missing = spec.inputSchema.required.find((key) => typeof args[key] !== 'string');
    if (missing !== undefined) return { isError: true, content: [{ type: 'text', text: `arguments.${missing} must be a string` }] };
    const output = await spec.run(args);
    return { isError: output.ok === false, structuredContent: output, content: [{ type: 'text', text: JSON.stringify(output) }] };
  });
  return server;
}

module.exports = { toolsFromMcpClient, createCodeModeMcpServer, addCodeModeTool, createSessionMcpServer };
