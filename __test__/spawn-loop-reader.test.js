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
