'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnIsolated, readOnly } = require('..');
const { fixture, runToEnd, collect } = require('./spawn-support');

test('bytes written to protocol come back over fd 3 and stdout goes to stderr, never to protocol', async () => {
  const execution = spawnIsolated([fixture('echo-fd3')], { policy: readOnly() });
  execution.protocol.write('{"type":"ping","n":1}\n');
  execution.protocol.end('{"type":"ping","n":2}\n');
  const { result, protocol, stderr } = await runToEnd(execution);
  assert.equal(result.returncode, 0);
  assert.equal(protocol, '{"type":"ping","n":1}\n{"type":"ping","n":2}\n');
  assert.equal(stderr, 'diagnostic on stdout\n');
  assert.equal(result.receipt.bytes.protocolIn, protocol.length);
  assert.equal(result.receipt.bytes.protocolOut, protocol.length);
  assert.equal(result.receipt.bytes.stderr, stderr.length);
});

test('protocol.end() half-closes: the program sees EOF and its last bytes still arrive', async () => {
  const execution = spawnIsolated(['/bin/sh', '-c', 'n=$(wc -c <&3); echo "got $n" >&3'], { policy: readOnly() });
  execution.protocol.end('12345');
  const { result, protocol } = await runToEnd(execution);
  assert.equal(result.returncode, 0);
  assert.equal(protocol, 'got 5\n');
});

test('a program that writes one frame and exits at once never loses it (500 runs)', async () => {
  let lost = 0;
  for (let i = 0; i < 500; i += 1) {
    const execution = spawnIsolated([fixture('frame-then-exit'), String(i)], { policy: readOnly() });
    const [text, result] = await Promise.all([collect(execution.protocol), execution.wait(), collect(execution.stderr)]);
    assert.equal(result.returncode, 0);
    if (text.toString() !== `{"type":"last","n":${i}}\n`) lost += 1;
  }
  assert.equal(lost, 0);
});

test('writes after the program closed fd 3 are discarded and counted, not thrown', async () => {
  // The program says on stderr when fd 3 is closed, so the write surely comes after it
  // (a fixed sleep raced a slow sandbox start: bytes that arrive first are not discarded).
  const execution = spawnIsolated(['/bin/sh', '-c', 'exec 3>&-; echo closed >&2; sleep 0.2'], { policy: readOnly() });
  const stderr = collect(execution.stderr);
  const protocol = collect(execution.protocol);
  await new Promise((resolve) => {
    let seen = '';
    const onData = (chunk) => {
      seen += chunk;
      if (seen.includes('closed\n')) { execution.stderr.off('data', onData); resolve(); }
    };
    execution.stderr.on('data', onData);
  });
  execution.protocol.write(Buffer.alloc(1024));
  execution.protocol.end();
  const [result] = await Promise.all([execution.wait(), protocol, stderr]);
  assert.equal(result.returncode, 0);
  assert.equal(result.receipt.bytes.protocolIn + result.receipt.bytes.protocolInDiscarded, 1024);
  assert.ok(result.receipt.bytes.protocolInDiscarded > 0);
});

test('host writes stall when the program does not read fd 3: drain stops coming, memory stays bounded', async () => {
  const execution = spawnIsolated(['/bin/sh', '-c', 'exec sleep 30'], { policy: readOnly(), stop: { graceMs: 100, forceMs: 1000 } });
  execution.stderr.resume();
  execution.protocol.resume();
  const chunk = Buffer.alloc(64 * 1024, 0x61);
  const LIMIT = 64 * 1024 * 1024;
  let written = 0;
  let stalled = false;
  // Write, and on backpressure wait for 'drain'; a drain that does not come
  // within 300 ms means the kernel socket is full and nothing is buffered
  // beyond it. Without backpressure this would reach LIMIT.
  while (written < LIMIT) {
    written += chunk.length;
    if (!execution.protocol.write(chunk)) {
      const drained = await new Promise((resolve) => {
        const timer = setTimeout(() => resolve(false), 300);
        execution.protocol.once('drain', () => { clearTimeout(timer); resolve(true); });
      });
      if (!drained) { stalled = true; break; }
    }
  }
  assert.ok(stalled, 'writes stalled');
  assert.ok(written < 16 * 1024 * 1024, `${written} bytes written before the stall`);
  assert.ok(execution.protocol.writableLength <= 2 * chunk.length, `${execution.protocol.writableLength} bytes buffered`);
  await execution.stop();
  const result = await execution.wait();
  assert.equal(result.receipt.stop.requested, true);
  assert.equal(result.receipt.bytes.protocolIn + result.receipt.bytes.protocolInDiscarded <= written, true);
});
