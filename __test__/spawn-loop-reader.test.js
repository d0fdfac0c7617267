'use strict';

// fd 3 read on Node's own event loop (src/loop_reader.rs): no reader thread,
// the same flow control as before (one chunk per credit: a program that
// floods fd 3 is held by the socket until the consumer reads), and a run
// whose environment goes away mid-flood still settles (its supervision does
// not wait for a reader whose loop is gone).

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { spawnIsolated, readOnly } = require('..');
const { collect } = require('./spawn-support');

const h = require('./security/harness');
const skip = h.skipReason() || false;

/** The names of this process's threads. */
function threadNames() {
  return fs.readdirSync('/proc/self/task').map((tid) => {
    try { return fs.readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim(); } catch { return ''; }
  });
}

/** Resolves once `stream` has produced `text`. */
function said(stream, text) {
  return new Promise((resolve) => {
    let seen = '';
    stream.on('data', (chunk) => { seen += chunk; if (seen.includes(text)) resolve(); });
  });
}

test('fd 3 is read on the JS thread: no reader thread exists while a program sends frames', { skip }, async () => {
  const execution = spawnIsolated(['/bin/sh', '-c', 'while :; do echo frame >&3; sleep 0.01; done'], { policy: readOnly() });
  execution.stderr.resume();
  await said(execution.protocol, 'frame\nframe\n');
  const names = threadNames();
  assert.ok(names.includes('cordon-stderr'), `the census sees the launcher's threads: ${names}`);
  assert.ok(!names.includes('cordon-fd3-out'), `a fd 3 reader thread runs: ${names}`);
  await execution.stop();
});

test('a program that floods fd 3 is held until the consumer reads, then every byte arrives in order', { skip }, async () => {
  const bytes = 8 << 20;
  const execution = spawnIsolated(['/bin/sh', '-c', `head -c ${bytes} /dev/urandom | tee /tmp/sent >&3; sha256sum /tmp/sent >&2; echo done >&2`], { policy: readOnly() });
  const stderr = collect(execution.stderr);
  // Nobody reads the protocol for a while: with one chunk per credit and the
  // socket's buffer, far less than 8 MiB can leave the sandbox.
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.ok(execution.protocol.readableLength <= 128 * 1024, `buffered ${execution.protocol.readableLength} bytes unread`);
  const [data, result, diagnostics] = await Promise.all([collect(execution.protocol), execution.wait(), stderr]);
  assert.equal(result.returncode, 0);
  assert.equal(data.length, bytes);
  const sent = diagnostics.toString().split(' ')[0];
  const got = require('node:crypto').createHash('sha256').update(data).digest('hex');
  assert.equal(got, sent, 'the bytes arrive whole and in order');
  assert.equal(result.receipt.bytes.protocolOut, bytes);
});

test('a worker terminated while its program floods unread fd 3 leaves its run settled: no control root, no sandbox', { skip, timeout: 60_000 }, () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-loop-reader-'));
  fs.chmodSync(tmp, 0o711);
  const marker = `cordon-loop-reader-${process.pid}-${Date.now()}`;
  // A child Node with its own TMPDIR, so its control roots are its own to count.
  const script = `
    const fs = require('node:fs');
    const { Worker } = require('node:worker_threads');
    const worker = new Worker(\`
      const { parentPort } = require('node:worker_threads');
      const { spawnIsolated, readOnly } = require(${JSON.stringify(path.join(__dirname, '..'))});
      const e = spawnIsolated(['/bin/sh', '-c', 'echo up >&2; head -c 1073741824 /dev/zero >&3; : ${marker}'], { policy: readOnly() });
      e.stderr.once('data', () => setTimeout(() => parentPort.postMessage('up'), 200));
    \`, { eval: true });
    worker.once('message', async () => {
      await worker.terminate();
      const base = ${JSON.stringify(path.join(tmp, `cordon-${process.getuid()}`))};
      const left = () => { try { return fs.readdirSync(base).filter((n) => !n.startsWith('.') && n !== 'exec'); } catch { return []; } };
      const until = Date.now() + 15000;
      while (left().length > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
      console.log(JSON.stringify({ left: left() }));
    });`;
  try {
    const out = execFileSync(process.execPath, ['-e', script], { env: { ...process.env, TMPDIR: tmp }, encoding: 'utf8', timeout: 45_000 });
    assert.deepEqual(JSON.parse(out.trim().split('\n').pop()), { left: [] }, 'the run settled and removed its control root');
    const stray = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' }).split('\n').filter((l) => l.includes(marker));
    assert.deepEqual(stray, [], 'no sandbox process left');
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});

