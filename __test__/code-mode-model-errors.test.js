'use strict';

// Errors a model can act on (issue 20 item 4) and the host's guards around the
// runner (item 6): module syntax, missing methods, timeouts, decorators, the
// type-stripping budget, and a reference runner's command line. Real runner,
// real sandbox (the reference runner is a stand-in fixture with the same flags).

const test = require('node:test');
const assert = require('node:assert/strict');
const { codeMode, runnableFixture, hostilePolicy, sandboxCensus, tool } = require('./code-mode-support');
const { prepareSource } = require('../lib/code-mode/source-prep');

test('import and export statements are refused before spawn with how the program runs; import type is stripped', async (t) => {
  const mode = codeMode({ tools: [tool('orders.get', () => ({}))] });
  t.after(() => mode.close());
  const imported = await mode.run('import { format } from "date-fns";\nreturn format(new Date(), "yyyy");');
  assert.equal(imported.ok, false);
  assert.deepEqual([imported.error.kind, imported.error.code], ['source', 'MODULE_SYNTAX']);
  assert.match(imported.error.message, /^line 1: `import \{ format \} from "date-fns";` — this program runs as a script/);
  assert.match(imported.error.message, /no module loader/);
  assert.match(imported.error.message, /Your tools are on the global `tools` object/);
  assert.deepEqual(imported.receipt, {}, 'no sandbox ran');
  const exported = await mode.run('const x = 1;\nexport default x;');
  assert.deepEqual([exported.error.code, /^line 2:/.test(exported.error.message)], ['MODULE_SYNTAX', true]);
  assert.deepEqual(exported.receipt, {}, 'no sandbox ran');
  const typeOnly = await mode.run('import type { Order } from "./types";\nconst o: Order = { id: "a" } as Order;\nreturn o.id;');
  assert.equal(typeOnly.ok, true, JSON.stringify(typeOnly.error));
  assert.equal(typeOnly.result, 'a');
});

test('require, module and dynamic import get a hint that there is no module loader', async (t) => {
  const mode = codeMode();
  t.after(() => mode.close());
  for (const code of ['const fs = require("fs");\nreturn 1;', 'module.exports = {};\nreturn 1;', 'const m = await import("lodash");\nreturn 1;']) {
    const run = await mode.run(code);
    assert.equal(run.error?.kind, 'javascript', code);
    assert.match(run.error.message, /hint: this program runs as a script .* no module loader/s, code);
  }
});

test('calling a missing method names it, as Node does', async (t) => {
  const mode = codeMode();
  t.after(() => mode.close());
  const cases = [
    ['const rows = [1];\nconsole.tabel(rows);\nreturn 1;', /^TypeError: console\.tabel is not a function\n    at .*<code>:2:\d+/],
    ['const s = JSON.stringify({});\nreturn s.toUpperCase().replaceAl("a", "b");', /^TypeError: s\.toUpperCase\(\.\.\.\)\.replaceAl is not a function/],
    ['const f = 3;\nreturn f();', /^TypeError: f is not a function/],
  ];
  for (const [code, expected] of cases) {
    const run = await mode.run(code);
    assert.equal(run.error?.kind, 'javascript', code);
    assert.match(run.error.message, expected, code);
  }
});

test('a timeout names the limit that was reached', async (t) => {
  const mode = codeMode({ limits: { timeoutMs: 300 } });
  t.after(() => mode.close());
  const busy = await mode.run('while (true) {}');
  assert.equal(busy.error.kind, 'timeout');
  assert.match(busy.error.message, /time limit of 300 ms \(limits\.timeoutMs/);
  const waiting = await mode.run('await new Promise((r) => setTimeout(r, 60000));\nreturn 1;');
  assert.equal(waiting.error.kind, 'timeout');
  assert.match(waiting.error.message, /time limit of 300 ms/);
  assert.ok(waiting.metrics.elapsedMs < 30000, `${waiting.metrics.elapsedMs} ms: ended at the deadline, not at the timer`);
});

test('a decorator is refused before any sandbox starts; an @ in strings, comments and regexes is not a decorator', async (t) => {
  const mode = codeMode();
  t.after(() => mode.close());
  for (const code of ['@sealed\nclass Order {}\nreturn 1;', 'class Order {\n  @memo total(): number { return 1; }\n}\nreturn 1;']) {
    const run = await mode.run(code);
    assert.deepEqual([run.error?.kind, run.error?.code], ['source', 'TYPESCRIPT_UNSUPPORTED'], code);
    assert.match(run.error.message, /decorators are not supported \(line \d: `@/);
    assert.deepEqual(run.receipt, {}, 'refused before spawn');
  }
  const fine = await mode.run('const email = /^[^@]+@[^@]+$/; // @todo\nconst at = "@x"; const t = `\n@here`;\nreturn [email.test("a@b"), at, t.trim()];');
  assert.equal(fine.ok, true, JSON.stringify(fine.error));
  assert.deepEqual(fine.result, [true, '@x', '@here']);
});

test('type stripping past its budget fails the source with STRIP_TIMEOUT, and the next source is stripped by a fresh worker', async () => {
  const big = `${'const a: number = 1;\n'.repeat(60000)}return a;`;
  const timedOut = await prepareSource(big, { stripDeadlineMs: 1 });
  assert.deepEqual([timedOut.termination?.error.kind, timedOut.termination?.error.code], ['source', 'STRIP_TIMEOUT']);
  assert.match(timedOut.termination.error.message, /longer than its 1 ms budget; send a smaller program/);
  const next = await prepareSource('const b: string = "x";\nreturn b;');
  assert.equal(next.code, 'const b         = "x";\nreturn b;');
});

test('a reference v1 runner is started with only the spec\'s flags when runner.protocol says so', async (t) => {
  const path = runnableFixture('reference-v1-runner');
  const stop = { graceMs: 300, forceMs: 1000 };
  const strict = codeMode({ policy: hostilePolicy(), runner: { path, stop, protocol: 'code-bridge-v1' } });
  const assumed = codeMode({ policy: hostilePolicy(), runner: { path, stop } });
  t.after(() => Promise.all([strict.close(), assumed.close()]));
  const run = await strict.run('return 1;');
  assert.equal(run.ok, true, JSON.stringify(run.error));
  assert.deepEqual(run.result.flags, ['--timeout-ms', '--max-calls', '--max-result-bytes', '--memory-bytes', '--max-frame-bytes']);
  // The same runner started as cordon-runner refuses --max-log-bytes: what the option prevents.
  const refused = await assumed.run('return 1;');
  assert.equal(refused.ok, false);
  assert.match(refused.error.message, /exit code 2; stderr: cordon-reference-v1: unknown option --max-log-bytes/);
  assert.throws(() => codeMode({ runner: { protocol: 'v2' } }), { code: 'ERR_CORDON_INVALID_OPTIONS', message: /runner\.protocol must be "cordon" .* or "code-bridge-v1"/ });
  await Promise.all([strict.close(), assumed.close()]);
  assert.deepEqual(sandboxCensus(), { bwrap: 0, runners: 0 });
});
