'use strict';

// What a provider writes in its first hour works as it would in plain
// JavaScript, in real sandboxed runs: a handler result with an undefined
// field is what JSON makes of it, a zod schema's parsed output (defaults,
// transforms) is what the handler gets, and a refinement that fails refuses
// the call with the library's own issue.

const test = require('node:test');
const assert = require('node:assert/strict');
const { z } = require('zod');
const { createCodeMode, readOnly, workspaceWrite } = require('..');

test('a handler result with an undefined field reaches the code as JSON.stringify makes it', async () => {
  const codeMode = createCodeMode({
    tools: [{
      name: 'row', description: 'a row', effect: 'read', inputSchema: { type: 'object' },
      handler: async () => ({ id: 7, note: undefined, tags: [undefined, 'a'] }),
    }],
  });
  const run = await codeMode.run('const r = await tools.row({}); return { keys: Object.keys(r), tags: r.tags };', { mode: 'inspect' });
  assert.equal(run.ok, true, JSON.stringify(run.error));
  assert.deepEqual(run.result, { keys: ['id', 'tags'], tags: [null, 'a'] });
});

test("a zod schema's handler gets zod's parsed output: defaults filled in, transforms applied", async () => {
  let seen = null;
  const codeMode = createCodeMode({
    tools: [{
      name: 'search', description: 'search', effect: 'read',
      inputSchema: z.object({ q: z.string().transform((s) => s.trim()), limit: z.number().int().default(10) }),
      handler: async (args) => { seen = args; return 'ok'; },
    }],
  });
  const run = await codeMode.run('return await tools.search({ q: "  shoes " });', { mode: 'inspect' });
  assert.equal(run.ok, true, JSON.stringify(run.error));
  assert.deepEqual(seen, { q: 'shoes', limit: 10 });
});

test("a zod refinement the JSON Schema cannot express refuses the call with zod's issue", async () => {
  let calls = 0;
  const codeMode = createCodeMode({
    tools: [{
      name: 'book', description: 'book', effect: 'read',
      inputSchema: z.object({ from: z.number(), to: z.number() }).refine((r) => r.to > r.from, { message: 'to must be after from', path: ['to'] }),
      handler: async () => { calls += 1; return 'booked'; },
    }],
  });
  const run = await codeMode.run('try { await tools.book({ from: 5, to: 1 }); } catch (e) { return e.message; }', { mode: 'inspect' });
  assert.equal(run.ok, true, JSON.stringify(run.error));
  assert.match(run.result, /INVALID_ARGUMENTS: arguments for "book" do not match its schema: to: to must be after from/);
  assert.equal(calls, 0);
});

test('a program that ends before a bracket is closed says "unexpected end of program" and what is open, not the wrapper\'s line', async () => {
  const codeMode = createCodeMode({ tools: [] });
  const cases = [
    ['const xs = [1, 2];\nif (xs.length) {\n  return xs;', /^SyntaxError: unexpected end of program: `\{` opened at <code>:2:16 is never closed$/],
    ['return Math.max(1, 2', /^SyntaxError: unexpected end of program: `\(` opened at <code>:1:16 is never closed$/],
    ['return 1 +', /^SyntaxError: unexpected end of program: the last statement is incomplete$/],
  ];
  for (const [code, expected] of cases) {
    const run = await codeMode.run(code);
    assert.equal(run.ok, false);
    assert.equal(run.error.kind, 'javascript');
    assert.match(run.error.message, expected, code);
  }
  const inside = await codeMode.run('const a = [1,\n2;\nreturn a');
  assert.match(inside.error.message, /^SyntaxError: .*\n\s+at <code>:2:2/, 'an error inside the program keeps its own position');
});

test('a policy the launcher refuses, or a mediated-network one, fails createCodeMode itself', () => {
  const tools = [];
  assert.throws(() => createCodeMode({ tools, policy: { ...readOnly(), filesystem: { workspace: 'rw' } } }), { code: 'ERR_CORDON_POLICY_INVALID' });
  assert.throws(() => createCodeMode({ tools, policy: { ...readOnly(), network: { mode: 'mediated', allow: ['example.org:443'] } } }), (error) => {
    assert.equal(error.code, 'ERR_CORDON_UNSUPPORTED');
    assert.match(error.message, /cordon-runner has no network client/);
    return true;
  });
  assert.doesNotThrow(() => createCodeMode({ tools, policy: workspaceWrite() }));
});
