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

/**
 * The program's console output as the model reads it: one string per line,
 * `[warn] …` for levels other than log, and a closing marker when the output
 * was cut at `logBytes`. Empty when nothing was logged.
 */
function modelLogs(run) {
  const logs = run.logs ?? [];
  const lines = logs.map((line) => (line.level === 'log' ? line.text : `[${line.level}] ${line.text}`));
  const dropped = run.metrics?.droppedLogLines ?? 0;
  if (logs.some((line) => line.truncated) || dropped > 0) {
    lines.push(`[console output truncated at ${run.metrics?.logBytes ?? 0} bytes; ${dropped} more line${dropped === 1 ? '' : 's'} not shown]`);
  }
  return lines;
}

/** What a model is told about a run: the value or the error without internals, and its console output. */
function modelOutput(run) {
  const logs = modelLogs(run);
  const withLogs = (out) => (logs.length > 0 ? { ...out, logs } : out);
  if (run.ok) return withLogs({ ok: true, result: run.result });
  const { kind, code, message } = run.error;
  return withLogs({ ok: false, error: code === undefined ? { kind, message } : { kind, code, message } });
}

/** What a model is told when admission control refused its run: retry later, not an SDK error. */
const BUSY_MESSAGE = 'busy: too many programs are running or queued right now; retry in a moment';

/**
 * `codeMode.run` for a model: its output (modelOutput), with an admission refusal
 * (ERR_CORDON_ADMISSION: the host is at capacity) answered as `{ok:false}` with
 * "busy, retry" instead of an exception the agent loop would surface as a tool error.
 * Other rejections are the caller's bugs (bad options) and still throw.
 */
async function runForModel(codeMode, code, runOptions, onResult) {
  let run;
  try {
    run = await codeMode.run(code, runOptions);
  } catch (error) {
    if (error?.code !== 'ERR_CORDON_ADMISSION') throw error;
    return { ok: false, error: { kind: 'busy', code: 'ERR_CORDON_ADMISSION', message: `${BUSY_MESSAGE} (${error.message})` } };
  }
  onResult?.(run);
  return modelOutput(run);
}

/** The JSON Schema of modelOutput, advertised as the MCP tool's outputSchema. */
const MODEL_OUTPUT_SCHEMA = Object.freeze({
  type: 'object',
  properties: Object.freeze({
    ok: Object.freeze({ type: 'boolean' }),
    result: Object.freeze({ description: 'The value the program returned (when ok).' }),
    error: Object.freeze({
      type: 'object',
      properties: Object.freeze({ kind: Object.freeze({ type: 'string' }), code: Object.freeze({ type: 'string' }), message: Object.freeze({ type: 'string' }) }),
      required: Object.freeze(['kind', 'message']),
    }),
    logs: Object.freeze({ type: 'array', items: Object.freeze({ type: 'string' }), description: 'The program\'s console output, one line per entry.' }),
  }),
  required: Object.freeze(['ok']),
});

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

module.exports = { runForModel, requirePeer, modelOutput, asParentId, CODE_INPUT_SCHEMA, MODEL_OUTPUT_SCHEMA };
