'use strict';

// Module syntax in a program that runs as a script (the body of an async
// function, no module loader): `import type` statements are only types and are
// blanked (lines and columns kept); any other `import`/`export` statement is
// found so that the host can refuse the program with how it runs instead of
// the runner's "SyntaxError: Unexpected token '{'". Runs in the type-stripping
// worker (strip-types-worker.js), off the provider's event loop.

/** A statement of a module: `import … from`, `import "x"`, `export …` (not `import(`, `import.meta`). */
const MODULE_STATEMENT = /^[ \t]*(import(?=[\s{*"'])(?!\s*\()|export(?=[\s{*]))/;
/** `import type …` / `export type {…}` on one line: types only, removed like other types. */
const TYPE_ONLY_STATEMENT = /^[ \t]*(import|export)[ \t]+type[ \t]+[^;\n]*(;|$)/;

/** `{line, text}` of the first module statement in the source, or null. */
function moduleStatement(code) {
  const lines = code.split('\n');
  const index = lines.findIndex((line) => MODULE_STATEMENT.test(line));
  return index < 0 ? null : { line: index + 1, text: lines[index].trim().slice(0, 120) };
}

/** The source with every one-line `import type`/`export type` statement replaced by spaces. */
function blankTypeOnlyStatements(code) {
  return code.split('\n').map((line) => (TYPE_ONLY_STATEMENT.test(line) ? ' '.repeat(line.length) : line)).join('\n');
}

module.exports = { moduleStatement, blankTypeOnlyStatements };