// Pulled chunks (src/loop_reader.rs › Pulled, src/loop_callback.rs): the poll
// callback calls JS straight from the loop, as Node calls an I/O callback.

test('a paused protocol stream holds a program flooding fd 3, and the JS thread does not spin while it waits', { skip }, async () => {
  const execution = spawnIsolated(['/bin/sh', '-c', 'head -c 1073741824 /dev/zero >&3'], { policy: readOnly() });
  execution.stderr.resume();
  let received = 0;
  execution.protocol.on('data', (chunk) => { received += chunk.length; });
  await new Promise((resolve) => execution.protocol.once('data', resolve));
  execution.protocol.pause();
  await new Promise((resolve) => setTimeout(resolve, 100));
  const heldAt = received;
  const cpu = process.cpuUsage();
  await new Promise((resolve) => setTimeout(resolve, 500));
  const used = process.cpuUsage(cpu);
  assert.equal(received, heldAt, 'no chunk reaches a paused stream');
  // One event chunk (64 KiB) past the 64 KiB high-water mark at most: a
  // paused stream is never handed a 256 KiB pulled chunk.
  assert.ok(execution.protocol.readableLength <= 128 * 1024, `buffered ${execution.protocol.readableLength} bytes unread`);
  assert.ok((used.user + used.system) / 1000 < 150, `the JS thread spun while held: ${used.user + used.system} µs of CPU in 500 ms`);
  execution.protocol.resume();
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.ok(received > heldAt + (1 << 20), `the flood goes on once resumed (${received - heldAt} bytes)`);
  await execution.stop();
});

test('ticks and microtasks queued by a data listener run before the next chunk, as after any I/O callback', { skip }, async () => {
  const execution = spawnIsolated(['/bin/sh', '-c', 'for i in 1 2 3 4 5 6 7 8; do echo frame$i >&3; sleep 0.02; done'], { policy: readOnly() });
  execution.stderr.resume();
  const order = [];
  execution.protocol.on('data', (chunk) => {
    const n = order.filter((e) => e.startsWith('data')).length;
    order.push(`data${n}`);
    process.nextTick(() => order.push(`tick${n}`));
    Promise.resolve().then(() => order.push(`micro${n}`));
  });
  await new Promise((resolve) => execution.protocol.on('end', resolve));
  await execution.wait();
  const chunks = order.filter((e) => e.startsWith('data')).length;
  assert.ok(chunks >= 2, `several chunks: ${order}`);
  for (let n = 0; n + 1 < chunks; n += 1) {
    const next = order.indexOf(`data${n + 1}`);
    assert.ok(order.indexOf(`tick${n}`) < next && order.indexOf(`micro${n}`) < next, `chunk ${n}'s tick and microtask before chunk ${n + 1}: ${order}`);
  }
});

test('a data listener that throws is an uncaughtException, as with a net.Socket, and the run still settles', { skip, timeout: 30_000 }, () => {
  const script = `
    const { spawnIsolated, readOnly } = require(${JSON.stringify(path.join(__dirname, '..'))});
    const e = spawnIsolated(['/bin/sh', '-c', 'echo frame >&3; sleep 0.2'], { policy: readOnly() });
    e.stderr.resume();
    process.on('uncaughtException', (error) => {
      console.log(JSON.stringify({ caught: error.message }));
      e.wait().then((r) => console.log(JSON.stringify({ returncode: r.returncode })));
    });
    e.protocol.on('data', () => { throw new Error('thrown by a data listener'); });`;
  const out = execFileSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 20_000 });
  const lines = out.trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(lines, [{ caught: 'thrown by a data listener' }, { returncode: 0 }]);
});

test('chunks pulled before the sandbox exits and those its teardown reads after arrive whole and in order', { skip, timeout: 60_000 }, async () => {
  for (let round = 0; round < 5; round += 1) {
    // Small writes, then the program exits while the JS thread is busy: the
    // teardown reads the rest through the event queue, behind the pulled chunk.
    const execution = spawnIsolated(['/bin/sh', '-c', 'seq 1 30000 >&3'], { policy: readOnly() });
    execution.stderr.resume();
    let text = '';
    let first = true;
    execution.protocol.on('data', (chunk) => {
      text += chunk;
      if (first) {
        first = false;
        const until = Date.now() + 150;
        while (Date.now() < until); // busy: the sandbox exits meanwhile
      }
    });
    await new Promise((resolve) => execution.protocol.on('end', resolve));
    const result = await execution.wait();
    assert.equal(result.returncode, 0);
    const expected = Array.from({ length: 30000 }, (_, i) => `${i + 1}\n`).join('');
    assert.ok(text === expected, `round ${round}: ${text.length} of ${expected.length} bytes, in order: ${text === expected}`);
  }
});

