'use strict';

// `npm run demo`: a realistic Code Mode program, run in the real sandbox.
// A provider exposes three in-memory order tools; the "model" writes one
// program that searches, fetches and summarises, instead of ten chat turns.
// The inspect run shows capability scoping: the write tool is not even there.

const { createCodeMode } = require('..');

const ORDERS = [
  { id: 'A-1001', customer: 'ada', status: 'open', lines: [{ sku: 'KB-1', qty: 1, price: 89 }, { sku: 'MS-2', qty: 2, price: 25 }], card: { token: 'tok_live_ada' } },
  { id: 'A-1002', customer: 'bob', status: 'shipped', lines: [{ sku: 'MN-4', qty: 1, price: 240 }], card: { token: 'tok_live_bob' } },
  { id: 'A-1003', customer: 'ada', status: 'open', lines: [{ sku: 'CB-9', qty: 3, price: 8 }], card: { token: 'tok_live_ada' } },
  { id: 'A-1004', customer: 'cyd', status: 'open', lines: [{ sku: 'KB-1', qty: 2, price: 89 }], card: { token: 'tok_live_cyd' } },
];

const orderSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    customer: { type: 'string' },
    status: { enum: ['open', 'shipped'] },
    lines: { type: 'array', items: { type: 'object', properties: { sku: { type: 'string' }, qty: { type: 'integer' }, price: { type: 'number' } }, required: ['sku', 'qty', 'price'] } },
  },
  required: ['id', 'customer', 'status', 'lines'],
};

const tools = [
  {
    name: 'orders.search',
    description: 'Find order ids by status and/or customer',
    effect: 'read',
    inputSchema: { type: 'object', properties: { status: { enum: ['open', 'shipped'] }, customer: { type: 'string' } }, additionalProperties: false },
    outputSchema: { type: 'array', items: { type: 'string' } },
    handler: async ({ status, customer }) => ORDERS.filter((o) => (!status || o.status === status) && (!customer || o.customer === customer)),
    project: (orders) => orders.map((o) => o.id), // the code sees ids, not card tokens
  },
  {
    name: 'orders.get',
    description: 'Get one order by id',
    effect: 'read',
    inputSchema: { type: 'object', properties: { id: { type: 'string', pattern: '^A-[0-9]+$' } }, required: ['id'], additionalProperties: false },
    outputSchema: orderSchema,
    handler: async ({ id }) => {
      const order = ORDERS.find((o) => o.id === id);
      if (!order) throw new Error(`no order ${id}`);
      return order;
    },
    project: ({ card, ...order }) => order,
  },
  {
    name: 'orders.cancel',
    description: 'Cancel an open order',
    effect: 'write',
    inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'], additionalProperties: false },
    handler: async ({ id }) => ({ cancelled: id }),
  },
];

// What a model would write after reading codeMode.description().
const PROGRAM = `
const ids = await tools['orders.search']({ status: 'open' });
const orders = [];
for (const id of ids) orders.push(await tools['orders.get']({ id }));
const byCustomer = {};
for (const order of orders) {
  const total = order.lines.reduce((sum, line) => sum + line.qty * line.price, 0);
  byCustomer[order.customer] = (byCustomer[order.customer] ?? 0) + total;
}
const [topCustomer, topTotal] = Object.entries(byCustomer).sort((a, b) => b[1] - a[1])[0];
return { openOrders: ids.length, byCustomer, topCustomer, topTotal };
`;

function receiptSummary(receipt) {
  if (!receipt || Object.keys(receipt).length === 0) return '(no receipt)';
  return JSON.stringify({
    invocationId: receipt.invocationId,
    backend: receipt.backend && `${receipt.backend.name} ${receipt.backend.version ?? ''}`.trim(),
    network: receipt.policy?.network?.mode,
    policyDigest: receipt.policy?.digest,
    outcome: receipt.outcome,
    durationMs: receipt.durationMs,
    stop: receipt.stop,
    bytes: receipt.bytes,
  }, null, 2);
}

function printEvent(event) {
  const parts = [event.type.padEnd(19), event.callId !== undefined ? `call ${event.callId}` : '      '];
  if (event.name) parts.push(event.name.padEnd(14));
  if (event.durationMs !== undefined) parts.push(`${event.durationMs} ms`);
  if (event.resultBytes !== undefined) parts.push(`${event.resultBytes} B`);
  if (event.arguments) parts.push(`args ${JSON.stringify(event.arguments)}`);
  if (event.error) parts.push(`error ${JSON.stringify(event.error)}`);
  console.log(`  ${parts.join('  ')}`);
}

async function main() {
  const codeMode = createCodeMode({ tools, limits: { timeoutMs: 2000, toolCalls: 20 } });
  console.log('--- declarations() given to the model (inspect mode) ---');
  console.log(codeMode.declarations({ mode: 'inspect' }));

  const run = await codeMode.run(PROGRAM, { mode: 'inspect' });
  console.log('--- result ---');
  console.log(JSON.stringify(run.ok ? run.result : run.error, null, 2));
  console.log('--- metrics ---');
  console.log(JSON.stringify(run.metrics));
  console.log('--- events (arguments redacted: strings become byte counts) ---');
  run.events.forEach(printEvent);
  console.log('--- receipt summary ---');
  console.log(receiptSummary(run.receipt));

  const scoped = await codeMode.run("return { visible: Object.keys(tools), cancel: typeof tools['orders.cancel'] };", { mode: 'inspect' });
  console.log('--- capability scoping: an inspect run ---');
  console.log(JSON.stringify(scoped.ok ? scoped.result : scoped.error));
  if (!run.ok || !scoped.ok) process.exitCode = 1;
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
