'use strict';

// Worker side of strip-types.js: TypeScript type stripping with amaro
// (swc compiled to WebAssembly) in strip-only mode, which replaces every type
// with whitespace, so lines and columns of the output are those of the input.
// It runs here, off the provider's event loop: loading amaro costs ~40 ms and a
// large source ~60 ms per MiB, and the source is model-controlled.

const { parentPort } = require('node:worker_threads');
const amaro = require('amaro');

/**
 * The program is the body of an async function (top-level `return` and `await`).
 * The prefix shares line 1 with the program and is sliced off again: strip-only
 * output keeps every position, so the prefix comes back unchanged.
 */
const PREFIX = 'async function __cordon_program__(){';
const SUFFIX = '\n}';

function strip(code) {
  try {
    const out = amaro.transformSync(`${PREFIX}${code}${SUFFIX}`, { mode: 'strip-only' }).code;
    if (!out.startsWith(PREFIX) || !out.endsWith(SUFFIX)) return { error: { code: 'UnexpectedOutput', message: 'type stripping changed the program frame' } };
    return { code: out.slice(PREFIX.length, out.length - SUFFIX.length) };
  } catch (error) {
    // swc's parse errors are plain objects {code, message, startLine, startColumn}.
    const line = Number.isSafeInteger(error?.startLine) ? error.startLine : null;
    let column = Number.isSafeInteger(error?.startColumn) ? error.startColumn : null;
    if (line === 1 && column !== null) column -= PREFIX.length;
    return { error: { code: String(error?.code ?? 'Error'), message: String(error?.message ?? error).slice(0, 1024), line, column } };
  }
}

parentPort.on('message', ({ id, code }) => {
  parentPort.postMessage({ id, ...strip(code) });
});