// Writes keep what a full socket had no room for until fd 3 is writable
// (lib/isolated-execution.js _writeSome, NativeExecution.writeSome).

test('a write larger than the socket keeps its rest until the program reads: every byte arrives in order, then the half-close', { skip, timeout: 30_000 }, async () => {
  const bytes = 4 << 20;
  const execution = spawnIsolated(['/bin/sh', '-c', 'sleep 0.3; sha256sum <&3 >&2'], { policy: readOnly() });
  const stderr = collect(execution.stderr);
  execution.protocol.resume();
  const data = require('node:crypto').randomBytes(bytes);
  await new Promise((resolve) => setTimeout(resolve, 100)); // fd 3 polled on the loop by now
  let kept = false;
  execution.protocol.write(data);
  kept = execution.protocol._rest !== null;
  execution.protocol.end();
  const [result, diagnostics] = await Promise.all([execution.wait(), stderr]);
  assert.ok(kept, 'the socket could not take 4 MiB at once: the rest was kept, not copied for the writer');
  assert.equal(result.returncode, 0);
  const want = require('node:crypto').createHash('sha256').update(data).digest('hex');
  assert.equal(diagnostics.toString().split(' ')[0], want, 'every byte, in order, before the EOF');
  assert.equal(result.receipt.bytes.protocolIn, bytes);
});

test('a run that ends while a write waits for room settles, and the write and the half-close are released', { skip, timeout: 30_000 }, async () => {
  const execution = spawnIsolated(['/bin/sh', '-c', 'sleep 0.3'], { policy: readOnly() });
  execution.stderr.resume();
  execution.protocol.resume();
  await new Promise((resolve) => setTimeout(resolve, 100));
  const finished = new Promise((resolve, reject) => {
    execution.protocol.once('finish', resolve);
    execution.protocol.once('error', reject);
  });
  execution.protocol.write(Buffer.alloc(4 << 20, 0x61));
  execution.protocol.end();
  const result = await execution.wait();
  assert.equal(result.returncode, 0);
  await finished;
  assert.ok(result.receipt.bytes.protocolIn < 4 << 20, 'the program never read it all');
});

test('an echo of 32 MiB through cat comes back whole and in order (writes kept, queued and direct interleave)', { skip, timeout: 60_000 }, async () => {
  const bytes = 32 << 20;
  const data = require('node:crypto').randomBytes(bytes);
  const execution = spawnIsolated(['/bin/sh', '-c', 'exec cat <&3 >&3'], { policy: readOnly() });
  execution.stderr.resume();
  const back = collect(execution.protocol);
  // As bench/bridge.js relays: 64 KiB writes from the start, on backpressure wait for 'drain'.
  for (let at = 0; at < bytes; at += 64 * 1024) {
    if (!execution.protocol.write(data.subarray(at, at + 64 * 1024))) await new Promise((resolve) => execution.protocol.once('drain', resolve));
  }
  execution.protocol.end();
  const [got, result] = await Promise.all([back, execution.wait()]);
  assert.equal(result.returncode, 0);
  assert.equal(got.length, bytes);
  assert.ok(got.equals(data), 'the same bytes, in order');
});

test('a pulled protocol listener runs in the spawner\'s async context, and one run\'s context never shows in another\'s', { skip }, async () => {
  // Round 15r, R15r-3: the addon calls the puller with N-API's empty context;
  // unbound, the spawner's store was lost and (Node 22) run A's enterWith()
  // showed in run B's listener.
  const { AsyncLocalStorage } = require('node:async_hooks');
  const als = new AsyncLocalStorage();
  const run = (cmd) => {
    const ex = spawnIsolated(['/bin/sh', '-c', cmd], { policy: readOnly() });
    ex.stderr.resume();
    return ex;
  };
  const seen = [];
  const a = als.run({ req: 'A' }, () => run('echo a >&3'));
  a.protocol.on('data', () => {
    seen.push(als.getStore()?.req);
    als.enterWith({ req: 'A-message' });
  });
  await a.wait();
  const b = als.run({ req: 'B' }, () => run('sleep 0.1; echo b >&3'));
  b.protocol.on('data', () => seen.push(als.getStore()?.req));
  await b.wait();
  assert.deepEqual(seen, ['A', 'B']);
});

