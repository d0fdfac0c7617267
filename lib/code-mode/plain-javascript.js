'use strict';

// Whether a program can skip the type stripper: it is already JavaScript
// that stripping would leave byte for byte unchanged. Sending it to the
// stripper's worker and back costs two thread wake-ups (~0.7 ms of a pooled
// run's ~3 ms on a quiet host, docs/performance.md › "Change: plain
// JavaScript skips the type stripper"); a small program is checked here, on
// the calling thread, by V8's own parser instead (compiled, never run).
//
// A program takes the fast path only when all of these hold, and otherwise
// goes to the stripper exactly as before:
//   - it is at most MAX_LENGTH UTF-16 code units (16 Ki), so the parse here is bounded
//     (~60 µs for 7 KiB, ~260 µs for 60 KiB measured on the 2-core host);
//     the stripper's worker keeps larger, model-controlled sources off the
//     event loop;
//   - no `@` anywhere: decorators must reach the stripper's refusal even on
//     a V8 that parses them;
//   - no `>` other than an arrow's `=>` followed (after white space on the
//     same line) by `(`, a backtick, a `/` (a comment may hide the `(`) or
//     a line break: a TypeScript call with explicit type arguments,
//     `parse<Order>(text)` or tag<T>`…`, and an instantiation expression
//     ending a line (`a<b>` then a new line), are also valid JavaScript
//     with another meaning (comparisons), so they must be stripped;
//   - V8 parses it as the body of an async function, as the runner runs it
//     (the AsyncFunction constructor: the text must be a whole function body,
//     so a program cannot close the wrapper; the function is never called).
//     A Node started with --disallow-code-generation-from-strings refuses
//     the constructor: every program then goes to the stripper.
// Every other TypeScript construct (annotations, `as`, `satisfies`,
// interfaces, generics in declarations, `enum`, `!`, modifiers, `import
// type`) is a JavaScript syntax error, so it never passes the last check.

const MAX_LENGTH = 16 * 1024;
// After the `>`: white space but line terminators, then `(`, a backtick, `/`, a line terminator or the end.
const TYPE_ARGUMENTS_CALL = /(?<!=)>[^\S\n\r\u2028\u2029]*(?:[(`/\n\r\u2028\u2029]|$)/;
const AsyncFunction = (async () => {}).constructor;

/**
 * @param {string} code the unfenced program
 * @returns {boolean} true when the program is JavaScript the stripper would not change
 */
function isPlainJavaScript(code) {
  if (code.length > MAX_LENGTH || code.includes('@') || TYPE_ARGUMENTS_CALL.test(code)) return false;
  try {
    // Compiled, never run: the program is the body of an async function (top-level await and return).
    AsyncFunction(code);
    return true;
  } catch {
    return false;
  }
}

module.exports = { isPlainJavaScript, MAX_LENGTH };
