'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnIsolated, readOnly } = require('./spawn-support').cordon;
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { once } = require('node:events');
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

test('host writes stall when the program does not read fd 3: no drain until it reads, memory stays bounded', async () => {
  // The program reads fd 3 only once the host creates /workspace/go.
  const workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-stall-'));
  fs.chmodSync(workspace, 0o755);
  const script = 'while [ ! -e /workspace/go ]; do sleep 0.05; done; exec cat <&3 >/dev/null';
  const execution = spawnIsolated(['/bin/sh', '-c', script], { policy: readOnly(), workspace });
  try {
    execution.stderr.resume();
    execution.protocol.resume();
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    const LIMIT = 64 * 1024 * 1024;
    let written = 0;
    let drains = 0;
    execution.protocol.on('drain', () => { drains += 1; });
    // Write; on backpressure wait for 'drain'. One that does not come within
    // 300 ms is a suspected stall. Without backpressure this reaches LIMIT.
    for (;;) {
      assert.ok(written < LIMIT, 'never stalled: the host buffered everything');
      written += chunk.length;
      if (execution.protocol.write(chunk)) continue;
      const before = drains;
      await new Promise((resolve) => setTimeout(resolve, 300));
      if (drains === before) break;
    }
    const buffered = execution.protocol.writableLength;
    assert.ok(written < 16 * 1024 * 1024, `${written} bytes written before the stall`);
    assert.ok(buffered <= 2 * chunk.length, `${buffered} bytes buffered`);
    // A slow host would drain meanwhile; a full socket does not, however long we wait.
    const drainsAtStall = drains;
    await new Promise((resolve) => setTimeout(resolve, 1000));
    assert.equal(drains, drainsAtStall, 'a drain came while the program was not reading: not a stall');
    assert.equal(execution.protocol.writableLength, buffered);
    // The program starts reading: the stall ends, and every byte arrives.
    fs.writeFileSync(path.join(workspace, 'go'), '');
    await once(execution.protocol, 'drain');
    execution.protocol.end();
    const result = await execution.wait();
    assert.equal(result.returncode, 0);
    assert.equal(result.receipt.bytes.protocolIn, written);
  } finally {
    await execution.stop();
    fs.rmSync(workspace, { recursive: true, force: true });
  }
});
