'use strict';

// Timeout and cancellation, while code is busy and while a handler is
// pending, through the real sandbox and cordon-runner.

const test = require('node:test');
const assert = require('node:assert/strict');
const { codeMode, sandboxCensus, tool } = require('./code-mode-support');

/** A tool whose handler waits until the run aborts it, and records that it was aborted. */
function pendingTool(record) {
  return tool('wait', (args, ctx) => new Promise((resolve) => {
    ctx.signal.addEventListener('abort', () => { record.aborted = true; resolve('too late'); }, { once: true });
  }));
}

function abortAfter(ms) {
  const controller = new AbortController();
  setTimeout(() => controller.abort(), ms);
  return controller.signal;
}

test('busy code past timeoutMs ends as timeout and leaves no sandbox', async () => {
  const result = await codeMode({ limits: { timeoutMs: 200 } }).run('while (true) {}');
  assert.equal(result.error.kind, 'timeout');
  assert.deepEqual(sandboxCensus(), { bwrap: 0, runners: 0 });
});

test('a handler still pending at the deadline is abandoned, its signal aborts, and the run ends as timeout', async () => {
  const record = {};
  const started = Date.now();
  const result = await codeMode({ tools: [pendingTool(record)], limits: { timeoutMs: 300 } }).run('return await tools.wait({});');
  assert.equal(result.error.kind, 'timeout', JSON.stringify(result.error));
  // Far under a hang, with room for a cold sandbox start under load (the kind says the deadline ended it).
  assert.ok(Date.now() - started < 10_000, `took ${Date.now() - started} ms`);
  assert.equal(record.aborted, true);
  // Whichever notices first — the host's deadline timer or the runner's timeout frame — abandons the call.
  const failedEvent = result.events.find((e) => e.type === 'tool.failed');
  assert.ok(['DEADLINE_EXCEEDED', 'RUN_ENDED'].includes(failedEvent.error.code), failedEvent.error.code);
  assert.equal(result.events.at(-1).type, 'execution.finished', 'no event after execution.finished');
});

test('cancelling busy code sends cancel and the result is cancelled', async () => {
  // The abort is armed by a tool call the code makes first, so it lands while the code is
  // running (not before ready, however slow the sandbox starts): the cancel frame path.
  const controller = new AbortController();
  const armed = tool('arm', () => { setTimeout(() => controller.abort(), 100); return null; });
  const started = Date.now();
  const result = await codeMode({ tools: [armed], limits: { timeoutMs: 5000 } })
    .run('await tools.arm({}); while (true) {}', { signal: controller.signal });
  assert.equal(result.error.kind, 'cancelled');
  assert.equal(result.metrics.toolCalls, 1, 'the code was running when the abort came');
  // The runner acted on the cancel frame: it interrupted the code and exited
  // by itself. Through the stop ladder alone the receipt would show a stop
  // requested and a SIGTERM (or SIGKILL) outcome.
  assert.deepEqual(result.receipt.outcome, { status: 'exited', exitCode: 0, signal: null });
  assert.equal(result.receipt.stop.requested, false, JSON.stringify(result.receipt.stop));
  assert.equal(result.receipt.stop.gracefulStopAttempted, false);
  // Before the 5 s timeoutMs: the cancel, not the deadline, ended it (kind and stop say how).
  assert.ok(Date.now() - started < 4900, `took ${Date.now() - started} ms`);
  assert.deepEqual(sandboxCensus(), { bwrap: 0, runners: 0 });
});

test('cancelling while a handler is pending aborts the handler and the result is cancelled', async () => {
  const record = {};
  const controller = new AbortController();
  // Abort once the handler is running, so the call is surely pending when the cancel comes.
  const waiting = tool('wait', (args, ctx) => new Promise((resolve) => {
    ctx.signal.addEventListener('abort', () => { record.aborted = true; resolve('too late'); }, { once: true });
    setImmediate(() => controller.abort());
  }));
  const result = await codeMode({ tools: [waiting] }).run('return await tools.wait({});', { signal: controller.signal });
  assert.equal(result.error.kind, 'cancelled');
  assert.equal(record.aborted, true);
  assert.equal(result.events.find((e) => e.type === 'tool.failed')?.error.code, 'CANCELLED');
});

test('a signal already aborted cancels the run without starting a sandbox', async () => {
  const result = await codeMode().run('return 1;', { signal: AbortSignal.abort() });
  assert.equal(result.error.kind, 'cancelled');
  assert.deepEqual(result.receipt, {});
});

test('cancelling a run while it waits for admission leaves the queue and returns cancelled', async () => {
  const mode = codeMode({ admission: { maxConcurrent: 1, maxQueued: 4 }, limits: { timeoutMs: 1000 } });
  const first = mode.run('while (true) {}');
  const queued = await mode.run('return 1;', { signal: abortAfter(100) });
  assert.equal(queued.error.kind, 'cancelled');
  assert.match(queued.error.message, /queued/);
  assert.equal((await first).error.kind, 'timeout');
  assert.equal(mode.stats().queued, 0);
});
