'use strict';

// The session tools a model gets (`bash`, `readFile`, `writeFile`), defined
// once for both adapters: name, description, JSON Schema and what the model
// receives. Results carry the exit code and the (capped) output; errors are
// `{ok: false, error: {code, message}}` so the model can react to a refused
// path or a timeout instead of the turn failing.

const { CordonError } = require('../errors');

const TOOL_NAMES = Object.freeze(['bash', 'readFile', 'writeFile']);
const OPTION_KEYS = new Set(['timeoutMs', 'maxReadBytes', 'onResult']);
/** readFile's cap for a model unless configured (bytes): a model reads text, not archives. */
const DEFAULT_MODEL_READ_BYTES = 256 * 1024;

const SCHEMAS = Object.freeze({
  bash: Object.freeze({
    type: 'object',
    properties: Object.freeze({
      command: Object.freeze({ type: 'string', description: 'A bash script, run with bash -c in /workspace.' }),
      cwd: Object.freeze({ type: 'string', description: 'Working directory relative to /workspace (optional).' }),
    }),
    required: Object.freeze(['command']),
    additionalProperties: false,
  }),
  readFile: Object.freeze({
    type: 'object',
    properties: Object.freeze({ path: Object.freeze({ type: 'string', description: 'A path relative to /workspace.' }) }),
    required: Object.freeze(['path']),
    additionalProperties: false,
  }),
  writeFile: Object.freeze({
    type: 'object',
    properties: Object.freeze({
      path: Object.freeze({ type: 'string', description: 'A path relative to /workspace; its directory must exist.' }),
      content: Object.freeze({ type: 'string', description: 'The whole new content (UTF-8 text).' }),
    }),
    required: Object.freeze(['path', 'content']),
    additionalProperties: false,
  }),
});

function descriptions(options) {
  const timeout = options.timeoutMs === undefined ? '' : ` Commands are killed after ${options.timeoutMs} ms.`;
  return Object.freeze({
    bash: `Run a bash command in this conversation's Linux workspace (/workspace). Files and background processes persist between calls; there is no network.${timeout} Returns exitCode, stdout, stderr and truncated (output past the cap is cut).`,
    readFile: `Read a UTF-8 text file of the workspace (path relative to /workspace, at most ${options.maxReadBytes} bytes). Symbolic links are not followed.`,
    writeFile: 'Create or replace a file of the workspace with the given text (path relative to /workspace; its directory must exist).',
  });
}

function checkSessionToolOptions(session, options) {
  if (session === null || typeof session?.exec !== 'function' || typeof session.readFile !== 'function') {
    throw new CordonError('ERR_CORDON_INVALID_OPTIONS', 'pass a session from sessions.acquire()');
  }
  for (const key of Object.keys(options)) {
    if (!OPTION_KEYS.has(key)) throw new CordonError('ERR_CORDON_INVALID_OPTIONS', `unknown session tool option "${key}"; known: ${[...OPTION_KEYS].join(', ')}`);
  }
  if (options.onResult !== undefined && typeof options.onResult !== 'function') throw new CordonError('ERR_CORDON_INVALID_OPTIONS', 'onResult must be a function');
  return { ...options, maxReadBytes: options.maxReadBytes ?? DEFAULT_MODEL_READ_BYTES };
}

const failure = (error) => ({ ok: false, error: { code: error?.code ?? 'ERR_CORDON_SESSION_FILE_FAILED', message: String(error?.message ?? error) } });

/** What each tool does with the model's arguments; always resolves with what the model is told. */
function runners(session, options) {
  const settle = async (name, work) => {
    let output;
    try {
      output = await work();
    } catch (error) {
      output = failure(error);
    }
    options.onResult?.({ tool: name, output });
    return output;
  };
  return Object.freeze({
    bash: ({ command, cwd }) => settle('bash', async () => {
      const r = await session.exec({ shell: 'bash', script: command }, { cwd, timeoutMs: options.timeoutMs });
      const result = { ok: true, exitCode: r.exitCode, signal: r.signal, stdout: r.stdout, stderr: r.stderr, truncated: r.truncated, timedOut: r.timedOut };
      return r.notice === undefined ? result : { ...result, notice: r.notice };
    }),
    readFile: ({ path }) => settle('readFile', async () => {
      const bytes = await session.readFile(path, { maxBytes: options.maxReadBytes });
      const text = bytes.toString('utf8');
      if (!Buffer.from(text, 'utf8').equals(bytes)) return { ok: true, encoding: 'base64', content: bytes.toString('base64'), bytes: bytes.length };
      return { ok: true, content: text, bytes: bytes.length };
    }),
    writeFile: ({ path, content }) => settle('writeFile', async () => ({ ok: true, ...(await session.writeFile(path, content)) })),
  });
}

/** Everything an adapter needs: per tool, `{name, description, inputSchema, run(args)}`. */
function sessionToolSpecs(session, options = {}) {
  const checked = checkSessionToolOptions(session, options);
  const text = descriptions(checked);
  const run = runners(session, checked);
  return TOOL_NAMES.map((name) => Object.freeze({ name, description: text[name], inputSchema: SCHEMAS[name], run: run[name] }));
}

module.exports = { sessionToolSpecs, TOOL_NAMES };
