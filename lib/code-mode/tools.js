'use strict';

// The provider's tool catalogue: validated once, compiled once, frozen. A run
// never sees this catalogue directly — it sees only the tools its mode grants
// (`grantTools`), and every incoming call is checked against that grant again.

const { CordonError } = require('../errors');
const { deepFreeze } = require('../deep-freeze');
const { toJsonSchema, SchemaSourceError } = require('./schema-source');
const { createCompiler, draftOf } = require('./schema-compiler');
const { standardParser } = require('./standard-parse');
const { prepareValidation } = require('./validation');

/** The runner's catalogue ceiling (code-bridge-v1 §4). */
const MAX_TOOLS = 512;
/** Tool names are 1–256 UTF-8 bytes on the wire (§4). */
const MAX_TOOL_NAME_BYTES = 256;
/** Descriptions go into the model's prompt; past this they are a prompt, not a description. */
const MAX_DESCRIPTION_BYTES = 8 * 1024;
const EFFECT_PATTERN = /^[a-z][a-z0-9_-]{0,31}$/;
const TOOL_KEYS = new Set(['name', 'description', 'inputSchema', 'outputSchema', 'effect', 'handler', 'project']);
/** Modes and the effects they grant; `null` grants every effect. */
const MODE_EFFECTS = Object.freeze({ execute: null, inspect: new Set(['read']) });

function invalidTool(index, message, name) {
  const label = typeof name === 'string' ? `tools[${index}] ("${name}")` : `tools[${index}]`;
  return new CordonError('ERR_CORDON_INVALID_TOOL', `${label}: ${message}`, { details: { index, name } });
}

function checkName(tool, index, seen) {
  const { name } = tool;
  if (typeof name !== 'string') throw invalidTool(index, 'name must be a string');
  const bytes = Buffer.byteLength(name, 'utf8');
  if (bytes < 1 || bytes > MAX_TOOL_NAME_BYTES) throw invalidTool(index, `name must be 1–${MAX_TOOL_NAME_BYTES} UTF-8 bytes, got ${bytes}`, name);
  if (name.includes('\0')) throw invalidTool(index, 'name must not contain NUL', name);
  if (seen.has(name)) throw invalidTool(index, 'duplicate tool name', name);
  seen.add(name);
}

function checkShape(tool, index) {
  const { name } = tool;
  for (const key of Object.keys(tool)) {
    if (!TOOL_KEYS.has(key)) throw invalidTool(index, `unknown key "${key}"; known keys: ${[...TOOL_KEYS].join(', ')}`, name);
  }
  const bytes = typeof tool.description === 'string' ? Buffer.byteLength(tool.description, 'utf8') : 0;
  if (bytes < 1 || bytes > MAX_DESCRIPTION_BYTES) {
    throw invalidTool(index, `description must be a non-empty string of at most ${MAX_DESCRIPTION_BYTES} bytes`, name);
  }
  if (typeof tool.effect !== 'string' || !EFFECT_PATTERN.test(tool.effect)) {
    throw invalidTool(index, 'effect must be a short lowercase word such as "read" or "write"', name);
  }
  if (typeof tool.handler !== 'function') throw invalidTool(index, 'handler must be a function (args, ctx) => result', name);
  if (tool.project !== undefined && typeof tool.project !== 'function') throw invalidTool(index, 'project must be a function (result) => json', name);
}

/**
 * A provider's schema (JSON Schema, Standard Schema, AI SDK schema) as a plain
 * JSON Schema, its draft, and Ajv's compiled check; refused with
 * ERR_CORDON_INVALID_TOOL when it is none of these or Ajv refuses it.
 */
