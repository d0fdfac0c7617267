'use strict';

// What a provider may pass as a tool's inputSchema/outputSchema, turned into
// one plain JSON Schema object. Accepted, in this order:
//   1. an AI SDK schema (`jsonSchema({...})` or `zodSchema(...)` from `ai`):
//      tagged with Symbol.for('vercel.ai.schema'); its `jsonSchema` is used;
//   2. a Standard Schema (`~standard`: zod 4, valibot, arktype, …) that also
//      implements Standard JSON Schema (`~standard.jsonSchema.input`): converted
//      to draft 2020-12 by its own library;
//   3. a plain JSON Schema object (no functions anywhere, JSON data only).
// Anything else — a Standard Schema without a JSON Schema converter (zod 3,
// older valibot), a class instance, an object holding functions — is refused
// here, at createCodeMode: a schema we cannot read would validate nothing.
//
// Validation uses the JSON Schema (off the main thread, validation.js: a
// provider's function cannot cross into a worker). For a Standard Schema,
// arguments that pass are then parsed by the library itself on the main
// thread (standard-parse.js), so the handler gets its output: defaults,
// transforms and refinements apply as with `schema.parse()`.

const AI_SDK_SCHEMA = Symbol.for('vercel.ai.schema');
/** The target asked of Standard JSON Schema converters; validated with Ajv2020. */
const STANDARD_TARGET = 'draft-2020-12';

class SchemaSourceError extends Error {}

const isPlainObject = (value) => {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
};

/** Deeper provider schemas are refused rather than walked (this walk and Ajv's compiler recurse). */
const MAX_SCHEMA_DEPTH = 256;

/** Why `node` is not plain JSON data (a JSON Pointer and what was found), or null. Shared sub-objects are fine. */
function findNonJson(node, path = '', ancestors = new Set()) {
  const where = path || '(root)';
  if (node === null || typeof node === 'string' || typeof node === 'boolean') return null;
  if (typeof node === 'number') return Number.isFinite(node) ? null : `${where} is a non-finite number`;
  if (typeof node !== 'object') return `${where} is a ${typeof node}`;
  if (ancestors.has(node)) return `${where} is a cycle`;
  if (ancestors.size >= MAX_SCHEMA_DEPTH) return `${where} is nested deeper than ${MAX_SCHEMA_DEPTH} levels`;
  if (!Array.isArray(node) && !isPlainObject(node)) return `${where} is a ${node.constructor?.name ?? 'non-plain'} object`;
  ancestors.add(node);
  let problem = null;
  for (const key of Object.keys(node)) {
    problem = findNonJson(node[key], `${path}/${key}`, ancestors);
    if (problem) break;
  }
  ancestors.delete(node);
  return problem;
}

function fromAiSdk(value) {
  let schema;
  try {
    schema = value.jsonSchema; // a getter, possibly lazy
  } catch (error) {
    throw new SchemaSourceError(`the AI SDK schema's jsonSchema threw: ${error.message}`);
  }
  if (schema && typeof schema.then === 'function') {
    throw new SchemaSourceError('the AI SDK schema resolves its JSON Schema asynchronously; pass the JSON Schema object itself');
  }
  return { schema, source: 'ai-sdk' };
}

function fromStandard(value) {
  const standard = value['~standard'];
  const vendor = typeof standard?.vendor === 'string' ? standard.vendor : 'unknown';
  const convert = standard?.jsonSchema?.input;
  if (typeof convert !== 'function') {
    throw new SchemaSourceError(`it is a Standard Schema from "${vendor}" without a JSON Schema converter (~standard.jsonSchema); `
      + 'use a version that implements Standard JSON Schema (zod ≥ 4.2, valibot ≥ 1.2, arktype ≥ 2.1.28) or pass its JSON Schema');
  }
  let schema;
  try {
    schema = convert.call(standard.jsonSchema, { target: STANDARD_TARGET });
  } catch (error) {
    throw new SchemaSourceError(`"${vendor}" could not convert it to JSON Schema (${STANDARD_TARGET}): ${error.message}`);
  }
  return { schema, source: `standard:${vendor}` };
}

/**
 * The plain JSON Schema behind what a provider passed.
 * @param {unknown} value
 * @returns {{schema: object, source: string}} source: "json-schema", "ai-sdk" or "standard:<vendor>"
 * @throws {SchemaSourceError} with a message that says what was found and what to pass instead
 */
function toJsonSchema(value) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new SchemaSourceError('must be a JSON Schema object, a Standard Schema (zod 4, valibot, arktype) or an AI SDK jsonSchema()');
  }
  let converted;
  if (value[AI_SDK_SCHEMA] === true) converted = fromAiSdk(value);
  else if (value['~standard'] !== undefined) converted = fromStandard(value);
  else converted = { schema: value, source: 'json-schema' };
  // A zod 3 schema without `~standard` (before 3.24) is a class instance with a `_def`.
  const hint = value._def !== null && typeof value._def === 'object' ? ' (this looks like a zod 3 schema: use zod 4, or pass its JSON Schema)' : '';
  if (!isPlainObject(converted.schema)) {
    const what = converted.source === 'json-schema' ? 'it is not a plain object' : `its ${converted.source} conversion is not a plain object`;
    throw new SchemaSourceError(`${what}${hint}`);
  }
  const problem = findNonJson(converted.schema);
  if (problem) throw new SchemaSourceError(`it is not JSON Schema data: ${problem}${hint}`);
  return converted;
}

module.exports = { toJsonSchema, SchemaSourceError, STANDARD_TARGET };
