'use strict';

// The adapters' optional peer dependencies (`ai`, `@modelcontextprotocol/sdk`)
// are loaded on first use, so `require('cordon')` never needs them and a
// missing one is a coded error that says what to install.

const { CordonError } = require('../errors');

/**
 * `require(specifier)` of an optional peer, or ERR_CORDON_PEER_MISSING.
 * @param {string} specifier e.g. "ai" or "@modelcontextprotocol/sdk/client/index.js"
 * @param {string} install the npm package to install
 */
function requirePeer(specifier, install) {
  try {
    return require(specifier);
  } catch (cause) {
    if (cause?.code !== 'MODULE_NOT_FOUND' && cause?.code !== 'ERR_PACKAGE_PATH_NOT_EXPORTED') throw cause;
    throw new CordonError(
      'ERR_CORDON_PEER_MISSING',
      `this cordon adapter needs the optional peer dependency "${install}": npm install ${install}`,
      { cause },
    );
  }
}

/** What a model is told about a run: the value, or the error without internals. */
function modelOutput(run) {
  if (run.ok) return { ok: true, result: run.result };
  const { kind, code, message } = run.error;
  return { ok: false, error: code === undefined ? { kind, message } : { kind, code, message } };
}

/** `parentId` must match the run id pattern; an outside id that does not is dropped. */
const ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;
function asParentId(id) {
  return typeof id === 'string' && ID_PATTERN.test(id) ? id : undefined;
}

/** The `{code}` argument both adapters take, as a JSON Schema. */
const CODE_INPUT_SCHEMA = Object.freeze({
  type: 'object',
  properties: Object.freeze({
    code: Object.freeze({ type: 'string', description: 'The body of an async JavaScript function; `return` its result.' }),
  }),
  required: Object.freeze(['code']),
  additionalProperties: false,
});

module.exports = { requirePeer, modelOutput, asParentId, CODE_INPUT_SCHEMA };
