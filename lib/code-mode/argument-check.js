'use strict';

// The checks themselves, shared by the main-thread fast path and the
// validator workers so both answer alike. Arguments: reserved keys first (a
// prototype key is refused even when the schema would let any object
// through), then the compiled schema. Results: the outputSchema only.

const { findReservedKey } = require('./reserved-keys');

/** Schema errors listed in an INVALID_ARGUMENTS message. */
const MAX_SCHEMA_ERRORS = 5;
/** A schema error's parts (instance path, message) are cut to this many characters. */
const MAX_ERROR_PART_CHARS = 200;

function schemaErrors(validate) {
  return (validate.errors ?? []).slice(0, MAX_SCHEMA_ERRORS)
    .map((e) => `${(e.instancePath || '(root)').slice(0, MAX_ERROR_PART_CHARS)} ${String(e.message).slice(0, MAX_ERROR_PART_CHARS)}`).join('; ');
}

/**
 * @param {{validate: Function, namedKeys: ReadonlySet<string>}} compiled
 * @param {unknown} args parsed JSON arguments
 * @param {string} name the tool's name, for messages
 * @returns {{ok: true} | {ok: false, code: 'INVALID_ARGUMENTS', message: string}}
 */
function checkArguments(compiled, args, name) {
  const reserved = findReservedKey(args, compiled.namedKeys);
  if (reserved !== null) {
    return {
      ok: false,
      code: 'INVALID_ARGUMENTS',
      message: `arguments for "${name}" carry the reserved key ${JSON.stringify(reserved.slice(0, MAX_ERROR_PART_CHARS))}, which its inputSchema does not name`,
    };
  }
  if (compiled.validate(args)) return { ok: true };
  return { ok: false, code: 'INVALID_ARGUMENTS', message: `arguments for "${name}" do not match its inputSchema: ${schemaErrors(compiled.validate)}` };
}

/**
 * A tool's projected result against its outputSchema (no reserved-key rule: the provider made it).
 * @returns {{ok: true} | {ok: false, code: 'RESULT_SCHEMA_MISMATCH', message: string}}
 */
function checkResult(compiled, value, name) {
  if (compiled.validate(value)) return { ok: true };
  return { ok: false, code: 'RESULT_SCHEMA_MISMATCH', message: `result of "${name}" does not match its outputSchema: ${schemaErrors(compiled.validate)}` };
}

module.exports = { checkArguments, checkResult, schemaErrors };
