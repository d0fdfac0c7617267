'use strict';

// createCodeMode({resultBeforeTeardown: true}) over the real sandbox: run()
// resolves once the terminal frame decided the run, with the receipt's head
// (true fields only; the end fields are listed in `receiptPending`), and
// `final` brings the sandbox's verdict, the complete receipt and the audit
// record once the sandbox's processes are confirmed gone.

const test = require('node:test');
const assert = require('node:assert/strict');
const cordon = require('..');
const { runnerPids, codeMode } = require('./code-mode-support');
const { eventually } = require('./spawn-support');

const WAIT_MS = 10000;
const END_FIELDS = ['endedAt', 'durationMs', 'outcome', 'stop', 'bytes'];

function early(options = {}) {
  return cordon.createCodeMode({ tools: [], resultBeforeTeardown: true, ...options });
}

/** Every field of the head is the final receipt's, unchanged. */
function assertHeadOf(head, receipt) {
  for (const [key, value] of Object.entries(head)) {
    if (key === 'confinement') {
      for (const [part, inner] of Object.entries(value)) assert.deepEqual(inner, receipt.confinement[part], `confinement.${part}`);
    } else {
      assert.deepEqual(value, receipt[key], key);
    }
  }
}

test('a pooled run resolves before the sandbox is reported gone, with a receipt that claims nothing of the end', async (t) => {
  const audits = [];
  const mode = early({ pool: { size: 1 }, onAudit: (record) => audits.push(record) });
  t.after(() => mode.close());
  assert.ok(await eventually(() => runnerPids().length === 1, WAIT_MS), 'the idle runner is up');
  const result = await mode.run('return 6 * 7;');
  // That run() came before the end shows in the receipt: no end field is in it (below).
  assert.equal(result.ok, true, JSON.stringify(result.error));
  assert.equal(result.result, 42);
  assert.equal(result.receipt.invocationId.startsWith('pool-'), true);
  assert.equal(result.receipt.confinement.observed.status, 'observed');
  assert.deepEqual(result.receipt.confinement.mismatches, []);
  assert.deepEqual(result.receipt.confinement.channels, { namespace: 'empty' }, 'the head knows where fd 3 was made');
  for (const field of END_FIELDS) assert.equal(field in result.receipt, false, `${field} is not known yet, so not in the receipt`);
  assert.equal('cgroupOutcome' in result.receipt.confinement, false);
  assert.deepEqual(result.receiptPending, [...END_FIELDS, 'networkReceipts', 'confinement.cgroupOutcome']);
  assert.equal('networkReceipts' in result.receipt, false);
  assert.equal('audit' in result, false, 'the audit record needs the whole receipt: it comes with final');
  assert.equal(audits.length, 0);

  const verdict = await result.final;
  assert.equal(verdict.ok, true, JSON.stringify(verdict.error));
  assert.equal(verdict.receipt.stop.containmentConfirmed, true);
  assert.deepEqual(verdict.receipt.outcome, { status: 'exited', exitCode: 0, signal: null });
  assert.equal(typeof verdict.receipt.bytes.protocolIn, 'number');
  assertHeadOf(result.receipt, verdict.receipt);
  assert.equal(audits.length, 1);
  assert.deepEqual(verdict.audit, audits[0]);
  assert.match(verdict.audit.receiptDigest, /^sha256:/);
  assert.ok(Object.isFrozen(verdict) && Object.isFrozen(verdict.receipt));
});

test('a failing program resolves early too, and final keeps its error', async (t) => {
  // Pooled: the idle runner was observed before the run. A cold program that ends before the
  // launcher observes it resolves the ordinary way (no head to trust), which load makes likely.
  const mode = early({ pool: { size: 1 } });
  t.after(() => mode.close());
  assert.ok(await eventually(() => runnerPids().length === 1, WAIT_MS), 'the idle runner is up');
  const result = await mode.run('throw new Error("nope");');
  assert.equal(result.ok, false);
  assert.equal(result.error.kind, 'javascript');
  assert.ok(result.final, 'a failing run resolves before teardown as well');
  const verdict = await result.final;
  assert.equal(verdict.ok, false);
  assert.equal(verdict.error.kind, 'javascript');
  assert.equal(verdict.receipt.stop.containmentConfirmed, true);
  assertHeadOf(result.receipt, verdict.receipt);
});

