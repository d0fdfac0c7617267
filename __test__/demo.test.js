'use strict';

// `npm run demo` (README Quickstart command #1) cannot rot: examples/demo.js
// runs a real sandboxed Code Mode program over in-memory tools and prints the
// declarations, the result, the metrics, the events and the receipt summary.
// Runs after `npm run build` (the demo script itself builds first).

const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const SECTIONS = ['declarations()', 'result', 'metrics', 'events', 'receipt summary', 'capability scoping'];

/** The JSON printed between the `--- name ---` header and the next header. */
function section(stdout, name) {
  const start = stdout.indexOf(`--- ${name} ---\n`);
  assert.notEqual(start, -1, `no "${name}" section`);
  const body = stdout.slice(start + name.length + 9);
  const end = body.indexOf('\n--- ');
  return end === -1 ? body : body.slice(0, end);
}

test('examples/demo.js runs a sandboxed Code Mode program and prints result, metrics, events and receipt', () => {
  const out = spawnSync(process.execPath, [path.join(__dirname, '..', 'examples', 'demo.js')], { encoding: 'utf8', timeout: 60000 });
  assert.equal(out.status, 0, `${out.stdout}\n${out.stderr}`);
  for (const name of SECTIONS) assert.ok(out.stdout.includes(`--- ${name}`), `the demo prints its "${name}" section`);
  const result = JSON.parse(section(out.stdout, 'result'));
  assert.deepEqual(result, { byCustomer: { ada: 163, cyd: 178 }, openOrders: 3, topCustomer: 'cyd', topTotal: 178 });
  const metrics = JSON.parse(section(out.stdout, 'metrics'));
  assert.equal(metrics.toolCalls, 4);
  assert.ok(metrics.cumulativeResultBytes > 0);
  const events = section(out.stdout, 'events (arguments redacted: strings become byte counts)');
  assert.match(events, /execution\.started[\s\S]*tool\.requested[\s\S]*tool\.completed[\s\S]*execution\.finished/);
  const receipt = JSON.parse(section(out.stdout, 'receipt summary'));
  assert.match(receipt.backend, /^bubblewrap /);
  assert.equal(receipt.network, 'none');
  assert.match(receipt.policyDigest, /^sha256:[0-9a-f]{64}$/);
  assert.equal(receipt.outcome.status, 'exited');
  const scoped = JSON.parse(section(out.stdout, 'capability scoping: an inspect run'));
  assert.deepEqual(scoped, { cancel: 'undefined', visible: ['orders.search', 'orders.get'] });
});
