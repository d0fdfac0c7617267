'use strict';

// A model's program as the runner will see it. Steps:
//   1. one markdown fence around the whole program (```js, ```ts, ```typescript,
//      ```javascript or a bare ```) is removed; the opening line becomes an empty
//      line so line numbers in errors still match the model's text
//   2. a small program V8 parses as JavaScript, with nothing stripping would
//      change, is sent as it is (plain-javascript.js: no worker round trip);
//      any other has its TypeScript types stripped (strip-types.js, off the event loop), every
//      line and column kept; constructs that need real transpilation (enum,
//      namespace, parameter properties, `<T>x` assertions) fail here with a
//      `source` error naming the construct and the position
//   3. a source the TypeScript parser cannot read: `import type …` statements
//      (types only) are blanked and the source stripped again; an `import` or
//      `export` statement that remains is refused here with a `source` error
//      that says how the program runs (a script, tools on `tools`, no module
//      loader); anything else is sent as it was, and the runner reports the
//      JavaScript SyntaxError in its own words and position
//   Decorators (`@name` before a class or member) are refused before any
//   sandbox starts: they need transpilation, and only types are stripped.
// The audit keeps the model's text as written, not this prepared one.

const { stripTypes } = require('./strip-types');
const { isPlainJavaScript } = require('./plain-javascript');
const { failed } = require('./outcome');

const FENCE_LANGUAGES = new Set(['', 'js', 'javascript', 'ts', 'typescript', 'mjs', 'jsx', 'tsx']);
const FENCE = '```';

/**
 * The program inside one fence that wraps all of it, or the text unchanged.
 * @param {string} code
 * @returns {string}
 */
function unfence(code) {
  const start = code.search(/\S/);
  if (start < 0 || !code.startsWith(FENCE, start)) return code;
  const firstNewline = code.indexOf('\n', start);
  if (firstNewline < 0) return code;
  const language = code.slice(start + FENCE.length, firstNewline).trim().toLowerCase();
  if (!FENCE_LANGUAGES.has(language)) return code;
  const trimmedEnd = code.trimEnd();
  if (!trimmedEnd.endsWith(FENCE) || trimmedEnd.length - FENCE.length <= firstNewline) return code;
  const body = trimmedEnd.slice(firstNewline + 1, trimmedEnd.length - FENCE.length);
  // A fence inside the body means this was not one fence around everything (e.g. two blocks).
  if (body.includes(FENCE)) return code;
  const leadingLines = code.slice(0, firstNewline + 1).split('\n').length - 1;
  return `${'\n'.repeat(leadingLines)}${body}`;
}

const HOW_TO_FIX = {
  'enum': 'use a plain object (`const Color = {Red: "red"} as const`) instead',
  'namespace': 'use plain objects and functions instead',
  'parameter property': 'declare the field in the class body and assign it in the constructor',
  'angle-bracket': 'use `expr as T`',
};

function unsupported(error) {
  const where = error.line ? ` at <code>:${error.line}:${(error.column ?? 0) + 1}` : '';
  const fix = Object.entries(HOW_TO_FIX).find(([word]) => error.message.includes(word));
  const message = `TypeScript: ${error.message}${where}. Only type annotations are removed before the program runs`
    + ` (annotations, \`as\`, \`satisfies\`, interfaces, type aliases, generics); constructs that need transpilation are not supported${fix ? `: ${fix[1]}` : ''}.`;
  return failed('source', 'TYPESCRIPT_UNSUPPORTED', message);
}

const MODULE_HELP = 'this program runs as a script (the body of an async function), not as a module: there is no module loader, '
  + 'so nothing can be imported or exported and no package is available. Your tools are on the global `tools` object '
  + '(e.g. `const order = await tools["orders.get"]({ id })`); write any helper inline and `return` the result';

/**
 * @param {string} code the model's program, already checked for size and NUL
 * @param {{stripDeadlineMs?: number}} [options] test seam: the type stripper's budget
 * @returns {Promise<{code: string} | {termination: object}>}
 */
async function prepareSource(code, options = {}) {
  const unfenced = unfence(code);
  if (isPlainJavaScript(unfenced)) return { code: unfenced };
  const stripped = await stripTypes(unfenced, options);
  if (stripped.code !== undefined) return { code: stripped.code };
  const { error } = stripped;
  if (error.code === 'UnsupportedSyntax') return { termination: unsupported(error) };
  if (error.code === 'STRIP_TIMEOUT') return { termination: failed('source', 'STRIP_TIMEOUT', `${error.message}; send a smaller program`) };
  if (error.code === 'ModuleSyntax') return { termination: failed('source', 'MODULE_SYNTAX', `line ${error.line}: \`${error.message}\` — ${MODULE_HELP}.`) };
  if (error.code === 'Decorator') {
    return { termination: failed('source', 'TYPESCRIPT_UNSUPPORTED', `TypeScript: decorators are not supported (line ${error.line}: \`${error.message}\`). `
      + 'They need transpilation and only type annotations are stripped: call the decorator function yourself instead (`const Wrapped = decorate(Original)`).') };
  }
  // InvalidSyntax (or a parser failure): let the runner judge it as JavaScript.
  return { code: unfenced };
}

module.exports = { prepareSource, unfence };
