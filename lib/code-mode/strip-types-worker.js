'use strict';

// Worker side of strip-types.js: TypeScript type stripping with amaro
// (swc compiled to WebAssembly) in strip-only mode, which replaces every type
// with whitespace, so lines and columns of the output are those of the input.
// It runs here, off the provider's event loop: loading amaro costs ~40 ms and a
// large source ~60 ms per MiB, and the source is model-controlled.

const fs = require('node:fs');
const { parentPort } = require('node:worker_threads');
const amaro = require('amaro');
const { findDecorator } = require('./decorators');
const { blankTypeOnlyStatements, moduleStatement } = require('./module-syntax');

/** This thread's Linux tid, so the provider's thread can read its CPU time (strip-types.js); null elsewhere. */
function threadId() {
  try {
    const tid = Number(fs.readlinkSync('/proc/thread-self').split('/').pop());
    return Number.isSafeInteger(tid) && tid > 0 ? tid : null;
  } catch {
    return null;
  }
}

/**
 * The program is the body of an async function (top-level `return` and `await`).
 * The prefix shares line 1 with the program and is sliced off again: strip-only
 * output keeps every position, so the prefix comes back unchanged.
 */
const PREFIX = 'async function __cordon_program__(){';
const SUFFIX = '\n}';

/**
 * Strip, then look for what stripping lets through but the runner cannot run,
 * here off the provider's event loop (a source may be 16 MiB):
 *   - a parse failure: `import type` statements are blanked and the source
 *     stripped again; an `import`/`export` statement left is `ModuleSyntax`
 *   - stripped code holding a decorator is `Decorator`
 */
function strip(code) {
  let answer = stripOnce(code);
  if (answer.error?.code === 'InvalidSyntax') {
    const blanked = blankTypeOnlyStatements(code);
    if (blanked !== code) answer = stripOnce(blanked);
    if (answer.error) {
      const statement = moduleStatement(blanked);
      if (statement) return { error: { code: 'ModuleSyntax', message: statement.text, line: statement.line, column: null } };
      if (blanked !== code) answer.source = blanked;
    }
  }
  const decorator = findDecorator(answer.code ?? answer.source ?? code);
  if (decorator) return { error: { code: 'Decorator', message: decorator.text, line: decorator.line, column: null } };
  return answer;
}

function stripOnce(code) {
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

/** Characters per answer message: the provider's thread copies each one synchronously. */
const CHUNK_CHARS = 256 * 1024;
/** id → the pieces of a source received so far. */
const sources = new Map();
/** id → {code, sent}: stripped code whose pieces the provider's thread pulls one by one. */
const answers = new Map();

function sendNext(id) {
  const answer = answers.get(id);
  if (!answer) return;
  const { code, sent } = answer;
  const last = sent + CHUNK_CHARS >= code.length;
  if (last) answers.delete(id);
  else answer.sent = sent + CHUNK_CHARS;
  parentPort.postMessage({ id, part: code.slice(sent, sent + CHUNK_CHARS), last });
}

parentPort.postMessage({ ready: true, tid: threadId() });

parentPort.on('message', ({ id, part, last, more }) => {
  if (more) return sendNext(id);
  const parts = sources.get(id) ?? [];
  parts.push(part);
  if (!last) {
    sources.set(id, parts);
    return undefined;
  }
  sources.delete(id);
  const answer = strip(parts.join(''));
  // `source` (the blanked source of an unparsable program) is not sent: the runner judges the original.
  if (answer.error) return parentPort.postMessage({ id, error: answer.error });
  answers.set(id, { code: answer.code, sent: 0 });
  return sendNext(id);
});