test('`throw undefined` in a pulled protocol listener is an uncaught exception, as from any I/O callback', { skip }, () => {
  // Round 15r, R15r-4: a thrown `undefined` was taken for "nothing thrown".
  const script = `
    const { spawnIsolated, readOnly } = require(${JSON.stringify(path.join(__dirname, '..'))});
    process.on('uncaughtException', (e) => { console.log('uncaught', String(e)); process.exit(7); });
    const ex = spawnIsolated(['/bin/sh', '-c', 'echo x >&3'], { policy: readOnly() });
    ex.stderr.resume();
    ex.protocol.on('data', () => { throw undefined; });
  `;
  let out = '';
  let status = 0;
  try {
    out = execFileSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 30_000 });
  } catch (error) {
    out = `${error.stdout}`;
    status = error.status;
  }
  assert.equal(status, 7, out);
  assert.match(out, /^uncaught undefined/);
});

test('a write whose rest waits for room still arrives whole after the program half-closes fd 3', { skip }, async () => {
  // Round 15r, R15r-1: fd 3's end closed the loop's poll handle with its
  // writable watch, and the rest kept for it was never sent.
  const program = [
    'import os, socket, time',
    "os.write(3, b'hello')",
    'time.sleep(0.5)',
    's = socket.socket(fileno=3); s.shutdown(socket.SHUT_WR); s.detach()',
    'time.sleep(0.5)',
    'got = 0',
    'while True:',
    '    b = os.read(3, 1 << 20)',
    '    if not b: break',
    '    got += len(b)',
    "os.write(2, b'got %d' % got)",
  ].join('\n');
  const ex = spawnIsolated(['/usr/bin/python3', '-c', program], { policy: readOnly(), deadlineMs: 10_000 });
  let stderr = '';
  ex.stderr.on('data', (d) => { stderr += d; });
  const size = 8 << 20;
  // Written once fd 3 is pulled on the loop (its first chunk came), as a host answering a request does.
  ex.protocol.once('data', () => {
    ex.protocol.write(Buffer.alloc(size, 1));
    ex.protocol.end();
  });
  ex.protocol.resume();
  const outcome = await ex.wait();
  assert.equal(outcome.returncode, 0, stderr);
  assert.equal(stderr.trim(), `got ${size}`);
});

/**
 * Runs a program that sends one frame and exits without reading fd 3; on the
 * frame the host writes `size` bytes (fd 3 takes ~200 KiB: the rest is kept
 * for fd 3's writability) and, when `busyMs`, keeps the JS thread busy that
 * long, so the run's teardown is done before the loop hears of fd 3 again.
 */
async function writtenToAnExitingProgram({ size, busyMs, stop }) {
  const ex = spawnIsolated(['/bin/sh', '-c', 'echo frame >&3; sleep 0.2'], { policy: readOnly(), deadlineMs: 10_000 });
  ex.stderr.resume();
  let called = 0;
  ex.protocol.once('data', () => {
    ex.protocol.write(Buffer.alloc(size, 1), () => { called += 1; });
    ex.protocol.end();
    if (stop) ex.stop();
    const until = Date.now() + busyMs;
    while (Date.now() < until) { /* the JS thread is busy: the run ends meanwhile */ }
  });
  ex.protocol.resume();
  const outcome = await ex.wait();
  return { outcome, bytes: outcome.receipt.bytes, called };
}

for (const [name, how] of [
  ['exits', { busyMs: 0 }],
  ['exits while the JS thread is busy', { busyMs: 1500 }],
  ['is stopped while the JS thread is busy', { busyMs: 1500, stop: true }],
]) {
  test(`a write rest still kept when the program ${name} is counted in protocolInDiscarded`, { skip }, async () => {
    // Round 15r, R15r-1 (second half): a rest kept in JS for fd 3's writability
    // and never sent was dropped at the run's end without being counted, so
    // protocolIn + protocolInDiscarded fell short of what write() accepted.
    const size = 8 << 20;
    const { bytes, called } = await writtenToAnExitingProgram({ size, ...how });
    assert.equal(called, 1, 'the write callback ran');
    assert.ok(bytes.protocolIn > 0 && bytes.protocolIn < size, JSON.stringify(bytes));
    assert.equal(bytes.protocolIn + bytes.protocolInDiscarded, size, JSON.stringify(bytes));
  });
}

