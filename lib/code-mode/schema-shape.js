'use strict';

// Two facts about a compiled tool schema, computed once at createCodeMode:
//
// 1. Its weight for the main-thread fast path (validation.js), or null when it
//    has a keyword whose cost is not linear in the data: `uniqueItems`
//    (quadratic in Ajv), `pattern`/`patternProperties`/`format` (a regular
//    expression over model strings can backtrack exponentially), `$ref` and
//    friends (recursion: an `anyOf` of recursive branches costs
//    branches^depth), and any keyword not listed below (custom, unknown).
//    Without those, Ajv visits each (subschema, value) pair at most once per
//    schema path, so the work is at most weight × values: weight counts the
//    subschemas and the `enum`/`const` values they compare against.
// 2. The property names it names anywhere (`properties`, `required`, …): a
//    reserved key (`__proto__`, `constructor`, `prototype`) is accepted in
//    arguments only when the schema names it (reserved-keys.js).

/** Keywords whose value is one subschema. */
const ONE_SCHEMA = new Set(['additionalProperties', 'additionalItems', 'not', 'if', 'then', 'else', 'contains', 'propertyNames', 'items', 'unevaluatedItems', 'unevaluatedProperties']);
/** Keywords whose value is an array of subschemas. */
const SCHEMA_ARRAY = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems', 'items']);
/** Keywords whose value maps names to subschemas. */
const SCHEMA_MAP = new Set(['properties', 'dependentSchemas']);
/** Keywords that cost O(1) per value, or are annotations only. */
const CHEAP = new Set([
  'type', 'required', 'minItems', 'maxItems', 'minLength', 'maxLength', 'minimum', 'maximum',
  'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf', 'minProperties', 'maxProperties', 'dependentRequired',
  'minContains', 'maxContains', 'title', 'description', 'default', 'examples', '$comment', 'deprecated',
  'readOnly', 'writeOnly', '$schema', 'nullable',
]);
/** Keywords compared by deep equality against every value: weighted by their size. */
const COMPARED = new Set(['enum', 'const']);
/** Definitions are compiled but only reached through $ref, which is not linear: skipped when walking. */
const DEFINITIONS = new Set(['$defs', 'definitions']);
const EXTENSION_KEYWORD = /^x-/;

/** JSON values in a (provider's, trusted) constant such as an `enum` list. */
function valueCount(value) {
  if (value === null || typeof value !== 'object') return 1;
  return 1 + Object.values(value).reduce((sum, item) => sum + valueCount(item), 0);
}

/** A keyword whose own cost is O(1) per value it is applied to (its subschemas are walked separately). */
function isLinearKeyword(keyword, value) {
  if (keyword === 'uniqueItems') return value === false;
  return CHEAP.has(keyword) || EXTENSION_KEYWORD.test(keyword)
    || ONE_SCHEMA.has(keyword) || SCHEMA_ARRAY.has(keyword) || SCHEMA_MAP.has(keyword);
}

function childSchemas(keyword, value) {
  if (SCHEMA_MAP.has(keyword)) return value !== null && typeof value === 'object' ? Object.values(value) : [];
  if (Array.isArray(value)) return SCHEMA_ARRAY.has(keyword) ? value : [];
  return ONE_SCHEMA.has(keyword) ? [value] : [];
}

/**
 * @param {object} schema a plain JSON Schema that Ajv compiled
 * @returns {{weight: number | null, namedKeys: ReadonlySet<string>}} weight null: never on the fast path
 */
function describeSchema(schema) {
  let weight = 0;
  let linear = true;
  const namedKeys = new Set();
  const stack = [schema];
  while (stack.length > 0) {
    const node = stack.pop();
    weight += 1;
    if (node === null || typeof node !== 'object' || Array.isArray(node)) continue; // boolean schema
    for (const [keyword, value] of Object.entries(node)) {
      if (keyword === 'properties' && value && typeof value === 'object') Object.keys(value).forEach((k) => namedKeys.add(k));
      if (keyword === 'required' && Array.isArray(value)) value.forEach((k) => namedKeys.add(String(k)));
      if (keyword === 'dependentRequired' && value && typeof value === 'object') Object.keys(value).forEach((k) => namedKeys.add(k));
      if (DEFINITIONS.has(keyword)) {
        // Not walked for weight (only $ref reaches them, and $ref is excluded), but their names count.
        Object.values(value ?? {}).forEach((def) => stack.push(def));
        continue;
      }
      if (COMPARED.has(keyword)) weight += valueCount(value);
      else if (!isLinearKeyword(keyword, value)) linear = false;
      for (const child of childSchemas(keyword, value)) stack.push(child);
    }
  }
  return { weight: linear ? weight : null, namedKeys };
}

module.exports = { describeSchema };
