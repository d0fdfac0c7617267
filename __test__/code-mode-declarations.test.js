'use strict';

// declarations() output is real TypeScript: it compiles under `tsc --strict`
// against a sample program, and it rejects programs that misuse the tools.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { defineTools, grantTools } = require('../lib/code-mode/tools');
const { renderDeclarations, renderDescription } = require('../lib/code-mode/declarations');
const { resolveLimits } = require('../lib/code-mode/limits');

const TSC = path.join(__dirname, '..', 'node_modules', '.bin', 'tsc');

const order = {
  type: 'object',
  properties: {
    id: { type: 'string', description: 'Order id, e.g. "A-1" */ evil' },
    status: { enum: ['open', 'shipped', 'cancelled'] },
    total: { type: 'number' },
    lines: { type: 'array', items: { type: 'object', properties: { sku: { type: 'string' }, qty: { type: 'integer' } }, required: ['sku', 'qty'] } },
    'customer-email': { type: ['string', 'null'] },
  },
  required: ['id', 'status', 'total', 'lines'],
  additionalProperties: false,
};
const tools = defineTools([
  {
    name: 'orders.search', description: 'Search orders by status', effect: 'read', handler() {},
    inputSchema: { type: 'object', properties: { status: { enum: ['open', 'shipped', 'cancelled'] }, limit: { type: 'integer', minimum: 1 } } },
    outputSchema: { type: 'object', properties: { orders: { type: 'array', items: order } }, required: ['orders'] },
  },
  {
    name: 'orders.get', description: 'Get one order', effect: 'read', handler() {},
    inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] }, outputSchema: order,
  },
  {
    name: 'orders.cancel', description: 'Cancel an order', effect: 'write', handler() {},
    inputSchema: { type: 'object', properties: { id: { type: 'string' }, reason: { anyOf: [{ type: 'string' }, { const: 42 }] },
      meta: { type: 'object', additionalProperties: { type: 'number' } }, tags: { allOf: [{ type: 'array' }] }, ref: { not: { type: 'string' } } },
    required: ['id'] },
  },
]);

const SAMPLE = `
async function program(): Promise<unknown> {
  const found = await tools["orders.search"]({ status: "open", limit: 5 });
  const first = found.orders[0];
  const order = await tools["orders.get"]({ id: first.id });
  const qty: number = order.lines.reduce((n, line) => n + line.qty, 0);
  const email: string | null | undefined = order["customer-email"];
  await tools["orders.cancel"]({ id: order.id, reason: 42, meta: { a: 1 }, ref: { anything: true } });
  await tools["orders.search"]();
  return { id: order.id, status: order.status, qty, email };
}
export { program };
`;

function compile(declarations, program) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-decl-'));
  try {
    fs.writeFileSync(path.join(dir, 'tools.d.ts'), declarations);
    fs.writeFileSync(path.join(dir, 'program.ts'), program);
    // `types: []` keeps @types/node out: the model's world has no Node globals.
    fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { strict: true, noEmit: true, target: 'es2022', lib: ['es2022'], types: [] },
      files: ['tools.d.ts', 'program.ts'],
    }));
    execFileSync(TSC, ['-p', dir], { cwd: dir, encoding: 'utf8', stdio: 'pipe' });
    return { ok: true, output: '' };
  } catch (error) {
    return { ok: false, output: `${error.stdout}${error.stderr}` };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

test('declarations() of every granted tool compile under tsc --strict against a sample program', () => {
  const declarations = renderDeclarations(grantTools(tools, 'execute'));
  const { ok, output } = compile(declarations, SAMPLE);
  assert.ok(ok, `${output}\n---\n${declarations}`);
  assert.ok(!declarations.includes('*/ evil'), 'a description cannot close the doc comment');
});

test('the declarations reject a program that passes a wrong argument type', () => {
  const declarations = renderDeclarations(grantTools(tools, 'execute'));
  const { ok, output } = compile(declarations, 'export const p = tools["orders.get"]({ id: 7 });\n');
  assert.equal(ok, false);
  assert.match(output, /not assignable to type 'string'/);
});

test('inspect-mode declarations leave out write tools, so calling one does not compile', () => {
  const declarations = renderDeclarations(grantTools(tools, 'inspect'));
  assert.ok(!declarations.includes('orders.cancel'));
  const { ok, output } = compile(declarations, 'export const p = tools["orders.cancel"]({ id: "A" });\n');
  assert.equal(ok, false);
  assert.match(output, /orders\.cancel/);
});

test('description() tells the model how to write the code, the limits, and the granted tools', () => {
  const text = renderDescription(grantTools(tools, 'inspect'), resolveLimits({ toolCalls: 7, timeoutMs: 1500 }));
  assert.match(text, /body of a strict-mode async function/);
  assert.match(text, /at most 7 tool calls, 1500 ms/);
  assert.match(text, /"orders\.search"/);
  assert.ok(!text.includes('orders.cancel'));
});