function compileSchema(compiler, value, index, name, key) {
  let converted;
  try {
    converted = toJsonSchema(value);
  } catch (error) {
    if (!(error instanceof SchemaSourceError)) throw error;
    throw invalidTool(index, `${key} ${error.message}`, name);
  }
  // A private copy: later mutation of the caller's object changes nothing.
  const schema = structuredClone(converted.schema);
  try {
    const draft = draftOf(schema);
    return { schema, draft, validate: compiler.compile(schema, draft), source: converted.source };
  } catch (error) {
    throw new CordonError('ERR_CORDON_INVALID_TOOL', `tools[${index}] ("${name}"): ${key} is not a valid JSON Schema: ${error.message}`, {
      cause: error,
      details: { index, name },
    });
  }
}

function buildTool(compiler, strict, tool, index) {
  const { name } = tool;
  const input = compileSchema(compiler, tool.inputSchema, index, name, 'inputSchema');
  if (input.schema.type !== 'object') {
    throw invalidTool(index, 'inputSchema must describe an object ({type: "object", …}): tool arguments are always an object', name);
  }
  const output = tool.outputSchema === undefined ? null : compileSchema(compiler, tool.outputSchema, index, name, 'outputSchema');
  return Object.freeze({
    name,
    description: tool.description,
    effect: tool.effect,
    inputSchema: deepFreeze(input.schema),
    outputSchema: output === null ? undefined : deepFreeze(output.schema),
    handler: tool.handler,
    project: tool.project,
    input: prepareValidation({ ...input, strict }),
    // A Standard Schema (zod, valibot, …) also parses what passed: the handler gets its output.
    parse: standardParser(tool.inputSchema),
    output: output === null ? null : prepareValidation({ ...output, strict }),
  });
}

/**
 * Validate and freeze the provider's tools. Schemas are converted to plain
 * JSON Schema (schema-source.js) and copied, so later mutation of the
 * caller's objects changes nothing.
 * @param {unknown} tools
 * @param {{strictSchemas?: boolean}} [options] strictSchemas (default true): unknown
 *   keywords and formats are refused rather than ignored
 * @returns {ReadonlyMap<string, object>} name → frozen tool, in catalogue order
 */
function defineTools(tools, { strictSchemas = true } = {}) {
  if (typeof strictSchemas !== 'boolean') throw new CordonError('ERR_CORDON_INVALID_OPTIONS', 'strictSchemas must be a boolean');
  if (!Array.isArray(tools)) throw new CordonError('ERR_CORDON_INVALID_TOOL', 'tools must be an array of tool definitions');
  if (tools.length > MAX_TOOLS) throw new CordonError('ERR_CORDON_INVALID_TOOL', `at most ${MAX_TOOLS} tools, got ${tools.length}`);
  const compiler = createCompiler({ strict: strictSchemas });
  const seen = new Set();
  const catalogue = new Map();
  tools.forEach((tool, index) => {
    if (tool === null || typeof tool !== 'object' || Array.isArray(tool)) throw invalidTool(index, 'must be an object');
    checkName(tool, index, seen);
    checkShape(tool, index);
    catalogue.set(tool.name, buildTool(compiler, strictSchemas, tool, index));
  });
  return catalogue;
}

/** Check a run's mode; `execute` (the default) grants everything, `inspect` only read tools. */
function resolveMode(mode) {
  const resolved = mode === undefined ? 'execute' : mode;
  if (!Object.prototype.hasOwnProperty.call(MODE_EFFECTS, resolved)) {
    throw new CordonError('ERR_CORDON_INVALID_OPTIONS', `mode must be "execute" or "inspect", got ${JSON.stringify(mode)}`);
  }
  return resolved;
}

/** The tools a mode grants, in catalogue order. */
function grantTools(catalogue, mode) {
  const effects = MODE_EFFECTS[resolveMode(mode)];
  const granted = new Map();
  for (const [name, tool] of catalogue) {
    if (effects === null || effects.has(tool.effect)) granted.set(name, tool);
  }
  return granted;
}

/**
 * The identity on a tool definition: it exists for TypeScript, where it types the
 * handler's `args` from the schema (index.d.ts). createCodeMode does the checking.
 */
function defineTool(tool) {
  return tool;
}

module.exports = { defineTool, defineTools, grantTools, resolveMode, MAX_TOOLS, MAX_TOOL_NAME_BYTES };
