'use strict';

// TypeScript declarations of the granted `tools` object, generated from the
// tools' JSON Schemas, for the model's prompt. The output must compile under
// `tsc --strict` (a test checks it), so everything the translator does not
// understand ($ref, not, if/then) becomes `unknown` rather than a guess, and
// every name and description is escaped so a schema cannot break out of the
// declaration it sits in.

/** Deeper schemas are summarised as `unknown`: the prompt is for reading, not for proofs. */
const MAX_SCHEMA_DEPTH = 12;
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** A JSDoc comment body that cannot close the comment early. */
function docText(text) {
  return String(text).replace(/\*\//g, '*\u2215').replace(/\r?\n/g, ' ').slice(0, 2000);
}

function propertyName(name) {
  return IDENTIFIER.test(name) ? name : JSON.stringify(name);
}

function literal(value) {
  if (value === null || typeof value === 'boolean') return String(value);
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'number';
  if (typeof value === 'string') return JSON.stringify(value);
  return 'unknown';
}

function union(types) {
  const unique = [...new Set(types)];
  if (unique.includes('unknown')) return 'unknown';
  // Parenthesize only what could bind differently inside a union (functions, intersections, unions).
  const member = (t) => (/[|&]|=>/.test(t) && !t.startsWith('{') ? `(${t})` : t);
  return unique.length === 1 ? unique[0] : unique.map(member).join(' | ');
}

function objectType(schema, depth, indent) {
  const props = schema.properties && typeof schema.properties === 'object' ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const pad = '  '.repeat(indent + 1);
  const lines = [];
  for (const [name, sub] of Object.entries(props)) {
    if (sub && typeof sub === 'object' && typeof sub.description === 'string') lines.push(`${pad}/** ${docText(sub.description)} */`);
    lines.push(`${pad}${propertyName(name)}${required.has(name) ? '' : '?'}: ${schemaType(sub, depth + 1, indent + 1)};`);
  }
  const extra = schema.additionalProperties;
  if (extra !== undefined && extra !== false) {
    // An index signature must admit every named property's type, so it is `unknown` unless there are none.
    const valueType = extra === true || lines.length > 0 ? 'unknown' : schemaType(extra, depth + 1, indent + 1);
    lines.push(`${pad}[key: string]: ${valueType};`);
  }
  if (lines.length === 0) return extra === false ? 'Record<string, never>' : '{ [key: string]: unknown }';
  return `{\n${lines.join('\n')}\n${'  '.repeat(indent)}}`;
}

function typeForName(type, schema, depth, indent) {
  switch (type) {
    case 'string': return 'string';
    case 'number': case 'integer': return 'number';
    case 'boolean': return 'boolean';
    case 'null': return 'null';
    case 'array': {
      if (Array.isArray(schema.prefixItems)) return `[${schema.prefixItems.map((s) => schemaType(s, depth + 1, indent)).join(', ')}]`;
      const items = schema.items === undefined || schema.items === true ? 'unknown' : schemaType(schema.items, depth + 1, indent);
      return `Array<${items}>`;
    }
    case 'object': return objectType(schema, depth, indent);
    default: return 'unknown';
  }
}

/**
 * The TypeScript type of a JSON Schema.
 * @param {unknown} schema
 * @param {number} depth nesting so far
 * @param {number} indent indentation level of the enclosing declaration
 */
function schemaType(schema, depth = 0, indent = 0) {
  if (schema === true || schema === undefined) return 'unknown';
  if (schema === false) return 'never';
  if (schema === null || typeof schema !== 'object' || depth > MAX_SCHEMA_DEPTH) return 'unknown';
  if (Object.prototype.hasOwnProperty.call(schema, 'const')) return literal(schema.const);
  if (Array.isArray(schema.enum)) return schema.enum.length === 0 ? 'never' : union(schema.enum.map(literal));
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(alternatives)) return union(alternatives.map((s) => schemaType(s, depth + 1, indent)));
  if (Array.isArray(schema.allOf)) return schema.allOf.map((s) => `(${schemaType(s, depth + 1, indent)})`).join(' & ') || 'unknown';
  if (Array.isArray(schema.type)) return union(schema.type.map((t) => typeForName(t, schema, depth, indent)));
  if (typeof schema.type === 'string') return typeForName(schema.type, schema, depth, indent);
  if (schema.properties) return objectType(schema, depth, indent);
  return 'unknown';
}

