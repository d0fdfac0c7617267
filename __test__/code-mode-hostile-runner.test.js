'use strict';

// A runner that breaks code-bridge-v1 — garbage, oversized frames, wrong ids,
// silence, early exit — gives an error result of its own kind, quickly, with
// bounded host memory and no sandbox left behind. The runner here is the
// fixture __test__/fixtures/fake-runner-hostile inside the real sandbox.

const test = require('node:test');
const assert = require('node:assert/strict');
const { codeMode, sandboxCensus, tool } = require('./code-mode-support');

const hang = tool('hang', (args, ctx) => new Promise((resolve) => ctx.signal.addEventListener('abort', resolve)));
const mode = codeMode({ runner: 'hostile', tools: [tool('echo', (args) => args), hang], limits: { timeoutMs: 1000 } });

// The bound catches a run that hangs; it includes a cold start of the Node
// fixture runner (slow under load, slower on Node 24), so it is generous:
// the kind and code say which mechanism ended the run.
async function expectFailure(behaviour, kind, code, { withinMs = 15_000 } = {}) {
  const started = Date.now();
  const result = await mode.run(behaviour);
  const elapsed = Date.now() - started;
  assert.equal(result.ok, false, `${behaviour}: ${JSON.stringify(result)}`);
  assert.deepEqual([result.error.kind, result.error.code], [kind, code], `${behaviour}: ${result.error.message}`);
  assert.ok(elapsed < withinMs, `${behaviour} took ${elapsed} ms`);
  assert.deepEqual(sandboxCensus(), { bwrap: 0, runners: 0 }, 'no sandbox outlives its run');
  return result;
}

test('a runner that sends garbage is a protocol failure (BAD_FRAME)', async () => {
  await expectFailure('garbage', 'protocol', 'BAD_FRAME');
});

test('a runner that floods one endless line is cut off at the frame bound with bounded host memory', async () => {
  const before = process.memoryUsage().rss;
  await expectFailure('oversized', 'protocol', 'FRAME_TOO_LARGE');
  await expectFailure('oversized-ready', 'protocol', 'FRAME_TOO_LARGE');
  const grownMiB = (process.memoryUsage().rss - before) / (1 << 20);
  assert.ok(grownMiB < 64, `host RSS grew by ${grownMiB.toFixed(1)} MiB`);
});

test('a terminal frame with a duplicate key is refused (BAD_FRAME), not read as whichever copy JSON.parse kept', async () => {
  const result = await expectFailure('duplicate-keys', 'protocol', 'BAD_FRAME');
  assert.match(result.error.message, /duplicate key "ok"/);
});

test('a result nested 100 000 levels deep is refused (BAD_FRAME) instead of overflowing the host stack', async () => {
  const result = await expectFailure('deep-result', 'protocol', 'BAD_FRAME');
  assert.match(result.error.message, /nested deeper than 256 levels/);
});

test('a tool.call with the wrong id is a protocol failure (WRONG_CALL_ID)', async () => {
  await expectFailure('wrong-call-id', 'protocol', 'WRONG_CALL_ID');
});

test('a ready for another execution is a protocol failure (WRONG_EXECUTION_ID)', async () => {
  await expectFailure('wrong-execution-id', 'protocol', 'WRONG_EXECUTION_ID');
});

test('a frame type the runner never sends, or a second call while one is pending, is UNEXPECTED_FRAME', async () => {
  await expectFailure('unexpected-type', 'protocol', 'UNEXPECTED_FRAME');
  await expectFailure('two-calls-at-once', 'protocol', 'UNEXPECTED_FRAME');
});

test('a runner that keeps calling past maxToolCalls is stopped by the host with TOOL_CALL_LIMIT_EXCEEDED', async () => {
  const calls = [];
  const limited = codeMode({ runner: 'hostile', tools: [tool('echo', (args) => { calls.push(args.id); return args; })], limits: { toolCalls: 3 } });
  const result = await limited.run('calls-past-limit');
  assert.deepEqual([result.error.kind, result.error.code], ['limit', 'TOOL_CALL_LIMIT_EXCEEDED']);
  assert.deepEqual(calls, [1, 2, 3], 'the handler never runs past the limit');
  assert.deepEqual(sandboxCensus(), { bwrap: 0, runners: 0 });
});

test('a runner that never sends ready is stopped after the ready budget (READY_TIMEOUT)', async () => {
  await expectFailure('silent', 'protocol', 'READY_TIMEOUT', { withinMs: 20_000 });
});

test('a runner that goes silent after ready is stopped at the host deadline (timeout)', async () => {
  await expectFailure('silent-after-ready', 'timeout', 'HOST_DEADLINE_EXCEEDED');
});

test('a runner that exits without a terminal frame is a runner_exit failure naming its exit status', async () => {
  const clean = await expectFailure('exit-without-terminal', 'runner_exit', 'NO_TERMINAL_FRAME');
  assert.match(clean.error.message, /exit code 0/);
  const half = await expectFailure('half-frame-then-exit', 'runner_exit', 'NO_TERMINAL_FRAME');
  assert.match(half.error.message, /bytes of an unfinished frame.*exit code 3/);
  const unknown = await expectFailure('no-such-behaviour', 'runner_exit', 'NO_TERMINAL_FRAME');
  assert.match(unknown.error.message, /exit code 2; stderr: fake-runner-hostile: unknown behaviour/);
});

test('a runner that lingers after its terminal frame is stopped, and the terminal frame still decides', async () => {
  const result = await mode.run('terminal-then-linger');
  assert.equal(result.ok, true, JSON.stringify(result.error));
  assert.equal(result.result, 'done');
  assert.deepEqual(sandboxCensus(), { bwrap: 0, runners: 0 });
});

test('bytes after the terminal frame do not change the outcome', async () => {
  const result = await mode.run('spew-after-terminal');
  assert.equal(result.ok, true, JSON.stringify(result.error));
});

test('a runner that ignores cancel and SIGTERM is stopped by the ladder and the result is cancelled', async () => {
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 200);
  const started = Date.now();
  const result = await mode.run('ignore-cancel', { signal: controller.signal });
  assert.equal(result.error.kind, 'cancelled');
  assert.ok(Date.now() - started < 15_000, `took ${Date.now() - started} ms`);
  assert.deepEqual(sandboxCensus(), { bwrap: 0, runners: 0 });
});

test('an admission slot is freed only once the sandbox is gone, not at the terminal frame', async () => {
  // terminal-then-linger ignores SIGTERM, so each sandbox outlives its terminal frame by the
  // 300 ms grace window; a slot freed at the frame would let the next run's bwrap overlap it.
  const serial = codeMode({ runner: 'hostile', admission: { maxConcurrent: 1, maxQueued: 2, queueTimeoutMs: 60000 } });
  let peak = 0;
  let samples = 0;
  const sampler = setInterval(() => {
    peak = Math.max(peak, sandboxCensus().bwrap);
    samples += 1;
  }, 5);
  const results = await Promise.all([1, 2, 3].map(() => serial.run('terminal-then-linger')));
  clearInterval(sampler);
  for (const result of results) assert.deepEqual([result.ok, result.result], [true, 'done'], JSON.stringify(result.error));
  assert.ok(samples > 20, `only ${samples} samples`);
  assert.equal(peak, 1, `peak ${peak} sandboxes alive with maxConcurrent 1`);
  assert.deepEqual(sandboxCensus(), { bwrap: 0, runners: 0 });
  assert.equal(serial.stats().active, 0);
});
