'use strict';

// `cordon/ai`: a Code Mode instance as one Vercel AI SDK tool (`ai` >= 6).
// The model sends `{code}`; the tool runs it in the sandbox through
// `codeMode.run` and returns `{ok, result}` or `{ok:false, error}`.

const { CordonError } = require('../errors');
const { requirePeer, runForModel, asParentId, CODE_INPUT_SCHEMA } = require('./peer');
const { sessionToolSpecs } = require('./session-tools');

const OPTION_KEYS = new Set(['mode', 'description', 'onResult']);

function checkOptions(codeMode, options) {
  if (codeMode === null || typeof codeMode !== 'object' || typeof codeMode.run !== 'function') {
    throw new CordonError('ERR_CORDON_INVALID_OPTIONS', 'codeModeTool(codeMode): pass the object createCodeMode() returned');
  }
  for (const key of Object.keys(options)) {
    if (!OPTION_KEYS.has(key)) throw new CordonError('ERR_CORDON_INVALID_OPTIONS', `unknown codeModeTool option "${key}"; known: ${[...OPTION_KEYS].join(', ')}`);
  }
  if (options.onResult !== undefined && typeof options.onResult !== 'function') {
    throw new CordonError('ERR_CORDON_INVALID_OPTIONS', 'onResult must be a function');
  }
}

/**
 * @param {import('../../index').CodeMode} codeMode
 * @param {{mode?: 'execute'|'inspect', description?: string,
 *          onResult?: (run: import('../../index').CodeModeResult) => void}} [options]
 *   `onResult` sees the whole result (receipt, events, audit) the model does not.
 */
function codeModeTool(codeMode, options = {}) {
  checkOptions(codeMode, options);
  const { tool, jsonSchema } = requirePeer('ai', 'ai');
  const mode = options.mode ?? 'execute';
  return tool({
    description: options.description ?? codeMode.description({ mode }),
    inputSchema: jsonSchema(CODE_INPUT_SCHEMA),
    async execute({ code }, { abortSignal, toolCallId } = {}) {
      return runForModel(codeMode, code, { mode, signal: abortSignal, parentId: asParentId(toolCallId) }, options.onResult);
    },
  });
}

/**
 * A session (sessions.acquire()) as the AI SDK tools `bash`, `readFile` and
 * `writeFile` (docs/sessions.md); spread them into `tools`.
 * @param {import('../../index').Session} session
 * @param {{timeoutMs?: number, maxReadBytes?: number, onResult?: (r: {tool: string, output: object}) => void}} [options]
 */
function sessionTools(session, options = {}) {
  const specs = sessionToolSpecs(session, options);
  const { tool, jsonSchema } = requirePeer('ai', 'ai');
  return Object.fromEntries(specs.map((spec) => [spec.name, tool({
    description: spec.description,
    inputSchema: jsonSchema(spec.inputSchema),
    execute: (args) => spec.run(args),
  })]));
}

module.exports = { codeModeTool, sessionTools };
