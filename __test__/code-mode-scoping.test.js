'use strict';

// Capability scoping, schema checks and projection, through the real sandbox
// and cordon-runner.

const test = require('node:test');
const assert = require('node:assert/strict');
const { codeMode, orderTools, tool } = require('./code-mode-support');

test('an inspect run sees only read tools in Object.keys(tools)', async () => {
  const result = await codeMode({ tools: orderTools() }).run('return Object.keys(tools);', { mode: 'inspect' });
  assert.equal(result.ok, true, JSON.stringify(result.error));
  assert.deepEqual(result.result, ['orders.search', 'orders.get']);
});

test('an execute run sees every tool in catalogue order', async () => {
  const result = await codeMode({ tools: orderTools() }).run('return Object.keys(tools);');
  assert.deepEqual(result.result, ['orders.search', 'orders.get', 'orders.cancel']);
});

test('an inspect run cannot call a write tool even by name, and its handler never runs', async () => {
  const calls = [];
  const result = await codeMode({ tools: orderTools(calls) }).run("return await tools['orders.cancel']({ id: 'A-1' });", { mode: 'inspect' });
  assert.equal(result.ok, false);
  assert.equal(result.error.kind, 'javascript');
  assert.match(result.error.message, /tools\["orders\.cancel"\] is not a granted tool \(granted: orders\.search, orders\.get\)/);
  assert.deepEqual(calls, []);
  assert.equal(result.metrics.toolCalls, 0);
});

test('a runner that forges a call to an ungranted tool is refused by the host with TOOL_NOT_GRANTED', async () => {
  const calls = [];
  const mode = codeMode({ tools: orderTools(calls), runner: 'hostile' });
  const result = await mode.run('forge-call orders.cancel {"id":"A-1"}', { mode: 'inspect' });
  assert.equal(result.ok, true, JSON.stringify(result.error));
  assert.equal(result.result.ok, false);
  assert.match(result.result.error.message, /^TOOL_NOT_GRANTED: "orders.cancel" is not granted in inspect mode/);
  assert.equal(result.result.error.code, 'TOOL_NOT_GRANTED');
  assert.deepEqual(calls, []);
  const failedEvent = result.events.find((e) => e.type === 'tool.failed');
  assert.equal(failedEvent.error.code, 'TOOL_NOT_GRANTED');
  const unknown = await mode.run('forge-call no.such.tool {}');
  assert.match(unknown.result.error.message, /^TOOL_NOT_GRANTED/);
});

test('arguments that do not match the inputSchema are refused before the handler runs', async () => {
  const calls = [];
  const result = await codeMode({ tools: orderTools(calls) }).run(`
    try { await tools['orders.get']({ id: 'DROP TABLE' }); return 'ran'; }
    catch (error) { return String(error.message); }`);
  assert.equal(result.ok, true, JSON.stringify(result.error));
  assert.match(result.result, /tool failed: INVALID_ARGUMENTS: arguments for "orders.get" do not match its inputSchema: \/id must match pattern/);
  assert.deepEqual(calls, []);
});

test('a granted call with valid arguments runs the handler and returns its projection', async () => {
  const calls = [];
  const result = await codeMode({ tools: orderTools(calls) }).run(`
    const open = await tools['orders.search']({ customer: 'ada', status: 'open' });
    return { open, sum: open.reduce((n, o) => n + o.total, 0) };`);
  assert.equal(result.ok, true, JSON.stringify(result.error));
  assert.deepEqual(result.result.open, [{ id: 'A-1', status: 'open', total: 120.5 }, { id: 'A-3', status: 'open', total: 15.25 }]);
  assert.equal(result.result.sum, 135.75);
  assert.deepEqual(calls, [['orders.search', { customer: 'ada', status: 'open' }]]);
  assert.ok(!JSON.stringify(result.result).includes('tok_live'), 'the projection keeps card tokens out of the code');
});

test('handlers receive the run context, call id, mode and an abort signal', async () => {
  let seen;
  const mode = codeMode({ tools: [tool('probe', (args, ctx) => { seen = ctx; return { ok: true }; })] });
  await mode.run("await tools.probe({}); return 1;", { executionId: 'ctx-test-1', context: { user: 'u1' } });
  assert.equal(seen.executionId, 'ctx-test-1');
  assert.equal(seen.callId, 1);
  assert.equal(seen.mode, 'execute');
  assert.deepEqual(seen.context, { user: 'u1' });
  assert.ok(seen.signal instanceof AbortSignal);
});