test('without the option a result carries the whole receipt and no final', async (t) => {
  const mode = cordon.createCodeMode({ tools: [] });
  t.after(() => mode.close());
  const result = await mode.run('return 1;');
  assert.equal(result.ok, true, JSON.stringify(result.error));
  assert.equal(result.receipt.stop.containmentConfirmed, true);
  assert.equal('final' in result, false);
  assert.equal('receiptPending' in result, false);
  assert.match(result.audit.receiptDigest, /^sha256:/);
});

test('resultBeforeTeardown must be a boolean', () => {
  assert.throws(() => cordon.createCodeMode({ tools: [], resultBeforeTeardown: 'yes' }), { code: 'ERR_CORDON_INVALID_OPTIONS' });
});

test('a run resolved before teardown keeps its admission slot until its sandbox is gone', async (t) => {
  // terminal-then-linger ignores SIGTERM, so its sandbox outlives the terminal frame by the
  // 300 ms grace window: the slot is surely still held when run() resolves, and the launcher
  // surely observed it alive. (A cold real runner can end before it is observed, under load:
  // then the run resolves the ordinary way, with no final.)
  const mode = codeMode({ runner: 'hostile', resultBeforeTeardown: true, admission: { maxConcurrent: 1, maxQueued: 0 } });
  t.after(() => mode.close());
  const result = await mode.run('terminal-then-linger');
  assert.deepEqual([result.ok, result.result], [true, 'done'], JSON.stringify(result.error));
  assert.ok(result.final, 'the run resolved before teardown');
  assert.equal(mode.stats().active, 1, 'the sandbox still holds its slot');
  await assert.rejects(mode.run('terminal-then-linger'), { code: 'ERR_CORDON_ADMISSION' });
  const verdict = await result.final;
  assert.equal(verdict.ok, true);
  assert.ok(await eventually(() => mode.stats().active === 0, WAIT_MS), 'the slot is freed once the sandbox is gone');
  assert.equal((await mode.run('terminal-then-linger')).result, 'done');
});

test('a run the host fails (a runner breaking the protocol) resolves the ordinary way: whole receipt, no final', async (t) => {
  const mode = codeMode({ runner: 'hostile', resultBeforeTeardown: true });
  t.after(() => mode.close());
  const result = await mode.run('garbage');
  assert.deepEqual([result.ok, result.error.kind, result.error.code], [false, 'protocol', 'BAD_FRAME']);
  assert.equal('final' in result, false);
  assert.equal('receiptPending' in result, false);
  assert.equal(result.receipt.stop.containmentConfirmed, true, 'the receipt is the whole one, read after the end');
  assert.match(result.audit.receiptDigest, /^sha256:/);
});

test('an early result tells its pool the run is done with (the refill may start); a result after the teardown does not', async (t) => {
  const { IsolatedExecution } = require('../lib/isolated-execution');
  const delivered = [];
  const original = IsolatedExecution.prototype._resultDelivered;
  IsolatedExecution.prototype._resultDelivered = function resultDelivered() {
    delivered.push(this.pid);
    return original.call(this);
  };
  t.after(() => { IsolatedExecution.prototype._resultDelivered = original; });
  for (const resultBeforeTeardown of [true, false]) {
    delivered.length = 0;
    const mode = cordon.createCodeMode({ tools: [], pool: { size: 2 }, resultBeforeTeardown });
    try {
      assert.ok(await eventually(() => mode.poolStats().idle === 2, WAIT_MS));
      const spawned = mode.poolStats().spawned;
      const result = await mode.run('return 1');
      assert.equal(result.ok, true, JSON.stringify(result.error));
      let atFinal = null;
      await Promise.resolve(result.final).then(() => { atFinal = mode.poolStats().spawned; });
      assert.equal(delivered.length, resultBeforeTeardown ? 1 : 0, `resultBeforeTeardown ${resultBeforeTeardown}: ${delivered}`);
      if (resultBeforeTeardown) {
        // The runner is told to exit (its fd 3 closed) only after the turn that
        // starts the refill, so the run's end cannot come before it.
        assert.equal(atFinal, spawned + 1, 'the refill started before the run\'s teardown ended');
      }
    } finally {
      await mode.close();
    }
  }
});
