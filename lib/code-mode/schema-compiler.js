'use strict';

// Ajv, configured once for the whole host: which class a schema's `$schema`
// selects, and the options every compile uses. The main thread compiles at
// createCodeMode (so a bad schema is refused there); the validator workers
// compile the same schema with the same options (validator-worker.js).


/** `$schema` URIs (compared without a trailing '#' and scheme-insensitively) → draft name. */
const DRAFT_URIS = Object.freeze({
  'json-schema.org/draft-07/schema': 'draft-07',
  'json-schema.org/draft/2019-09/schema': '2019-09',
  'json-schema.org/draft/2020-12/schema': '2020-12',
});
/** A schema without `$schema` is read as draft-07, as before 2020-12 support (the AI SDK emits draft-07). */
const DEFAULT_DRAFT = 'draft-07';
/**
 * Ajv's module per draft, required at the first compile of that draft, not with cordon: Ajv is
 * ~100 modules and 35–50 ms to load here, which a provider that never compiles a tool schema
 * (spawnIsolated alone, sessions) should not pay at `require('cordon')`.
 */
const AJV_MODULES = Object.freeze({ 'draft-07': 'ajv', '2019-09': 'ajv/dist/2019', '2020-12': 'ajv/dist/2020' });
/** Annotation keywords outside the JSON Schema vocabularies that strict mode still accepts. */
const EXTENSION_KEYWORD = /^x-/;

class SchemaDraftError extends Error {}

/**
 * The draft a schema declares.
 * @param {object} schema
 * @returns {'draft-07' | '2019-09' | '2020-12'}
 * @throws {SchemaDraftError} for a `$schema` Ajv 8 cannot validate (draft-04, draft-06, a custom metaschema)
 */
function draftOf(schema) {
  const uri = schema.$schema;
  if (uri === undefined) return DEFAULT_DRAFT;
  const key = typeof uri === 'string' ? uri.replace(/^https?:\/\//, '').replace(/#$/, '') : null;
  const draft = key === null ? undefined : DRAFT_URIS[key];
  if (!draft) {
    throw new SchemaDraftError(`$schema ${JSON.stringify(uri)?.slice(0, 120)} is not supported; use draft 2020-12 `
      + '("https://json-schema.org/draft/2020-12/schema"), 2019-09 or draft-07, or leave $schema out (draft-07)');
  }
  return draft;
}

/**
 * @param {'draft-07' | '2019-09' | '2020-12'} draft
 * @param {{strict: boolean}} options strict: unknown keywords and formats are errors (a typo is
 *   refused instead of silently validating nothing); `x-…` keywords are annotations either way
 */
function createAjv(draft, { strict }) {
  const Ajv = require(AJV_MODULES[draft]).default;
  const ajv = new Ajv({
    strict: false,
    strictSchema: strict,
    allErrors: false, // first failure ends the check: less work on hostile input
    validateFormats: true,
    allowUnionTypes: true,
    logger: false,
  });
  require('ajv-formats')(ajv);
  return ajv;
}

/**
 * Loads every draft's Ajv class and ajv-formats now: a validator worker does it before it
 * reports ready, so loading Ajv is never counted in a request's time budget (validator-pool.js).
 */
function loadAllDrafts() {
  for (const name of Object.values(AJV_MODULES)) require(name);
  require('ajv-formats');
}

/** Register the schema's `x-…` keywords as annotations, so strict mode accepts them. */
function addExtensionKeywords(ajv, schema) {
  const stack = [schema];
  const added = new Set();
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== 'object') continue;
    for (const key of Object.keys(node)) {
      if (!Array.isArray(node) && EXTENSION_KEYWORD.test(key) && !added.has(key) && !ajv.getKeyword(key)) {
        ajv.addKeyword({ keyword: key });
        added.add(key);
      }
      stack.push(node[key]);
    }
  }
}

/**
 * One compiler per draft, created on first use. `compile` throws Ajv's own error for a bad schema.
 * @param {{strict: boolean}} options
 */
function createCompiler(options) {
  const instances = new Map();
  return {
    compile(schema, draft = draftOf(schema)) {
      if (!instances.has(draft)) instances.set(draft, createAjv(draft, options));
      const ajv = instances.get(draft);
      if (options.strict) addExtensionKeywords(ajv, schema);
      return ajv.compile(schema);
    },
  };
}

module.exports = { draftOf, createAjv, createCompiler, addExtensionKeywords, loadAllDrafts, SchemaDraftError, DEFAULT_DRAFT };