/**
 * Declarations for a set of granted tools.
 * @param {ReadonlyMap<string, {name: string, description: string, effect: string, inputSchema: object, outputSchema?: object}>} granted
 * @returns {string} a TypeScript declaration of the global `tools`
 */
function renderDeclarations(granted) {
  const members = [];
  for (const tool of granted.values()) {
    const returns = tool.outputSchema === undefined ? 'unknown' : schemaType(tool.outputSchema, 0, 1);
    // The runner passes {} when the code omits the argument, so it is optional when nothing is required.
    const optional = Array.isArray(tool.inputSchema.required) && tool.inputSchema.required.length > 0 ? '' : '?';
    members.push(
      `  /** ${docText(tool.description)} (effect: ${docText(tool.effect)}) */`,
      `  readonly ${JSON.stringify(tool.name)}: (args${optional}: ${schemaType(tool.inputSchema, 0, 1)}) => Promise<${returns}>;`,
    );
  }
  const body = members.length === 0 ? '' : `\n${members.join('\n')}\n`;
  return `/** The only capabilities this code has. Each call is checked against its schema. */\ndeclare const tools: {${body}};\n`;
}

/**
 * A ready-to-use tool description for an LLM: what the sandbox is, how to
 * write the code, the limits, and the declarations of the granted tools.
 */
/** What the program's fetch may reach, for the model (or that it has none). */
function networkLines(network) {
  if (!network) return ['The code runs as a script, not a module: there is no import/require, no packages, no network, file system or process: only the tools below.'];
  return [
    'The code runs as a script, not a module: there is no import/require, no packages, file system or process.',
    `\`fetch\` (with Request, Response, Headers) reaches only these hosts: ${[...network.allow].join(', ')}`,
    `(at most ${network.maxRequests} requests, bodies up to ${network.maxRequestBytes} bytes sent and ${network.maxResponseBytes} bytes received,`,
    `${network.timeoutMs} ms each); any other host is refused with a TypeError you can catch.`,
  ];
}

function renderDescription(granted, limits, network = null) {
  return [
    'Run JavaScript in an isolated sandbox (QuickJS). Your code is the body of a strict-mode async function:',
    'use `await` on tool calls and `return` a JSON-serializable value, which becomes the result.',
    'Call tools as `await tools["name"]({...})`; each returns a Promise and a failed call rejects with an Error you can catch ("tool failed: …").',
    `Independent calls can run in parallel with \`Promise.all\` (up to ${limits.maxOutstandingCalls} at once).`,
    'TypeScript type annotations are allowed (they are removed before the code runs; enum and namespace are not supported).',
    `Output of \`console\` (log/info/warn/error/debug, table, dir, group, count, time, assert, trace, rendered as Node renders them) is returned to you with the result (up to ${limits.logBytes} bytes); use it to inspect intermediate data.`,
    `Timers work as in Node (setTimeout/setInterval/clearTimeout, at most ${limits.maxTimers} pending), and AbortController/AbortSignal.timeout; waiting counts against the time limit.`,
    ...networkLines(network),
    `Limits: at most ${limits.toolCalls} tool calls, ${limits.timeoutMs} ms, a result of at most ${limits.resultBytes} bytes,`,
    `${limits.toolResultBytes} bytes per tool result and ${limits.cumulativeResultBytes} bytes of tool results in total.`,
    'Prefer one program that calls several tools and returns a compact summary over many small runs.',
    '',
    'Available tools (TypeScript):',
    '```ts',
    renderDeclarations(granted).trimEnd(),
    '```',
  ].join('\n');
}

module.exports = { renderDeclarations, renderDescription, schemaType };
