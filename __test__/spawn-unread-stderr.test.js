'use strict';

// A caller that never reads `stderr` must not stall its program: while
// nothing consumes the stream, its first 64 KiB are kept and the rest is
// dropped and counted (stderrDroppedBytes). A caller that reads gets
// everything, with backpressure.

const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnIsolated, readOnly } = require('./spawn-support').cordon;
const { collect } = require('./spawn-support');

const MIB = 1024 * 1024;
/** Writes 1 MiB to stderr, then one line to fd 3. */
const CHATTY = ['/bin/sh', '-c', '/usr/bin/head -c 1048576 /dev/zero >&2; echo done >&3'];
/** Before the fix the program stalled at ~128 KiB for ever; the deadline turns that into a failure. */
const DEADLINE_MS = 30_000;

test('a program writing 1 MiB to a stderr nobody reads finishes; 64 KiB are kept, the rest counted as dropped', async () => {
  const execution = spawnIsolated(CHATTY, { policy: readOnly(), deadlineMs: DEADLINE_MS });
  const protocol = collect(execution.protocol);
  const done = await execution.wait();
  assert.equal(done.returncode, 0, `signal ${done.signal}, stop ${JSON.stringify(done.receipt.stop)}`);
  assert.equal((await protocol).toString(), 'done\n');
  const kept = await collect(execution.stderr);
  assert.ok(kept.length >= 64 * 1024 && kept.length < MIB, `kept ${kept.length} bytes`);
  assert.equal(kept.length + execution.stderrDroppedBytes, MIB);
  assert.equal(done.receipt.bytes.stderr, MIB, 'the receipt counts everything the program wrote');
});

test('a caller that reads stderr gets every byte and nothing is dropped', async () => {
  const execution = spawnIsolated(CHATTY, { policy: readOnly(), deadlineMs: DEADLINE_MS });
  const [done, protocol, stderr] = await Promise.all([execution.wait(), collect(execution.protocol), collect(execution.stderr)]);
  assert.equal(done.returncode, 0);
  assert.equal(protocol.toString(), 'done\n');
  assert.equal(stderr.length, MIB);
  assert.equal(execution.stderrDroppedBytes, 0);
});
