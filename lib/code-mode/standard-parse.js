'use strict';

// A Standard Schema's own parse of arguments that already passed its JSON
// Schema (validation.js): the handler gets what the library makes of them —
// zod's `.default()` values filled in, `.transform()` and coercions applied,
// refinements checked — as a zod user expects of `schema.parse(args)`.
//
// It runs on the provider's event loop (a provider's schema object cannot
// cross into a validator thread). The arguments reaching it were already
// validated off the loop within the validator's budget against the same
// constraints (the library's own JSON Schema of them), so what is left is
// the library's own cost over data of a bounded, checked shape; refinements
// and transforms are the provider's code, like its handler.

/** Issues quoted in the model's error message. */
const MAX_ISSUES = 3;

/**
 * The `~standard.validate` of a Standard Schema, or null for any other kind of
 * schema (plain JSON Schema, AI SDK jsonSchema(): their arguments are used as sent).
 * @param {unknown} schema what the provider passed as inputSchema
 */
function standardParser(schema) {
  const validate = schema?.['~standard']?.validate;
  if (typeof validate !== 'function') return null;
  return (value) => validate.call(schema['~standard'], value);
}

function describeIssue(issue) {
  const where = Array.isArray(issue?.path) && issue.path.length > 0
    ? issue.path.map((part) => (typeof part === 'object' && part !== null ? part.key : part)).join('.')
    : '(root)';
  return `${where}: ${String(issue?.message ?? 'invalid')}`;
}

/**
 * @param {(value: unknown) => unknown} parse from standardParser()
 * @param {unknown} args arguments that passed the JSON Schema
 * @param {string} name the tool's name
 * @returns {Promise<{ok: true, value: unknown} | {ok: false, code: 'INVALID_ARGUMENTS' | 'TOOL_FAILED', message: string}>}
 */
async function parseArguments(parse, args, name) {
  let result;
  try {
    result = await parse(args);
  } catch (error) {
    return { ok: false, code: 'INVALID_ARGUMENTS', message: `arguments for "${name}" could not be parsed by its schema: ${String(error?.message ?? error).slice(0, 400)}` };
  }
  if (result === null || typeof result !== 'object') {
    // The provider's schema broke its contract: the tool is at fault, not the code.
    return { ok: false, code: 'TOOL_FAILED', message: `the schema of "${name}" returned ${String(result).slice(0, 40)} from ~standard.validate (expected {value} or {issues})` };
  }
  if (Array.isArray(result.issues) && result.issues.length > 0) {
    const listed = result.issues.slice(0, MAX_ISSUES).map(describeIssue).join('; ');
    const more = result.issues.length > MAX_ISSUES ? ` (+${result.issues.length - MAX_ISSUES} more)` : '';
    return { ok: false, code: 'INVALID_ARGUMENTS', message: `arguments for "${name}" do not match its schema: ${listed}${more}`.slice(0, 1024) };
  }
  return { ok: true, value: result.value };
}

module.exports = { standardParser, parseArguments };