test('protocol.destroy() half-closes fd 3 like end(): the program reads EOF and exits, and every accepted byte is counted', { skip, timeout: 30_000 }, async () => {
  // Round 16r, R16r-1: ProtocolStream had no _destroy, so fd 3 stayed open
  // and a program reading to EOF waited for its deadline (rc 143 here).
  const program = [
    'import os, time',
    "os.write(3, b'x')",
    'n = 0',
    'while True:',
    '    b = os.read(3, 65536)',
    '    if not b: break',
    '    n += len(b)',
    '    time.sleep(0.002)',
    "os.write(2, b'eof after %d' % n)",
  ].join('\n');
  const ex = spawnIsolated(['/usr/bin/python3', '-c', program], { policy: readOnly(), deadlineMs: 20_000 });
  let stderr = '';
  ex.stderr.on('data', (d) => { stderr += d; });
  const size = 2 << 20;
  let called = 0;
  ex.protocol.on('error', () => {});
  ex.protocol.once('data', () => {
    ex.protocol.write(Buffer.alloc(size, 0x61), () => { called += 1; });
    setTimeout(() => ex.protocol.destroy(), 30);
  });
  ex.protocol.resume();
  const outcome = await ex.wait();
  assert.equal(outcome.returncode, 0, `${stderr} ${JSON.stringify(outcome.receipt.bytes)}`);
  const got = Number(/eof after (\d+)/.exec(stderr)?.[1]);
  const { protocolIn, protocolInDiscarded } = outcome.receipt.bytes;
  assert.equal(got, protocolIn, stderr);
  assert.equal(protocolIn + protocolInDiscarded, size, JSON.stringify(outcome.receipt.bytes));
  assert.equal(called, 1, 'the write callback ran');
});

test('writes made until wait() settles, to a program that exits at once, are each counted once: in the receipt or in protocolDroppedBytes', { skip, timeout: 30_000 }, async () => {
  // Round 16b, R16b-1: writes that met the closed writer (the program had
  // exited, JS did not know yet) reported success and were counted nowhere:
  // ~95 % of these bytes. A kept rest handed on after the close was also
  // counted twice.
  for (let round = 0; round < 3; round += 1) {
    const ex = spawnIsolated(['/usr/bin/python3', '-c', 'pass'], { policy: readOnly(), deadlineMs: 10_000 });
    ex.stderr.resume();
    ex.protocol.resume();
    let settled = false;
    let okBytes = 0;
    const waited = ex.wait().then((outcome) => { settled = true; return outcome; });
    while (!settled) {
      ex.protocol.write(Buffer.from('ab'), (error) => { if (!error) okBytes += 2; });
      await new Promise((resolve) => setImmediate(resolve));
    }
    const { receipt } = await waited;
    await new Promise((resolve) => setImmediate(resolve)); // the last callbacks
    const { protocolIn, protocolInDiscarded } = receipt.bytes;
    const counted = { protocolIn, protocolInDiscarded, dropped: ex.protocolDroppedBytes, okBytes };
    assert.ok(okBytes > 0, JSON.stringify(counted));
    assert.equal(protocolIn + protocolInDiscarded + ex.protocolDroppedBytes, okBytes, JSON.stringify(counted));
  }
});

test('stderr and end listeners run in the spawner\'s async context too', { skip }, async () => {
  // Round 16r, R16r-2: on Node 24 the threadsafe function's calls restored
  // no async context, so stderr 'data'/'end' and protocol 'end' listeners had
  // no AsyncLocalStorage store (the pulled protocol 'data' listener had it).
  const { AsyncLocalStorage } = require('node:async_hooks');
  const als = new AsyncLocalStorage();
  const seen = {};
  const ex = als.run({ req: 'r1' }, () => spawnIsolated(['/bin/sh', '-c', 'echo e >&2; echo p >&3'], { policy: readOnly() }));
  ex.stderr.on('data', () => { seen.stderrData = als.getStore()?.req ?? null; });
  ex.stderr.on('end', () => { seen.stderrEnd = als.getStore()?.req ?? null; });
  ex.protocol.on('data', () => { seen.protocolData = als.getStore()?.req ?? null; });
  ex.protocol.on('end', () => { seen.protocolEnd = als.getStore()?.req ?? null; });
  await ex.wait();
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(seen, { stderrData: 'r1', stderrEnd: 'r1', protocolData: 'r1', protocolEnd: 'r1' });
});
