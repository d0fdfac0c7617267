'use strict';

// Concurrent tool calls (the runner's concurrentToolCalls extension, confirmed
// in ready): `Promise.all` over tools runs the handlers at the same time on
// the host, results come back in any order, every limit stays exact, and
// whatever ends the run — cancel, timeout, a limit, the terminal frame —
// aborts every outstanding handler. Real runner, real sandbox.

const test = require('node:test');
const assert = require('node:assert/strict');
const { codeMode, tool, sandboxCensus } = require('./code-mode-support');

/** A tool whose handlers wait for `release()` (or their signal), recording how many run at once. */
function gate() {
  const state = { running: 0, peak: 0, entered: 0, aborted: 0, waiters: [] };
  state.release = () => { for (const wake of state.waiters.splice(0)) wake(); };
  state.enteredAtLeast = async (n) => { while (state.entered < n) await new Promise((r) => setTimeout(r, 5)); };
  state.tool = tool('wait', (args, ctx) => new Promise((resolve) => {
    state.entered += 1;
    state.running += 1;
    state.peak = Math.max(state.peak, state.running);
    const done = (value) => { state.running -= 1; resolve(value); };
    state.waiters.push(() => done({ i: args.i }));
    ctx.signal.addEventListener('abort', () => { state.aborted += 1; done(null); }, { once: true });
  }));
  return state;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

test('Promise.all over 8 calls runs all 8 handlers at once and returns the results in call order', async () => {
  const g = gate();
  const mode = codeMode({ tools: [g.tool] });
  const run = mode.run('const rs = await Promise.all([0,1,2,3,4,5,6,7].map((i) => tools.wait({i}))); return rs.map((r) => r.i);');
  await g.enteredAtLeast(8);
  assert.equal(g.peak, 8, 'all eight handlers were entered before any was released');
  g.release();
  const result = await run;
  assert.deepEqual(result.result, [0, 1, 2, 3, 4, 5, 6, 7], JSON.stringify(result.error));
  assert.equal(result.metrics.toolCalls, 8);
});

test('maxOutstandingCalls bounds the handlers running at once; the rest wait in the runner and still all run', async () => {
  const mode = codeMode({
    limits: { maxOutstandingCalls: 2 },
    tools: [(() => {
      let running = 0;
      let peak = 0;
      const t = tool('slow', async (args) => { running += 1; peak = Math.max(peak, running); await sleep(300); running -= 1; return { i: args.i, peak }; });
      return t;
    })()],
  });
  const result = await mode.run('const rs = await Promise.all([1,2,3,4,5,6].map((i) => tools.slow({i}))); return rs;');
  assert.equal(result.ok, true, JSON.stringify(result.error));
  assert.deepEqual(result.result.map((r) => r.i), [1, 2, 3, 4, 5, 6]);
  assert.equal(Math.max(...result.result.map((r) => r.peak)), 2, 'never more than two handlers at once');
});

test('results may come back in any order: a fast call started second resolves first', async () => {
  const mode = codeMode({ tools: [tool('after', async (args) => { await sleep(args.ms); return args.name; })] });
  const result = await mode.run(`
    const order = [];
    const slow = tools.after({ms: 2000, name: 'slow'}).then((v) => order.push(v));
    const fast = tools.after({ms: 5, name: 'fast'}).then((v) => order.push(v));
    await Promise.all([slow, fast]);
    return order;`);
  assert.deepEqual(result.result, ['fast', 'slow'], JSON.stringify(result.error));
  const completed = result.events.filter((e) => e.type === 'tool.completed').map((e) => e.callId);
  assert.deepEqual(completed, [2, 1], 'the host answered call 2 before call 1');
});

test('the tool-call limit is exact in a fan-out: past it the run ends limit, no handler runs for the extra calls and the others are aborted', async () => {
  const g = gate();
  const mode = codeMode({ tools: [g.tool], limits: { toolCalls: 3 } });
  const result = await mode.run('await Promise.all([1,2,3,4,5].map((i) => tools.wait({i}))); return 1;');
  assert.deepEqual([result.ok, result.error.kind, result.error.code], [false, 'limit', 'TOOL_CALL_LIMIT_EXCEEDED']);
  assert.ok(g.entered <= 3, `${g.entered} handlers ran with a limit of 3`);
  assert.equal(g.aborted, g.entered, 'every handler that started was aborted when the run ended');
  assert.deepEqual(sandboxCensus(), { bwrap: 0, runners: 0 });
});

test('cumulativeResultBytes is exact when results finish together: the one that crosses it fails and latches the run', async () => {
  // All four handlers wait for one gate, so their results complete in the same turn of the event loop.
  let open;
  const gate = new Promise((resolve) => { open = resolve; });
  let entered = 0;
  const mode = codeMode({
    tools: [tool('blob', async () => { entered += 1; if (entered === 4) open(); await gate; return 'x'.repeat(298); })],
    limits: { toolResultBytes: 1000, cumulativeResultBytes: 1000 },
  });
  // Each result is 300 JSON bytes: three fit in 1000, the fourth does not, whichever completes last.
  const result = await mode.run('return await Promise.all([1, 2, 3, 4].map((i) => tools.blob({i})));');
  assert.deepEqual([result.error?.kind, result.error?.code], ['limit', 'CUMULATIVE_RESULT_LIMIT_EXCEEDED'], JSON.stringify(result.error));
  assert.equal(result.metrics.cumulativeResultBytes, 900, 'only the results that fit were delivered and counted');
  assert.match(result.error.message, /would total 1200 bytes, the limit is 1000/);
});

test('a cancel with calls outstanding aborts every handler and ends cancelled', async () => {
  const g = gate();
  const controller = new AbortController();
  const mode = codeMode({ tools: [g.tool] });
  const run = mode.run('return await Promise.all([1,2,3,4].map((i) => tools.wait({i})));', { signal: controller.signal });
  await g.enteredAtLeast(4);
  controller.abort();
  const result = await run;
  assert.equal(result.error?.kind, 'cancelled');
  assert.equal(g.aborted, 4, 'all four handlers saw their signal abort');
  const failedCodes = result.events.filter((e) => e.type === 'tool.failed').map((e) => e.error.code);
  assert.deepEqual(failedCodes, ['CANCELLED', 'CANCELLED', 'CANCELLED', 'CANCELLED']);
});

test('the deadline with calls outstanding aborts every handler and ends timeout', async () => {
  const g = gate();
  const mode = codeMode({ tools: [g.tool], limits: { timeoutMs: 400 } });
  const result = await mode.run('return await Promise.all([1,2,3].map((i) => tools.wait({i})));');
  assert.equal(result.error?.kind, 'timeout', JSON.stringify(result.error));
  assert.equal(g.aborted, 3);
});

test('a program that returns without awaiting its calls ends ok, and the terminal frame aborts the calls still running', async () => {
  const g = gate();
  const mode = codeMode({ tools: [g.tool] });
  const result = await mode.run('tools.wait({i: 1}); tools.wait({i: 2}); return "early";');
  assert.equal(result.result, 'early', JSON.stringify(result.error));
  assert.equal(g.aborted, g.entered, 'no handler outlives the run');
  assert.ok(!result.events.some((e) => e.type === 'tool.completed'));
});

test('a failing call in a fan-out is catchable per promise (allSettled) while the others succeed', async () => {
  const mode = codeMode({ tools: [tool('maybe', async (args) => { if (args.fail) throw new Error('no such id'); return args.id; })] });
  const result = await mode.run(`
    const settled = await Promise.allSettled([1, 2, 3].map((id) => tools.maybe({id, fail: id === 2})));
    return settled.map((s) => s.status === 'fulfilled' ? s.value : s.reason.message);`);
  assert.deepEqual(result.result, [1, 'tool failed: TOOL_FAILED: no such id', 3], JSON.stringify(result.error));
});

test('a runner that confirms more outstanding calls than asked is refused (READY_LIMIT_RAISED)', async () => {
  const mode = codeMode({ runner: 'hostile' });
  for (const behaviour of ['raise-extension', 'unasked-extension']) {
    const result = await mode.run(behaviour);
    assert.deepEqual([result.error?.kind, result.error?.code], ['protocol', 'READY_LIMIT_RAISED'], behaviour);
  }
});

test('a runner that sends more calls at once than it confirmed is a protocol failure, and the handlers it got are aborted', async () => {
  let entered = 0;
  let aborted = 0;
  const hang = tool('hang', (args, ctx) => new Promise((resolve) => {
    entered += 1;
    ctx.signal.addEventListener('abort', () => { aborted += 1; resolve(); });
  }));
  const mode = codeMode({ runner: 'hostile', tools: [hang], limits: { maxOutstandingCalls: 3 } });
  const result = await mode.run('calls-past-outstanding');
  assert.deepEqual([result.error?.kind, result.error?.code], ['protocol', 'UNEXPECTED_FRAME']);
  assert.match(result.error.message, /while 3 calls are outstanding \(confirmed maxOutstanding 3\)/);
  // Arguments are validated asynchronously, so a handler may not have started yet when the run fails.
  assert.ok(entered <= 3, `${entered} handlers ran`);
  assert.equal(aborted, entered, 'every handler that started was aborted');
});