test('a non-JSON tool result (function, BigInt, cycle, NaN, Infinity, class instance) is refused with RESULT_NOT_JSON', async () => {
  const cyclic = { a: 1 };
  cyclic.self = cyclic;
  const values = { fn: { f: () => 1 }, big: { n: 1n }, cycle: cyclic, nan: [NaN], inf: { x: Infinity }, date: { d: new Date(0) } };
  const tools = Object.entries(values).map(([name, value]) => tool(name, () => value));
  const result = await codeMode({ tools }).run(`
    const out = {};
    for (const name of Object.keys(tools)) {
      try { await tools[name]({}); out[name] = 'accepted'; } catch (error) { out[name] = error.message; }
    }
    return out;`);
  assert.equal(result.ok, true, JSON.stringify(result.error));
  for (const name of Object.keys(values)) assert.match(result.result[name], /tool failed: RESULT_NOT_JSON: result/, name);
  assert.match(result.result.fn, /result\.f is a function/);
  assert.match(result.result.cycle, /cycle/);
});

test('the model reads what is wrong with a non-JSON result; the advice to shape it in project() goes to the provider only', async () => {
  const result = await codeMode({ tools: [tool('when', () => ({ at: new Date(0) }))] }).run(
    'try { await tools.when({}); } catch (error) { return error.message; }');
  assert.match(result.result, /^tool failed: RESULT_NOT_JSON: result\.at is a Date[^;]*; the tool's result is not plain JSON \(a fault of the tool, not of the code\)$/);
  assert.doesNotMatch(result.result, /project\(\)/);
  const failed = result.events.find((event) => event.type === 'tool.failed');
  assert.equal(failed.error.code, 'RESULT_NOT_JSON');
  assert.match(failed.providerHint, /result\.at is a Date[^;]*; tool results must be plain JSON \(shape them in project\(\)\)/);
});

test('a tool result at the depth bound reaches the code; one level deeper is a catchable RESULT_NOT_JSON, never a protocol failure', async () => {
  const nested = (levels) => {
    let value = 1;
    for (let i = 0; i < levels; i += 1) value = [value];
    return value;
  };
  const mode = codeMode({ tools: [tool('deep', (args) => nested(args.levels))] });
  const result = await mode.run(`
    const depth = (v) => { let n = 0; while (Array.isArray(v)) { v = v[0]; n += 1; } return n; };
    const out = [depth(await tools.deep({ levels: 126 }))];
    try { await tools.deep({ levels: 127 }); out.push('accepted'); } catch (error) { out.push(error.message); }
    return out;`);
  assert.equal(result.ok, true, JSON.stringify(result.error));
  assert.equal(result.result[0], 126);
  assert.match(result.result[1], /^tool failed: RESULT_NOT_JSON: result(\[0\])+ is nested deeper than 126 levels/);
});

test('project() can turn a non-JSON handler result into JSON', async () => {
  const mode = codeMode({ tools: [tool('when', () => new Date(Date.UTC(2026, 10, 30)), { project: (d) => ({ iso: d.toISOString() }) })] });
  const result = await mode.run('return await tools.when({});');
  assert.deepEqual(result.result, { iso: '2026-11-30T00:00:00.000Z' });
});

test('a throwing handler becomes a catchable TOOL_FAILED error in the code and a tool.failed event', async () => {
  const mode = codeMode({ tools: [tool('explode', async () => { throw new Error('database unavailable'); })] });
  const caught = await mode.run("try { await tools.explode({}); } catch (e) { return e.message; }");
  assert.equal(caught.result, 'tool failed: TOOL_FAILED: database unavailable');
  const failedEvent = caught.events.find((e) => e.type === 'tool.failed');
  assert.equal(failedEvent.error.code, 'TOOL_FAILED');
  const uncaught = await mode.run('return await tools.explode({});');
  assert.equal(uncaught.ok, false);
  assert.equal(uncaught.error.kind, 'javascript');
  assert.match(uncaught.error.message, /database unavailable/);
});
