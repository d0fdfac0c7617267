'use strict';

// What the model reads when a run fails must say what to fix. The runner's
// v1 wording for two outcomes does not: a program without `return` gets
// "result is not JSON serializable", and an oversized result gets no sizes.
// JavaScript error positions are moved back onto the model's own lines.
// Those exact v1 messages are rewritten here (kind and code never change, so
// callers branching on them see no difference); any other message — a runner
// that already says more — is passed through untouched.

const { unclosedAtEnd } = require('./unclosed');

/** The v1 runner's message for kind "result" (spec §9 row 6). */
const V1_RESULT_MESSAGE = 'result is not JSON serializable';
/** The v1 runner's message for kind "result_limit" (spec §9 row 7). */
const V1_RESULT_LIMIT_MESSAGE = 'result exceeds max_result_bytes';

/**
 * cordon-runner compiles the program as `(async function () {"use strict";\n<code>\n})`
 * (crates/runner/src/evaluation.rs), so its `<code>:L:C` positions are one line
 * below the model's text; columns are the model's. Shifted back here so an error
 * points at the line the model wrote.
 */
const RUNNER_PREFIX_LINES = 1;
const CODE_POSITION = /<code>:(\d+):(\d+)/g;

function modelPositions(message) {
  return message.replace(CODE_POSITION, (whole, line, column) => {
    const shifted = Number(line) - RUNNER_PREFIX_LINES;
    return shifted >= 1 ? `<code>:${shifted}:${column}` : whole;
  });
}

/**
 * A SyntaxError the runner places past the model's last line is at the wrapper's
 * closing `})`: the program ended before something was closed. Said so, with what
 * is still open (unclosed.js).
 */
function endOfProgram(message, code) {
  const match = /^SyntaxError\b[^\n]*\n\s*at <code>:(\d+):\d+/.exec(message);
  if (!match || typeof code !== 'string' || Number(match[1]) <= code.split('\n').length) return null;
  const open = unclosedAtEnd(code);
  if (open.length === 0) return 'SyntaxError: unexpected end of program: the last statement is incomplete';
  const listed = open.reverse().slice(0, 3).map(({ what, line, column }) => `${what} opened at <code>:${line}:${column}`).join(', ');
  return `SyntaxError: unexpected end of program: ${listed} ${open.length === 1 ? 'is' : 'are'} never closed`;
}

const NO_VALUE_MESSAGE = 'the program returned undefined (or a value JSON cannot carry, such as a function); '
  + 'end it with `return <value>`, where the value is JSON-serializable';

/** A reference to what only a module system or Node provides. */
const NO_MODULES = /^ReferenceError: '?(require|module|exports|__dirname|__filename)'? is not defined|^ReferenceError: could not load module /;
const MODULE_HINT = 'hint: this program runs as a script (the body of an async function) with its tools on the global `tools` object; '
  + 'there is no module loader, so `require`/`import` of packages is not available: write helpers inline and call tools["name"](args)';

/** The runner's v1 timeout text (spec §9 row 3). */
const V1_TIMEOUT_MESSAGE = 'execution timed out';

/**
 * @param {{kind: string, code?: string, message: string}} error the runner's error, already bounded
 * @param {{maxResultBytes: number, timeoutMs: number}} effectiveLimits
 * @param {string} [code] the program as sent to the runner (after source-prep.js)
 */
function explainRunnerError(error, effectiveLimits, code) {
  if (error.kind === 'timeout' && error.message === V1_TIMEOUT_MESSAGE) {
    return { ...error, message: timeoutMessage(effectiveLimits.timeoutMs) };
  }
  if (error.kind === 'result' && error.message === V1_RESULT_MESSAGE) {
    return { ...error, message: NO_VALUE_MESSAGE };
  }
  if (error.kind === 'result_limit' && error.message === V1_RESULT_LIMIT_MESSAGE) {
    return { ...error, message: `the returned value is larger than the limit of ${effectiveLimits.maxResultBytes} bytes (as JSON); return a smaller summary` };
  }
  if (error.kind !== 'javascript' && error.kind !== 'memory') return error;
  const message = modelPositions(error.message);
  const ended = endOfProgram(message, code);
  if (ended) return { ...error, message: ended };
  if (NO_MODULES.test(message)) return { ...error, message: `${message}\n${MODULE_HINT}` };
  if (/^SyntaxError\b/.test(message) && /'@'|"@"/.test(message)) {
    return { ...error, message: `${message}\nhint: decorators (@name) are not supported; they need TypeScript transpilation, and only type annotations are stripped` };
  }
  return { ...error, message };
}

/** What the model reads when its run passed the time limit: the limit, and what usually causes it. */
function timeoutMessage(timeoutMs) {
  return `execution timed out: the program ran past its time limit of ${timeoutMs} ms (limits.timeoutMs; time spent waiting on tools and timers counts). `
    + 'Do less per run (fewer or parallel tool calls, shorter waits) and return what you have';
}

module.exports = { explainRunnerError, timeoutMessage, NO_VALUE_MESSAGE };
