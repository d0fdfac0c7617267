'use strict';

// The typed JS <-> Rust seam (src/lib.rs): one callback shape, enums and the
// write window exported by the addon, the receipt handed over as an object,
// and a write past the launcher's queue an error — never a silent drop.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnIsolated, readOnly } = require('..');
const binding = require('../binding.js');
const { collect, eventually } = require('./spawn-support');

/** A workspace whose `go` file releases a program that waits before reading fd 3. */
function gatedWorkspace(t) {
  const workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-seam-'));
  fs.chmodSync(workspace, 0o755);
  t.after(() => fs.rmSync(workspace, { recursive: true, force: true }));
  return { workspace, release: () => fs.writeFileSync(path.join(workspace, 'go'), '') };
}

/** Waits for /workspace/go, then reports on stderr how many bytes fd 3 carried until EOF. */
const COUNT_AFTER_GO = 'while [ ! -e /workspace/go ]; do sleep 0.05; done; wc -c <&3 >&2';

test('the addon calls onEvent with four arguments, kinds from EventKind, and the receipt as an object', async () => {
  const calls = [];
  let finished;
  const settled = new Promise((resolve) => { finished = resolve; });
  const native = binding.spawnNative(JSON.stringify({
    command: ['/bin/sh', '-c', 'echo out >&3; echo err >&2; exit 3'],
    policy: JSON.parse(JSON.stringify(readOnly())),
  }), function onEvent(...args) {
    calls.push(args);
    if (args[0] === binding.EventKind.Finished || args[0] === binding.EventKind.Failed) finished();
    if (args[0] === binding.EventKind.ProtocolData) native.grant(binding.StreamId.Protocol);
    if (args[0] === binding.EventKind.StderrData) native.grant(binding.StreamId.Stderr);
  });
  native.grant(binding.StreamId.Protocol);
  native.grant(binding.StreamId.Stderr);
  await settled;
  const kinds = new Set(Object.values(binding.EventKind));
  for (const args of calls) {
    assert.equal(args.length, 4, `one fixed shape, never an array: ${JSON.stringify(args)}`);
    assert.ok(kinds.has(args[0]), `kind ${args[0]} is an EventKind`);
  }
  const last = calls.at(-1);
  assert.equal(last[0], binding.EventKind.Finished);
  const { returncode, receipt } = last[3];
  assert.equal(returncode, 3);
  assert.equal(typeof receipt, 'object', 'the receipt crosses the seam as an object, not as JSON text');
  assert.equal(receipt.outcome.exitCode, 3);
  assert.deepEqual(receipt.bytes, { protocolIn: 0, protocolInDiscarded: 0, protocolOut: 4, stderr: 4 });
  const data = calls.filter((args) => args[0] === binding.EventKind.ProtocolData);
  assert.equal(Buffer.concat(data.map((args) => args[1])).toString(), 'out\n');
});

test('the native handle refuses a stream id or stop reason it does not know, instead of ignoring it', async () => {
  const execution = spawnIsolated(['/bin/sh', '-c', 'exit 0'], { policy: readOnly() });
  execution.stderr.resume();
  execution.protocol.resume();
  assert.throws(() => execution._native.grant(7));
  assert.throws(() => execution._native.stop('later'));
  assert.equal((await execution.wait()).returncode, 0);
});

test('a native write past the launcher queue depth throws ERR_CORDON_WRITE_QUEUE_FULL and queues nothing', async (t) => {
  assert.ok(Number.isInteger(binding.WRITE_QUEUE_DEPTH) && binding.WRITE_QUEUE_DEPTH >= 1, String(binding.WRITE_QUEUE_DEPTH));
  const { workspace, release } = gatedWorkspace(t);
  const execution = spawnIsolated(['/bin/sh', '-c', COUNT_AFTER_GO], { policy: readOnly(), workspace });
  t.after(() => execution.stop());
  const stderr = collect(execution.stderr);
  execution.protocol.resume();
  let writesDone = 0;
  const onEvent = execution._onEvent.bind(execution);
  execution._onEvent = (kind, ...rest) => {
    if (kind === binding.EventKind.WriteDone) writesDone += 1;
    onEvent(kind, ...rest);
  };
  // Far larger than a socket buffer: the writer thread blocks inside the
  // first chunk it takes, so the queue behind it fills and stays full.
  const chunk = Buffer.alloc(8 * 1024 * 1024, 0x61);
  let queued = 0;
  let refused = null;
  for (let i = 0; i < binding.WRITE_QUEUE_DEPTH + 2 && refused === null; i += 1) {
    try {
      assert.equal(execution._native.write(chunk), binding.WriteResult.Queued);
      queued += 1;
    } catch (error) {
      refused = error;
    }
  }
  assert.ok(refused, `${queued} writes queued and none refused`);
  assert.equal(refused.code, 'ERR_CORDON_WRITE_QUEUE_FULL', refused.message);
  // The writer may or may not have taken the first chunk off the queue yet.
  assert.ok(queued >= binding.WRITE_QUEUE_DEPTH && queued <= binding.WRITE_QUEUE_DEPTH + 1, `${queued} queued`);
  // The refused chunk was not sent: exactly the queued bytes reach the program.
  release();
  assert.ok(await eventually(() => writesDone === queued, 30_000), `${writesDone} of ${queued} writes done`);
  execution.protocol.end();
  const result = await execution.wait();
  assert.equal(result.returncode, 0);
  assert.equal(Number((await stderr).toString().trim()), queued * chunk.length);
  assert.equal(result.receipt.bytes.protocolIn, queued * chunk.length);
  assert.equal(result.receipt.bytes.protocolInDiscarded, 0);
});

test('the protocol stream keeps its writes within the native window: a burst to a program that reads late arrives whole', async (t) => {
  const { workspace, release } = gatedWorkspace(t);
  const execution = spawnIsolated(['/bin/sh', '-c', COUNT_AFTER_GO], { policy: readOnly(), workspace });
  t.after(() => execution.stop());
  const stderr = collect(execution.stderr);
  execution.protocol.resume();
  const errors = [];
  execution.protocol.on('error', (error) => errors.push(error));
  // One synchronous burst: the stream hands chunks to the native writer as
  // fast as it lets it, while the program reads nothing.
  const chunk = Buffer.alloc(1024 * 1024, 0x62);
  const CHUNKS = 16;
  for (let i = 0; i < CHUNKS; i += 1) execution.protocol.write(chunk);
  await new Promise((resolve) => setTimeout(resolve, 200));
  // A window wider than the launcher's queue fails here, with
  // ERR_CORDON_WRITE_QUEUE_FULL (and the stream could never half-close).
  assert.deepEqual(errors.map((e) => e.code), []);
  release();
  execution.protocol.end();
  const result = await execution.wait();
  assert.deepEqual(errors.map((e) => e.code), []);
  assert.equal(result.returncode, 0);
  assert.equal(Number((await stderr).toString().trim()), CHUNKS * chunk.length);
  assert.equal(result.receipt.bytes.protocolIn, CHUNKS * chunk.length);
});
