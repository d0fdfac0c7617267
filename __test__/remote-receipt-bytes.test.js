'use strict';

// R11-1 through a real `cordon host` (Unix socket): a receipt the host keeps
// holds the first 4096 bytes of the run's arguments and a digest of them
// all, so what a tenant leaves on the host's disk per run does not grow with
// the arguments it chooses (a receipt kept them verbatim: ~0.93 MB a run
// with 9 × 100 KiB arguments, and retention counts receipts, not bytes).
// The client's `exit` still has them whole.
//
// R12-8: the same for the policy's network allowlist (1024 destinations of
// 250-byte names kept whole: 361 KB a receipt). R12-3: an `exit` whose argv
// is just under the spawn frame's 1 MiB passed the 1 MiB control-frame bound
// and the client lost its result (ERR_CORDON_REMOTE_PROTOCOL); its receipt
// now gets the kept receipt's cut, signed after it.

const { after, before, describe, test } = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const h = require('./security/harness');
const { startHost } = require('./remote-support');
const { connectRemote } = require('../lib/remote');
const { cargoTargetDir } = require('../lib/platform-package');

const RELAY = path.join(cargoTargetDir(), 'release', 'cordon-egress-relay');
const signing = crypto.generateKeyPairSync('ed25519');

const skip = h.skipReason() || (!fs.existsSync(RELAY) ? `no ${RELAY} (npm run build)` : false);
if (skip) console.log(`# SKIPPED remote receipt bytes: ${skip}`);

let host;
let remote;

before(async () => {
  if (skip) return;
  const key = path.join(fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'cordon-sign-')), 'sign.key');
  fs.writeFileSync(key, signing.privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  host = await startHost({ networkRelayPath: RELAY, signingKey: key });
  fs.rmSync(path.dirname(key), { recursive: true, force: true });
  // Every `exit` here must carry a signature that verifies over the receipt as sent.
  remote = connectRemote({ socket: host.socket }, { hostPublicKey: signing.publicKey });
});

after(async () => {
  await remote?.close();
  await host?.stop();
});

/** The receipt files the host keeps (stateDir/receipts/<tenant>/<run>/<file>). */
function keptFiles(dir) {
  const out = [];
  const walk = (d) => {
    for (const entry of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, entry.name);
      if (entry.isDirectory()) walk(p);
      else if (entry.name.endsWith('.json')) out.push(p);
    }
  };
  walk(dir);
  return out;
}

/** The one receipt the host kept for `invocationId`. */
function keptReceipt(invocationId) {
  const files = keptFiles(path.join(host.dir, 'state', 'receipts')).filter((f) => f.includes(invocationId));
  assert.equal(files.length, 1, JSON.stringify(files));
  const size = fs.statSync(files[0]).size;
  assert.ok(size < 32 * 1024, `a kept receipt of ${size} bytes`);
  return JSON.parse(fs.readFileSync(files[0], 'utf8'));
}

/** A 250-byte DNS name (four labels within 63 bytes), distinct for each `i`. */
const longName = (i) => [`a${i}-`.padEnd(62, 'x'), 'b'.repeat(62), 'c'.repeat(62), 'd'.repeat(61)].join('.');

describe('kept receipts (R11-1)', { skip }, () => {
  test('a run with 900 KiB of arguments leaves a receipt of a few KiB, with a digest of them all', { timeout: 120_000 }, async () => {
    const args = Array.from({ length: 9 }, (_, i) => `${i}`.repeat(100 * 1024));
    const invocationId = `r11-1-${process.pid}`;
    const run = await remote.spawnIsolated(['true', ...args], { policy: remote.readOnly(), invocationId }).wait();
    assert.equal(run.returncode, 0);
    // The client's receipt is whole.
    assert.equal(run.receipt.command.argv.length, 10);
    const files = keptFiles(path.join(host.dir, 'state', 'receipts')).filter((f) => f.includes(invocationId));
    assert.equal(files.length, 1, JSON.stringify(files));
    const size = fs.statSync(files[0]).size;
    assert.ok(size < 32 * 1024, `a kept receipt of ${size} bytes`);
    const kept = JSON.parse(fs.readFileSync(files[0], 'utf8'));
    const whole = JSON.stringify(run.receipt.command.argv);
    assert.deepEqual(kept.command.argvTruncated, {
      args: 10,
      bytes: run.receipt.command.argv.reduce((n, a) => n + Buffer.byteLength(a), 0),
      sha256: crypto.createHash('sha256').update(whole).digest('hex'),
    });
    assert.equal(kept.command.argv.join('').length, 4096);
    assert.ok(whole.startsWith(JSON.stringify(kept.command.argv).slice(0, -2)));
  });

  test('a run with 1024 long allowlist entries leaves a receipt of a few KiB, with a digest of the whole list (R12-8)', { timeout: 120_000 }, async () => {
    const allow = Array.from({ length: 1024 }, (_, i) => `${longName(i)}:443`);
    const invocationId = `r12-8-${process.pid}`;
    const policy = { ...remote.readOnly(), network: { mode: 'mediated', allow } };
    const run = await remote.spawnIsolated(['true'], { policy, invocationId }).wait();
    assert.equal(run.returncode, 0);
    const whole = run.receipt.policy.network.allow;
    assert.equal(whole.length, 1024); // the client's receipt is whole
    const kept = keptReceipt(invocationId);
    const text = JSON.stringify(whole);
    assert.deepEqual(kept.policy.network.allowTruncated, {
      entries: 1024,
      bytes: Buffer.byteLength(text),
      sha256: crypto.createHash('sha256').update(text).digest('hex'),
    });
    const first = kept.policy.network.allow;
    assert.ok(first.length > 0 && JSON.stringify(first).length <= 4096, JSON.stringify(first).length);
    assert.deepEqual(first, whole.slice(0, first.length));
    assert.equal(kept.policy.digest, run.receipt.policy.digest);
  });

  test('a run with 1 045 000 bytes of arguments gets its exit, the receipt cut as the kept one and signed (R12-3)', { timeout: 120_000 }, async () => {
    const args = [];
    for (let left = 1_045_000; left > 0; left -= 100_000) args.push('A'.repeat(Math.min(100_000, left)));
    const invocationId = `r12-3-${process.pid}`;
    const execution = remote.spawnIsolated(['true', ...args], { policy: remote.readOnly(), invocationId });
    const run = await execution.wait();
    assert.equal(run.returncode, 0);
    assert.equal(typeof run.signature, 'string');
    const argv = [run.receipt.command.argv[0], ...args];
    const truncated = run.receipt.command.argvTruncated;
    assert.deepEqual(truncated, {
      args: argv.length,
      bytes: argv.reduce((n, a) => n + Buffer.byteLength(a), 0),
      sha256: crypto.createHash('sha256').update(JSON.stringify(argv)).digest('hex'),
    });
    assert.deepEqual(keptReceipt(invocationId).command, run.receipt.command);
  });

  test('700 000 bytes of arguments and 1024 long allowlist entries: both cut in the exit (R12-3)', { timeout: 120_000 }, async () => {
    const args = Array.from({ length: 7 }, () => 'B'.repeat(100_000));
    const allow = Array.from({ length: 1024 }, (_, i) => `${longName(i)}:443`);
    const policy = { ...remote.readOnly(), network: { mode: 'mediated', allow } };
    const run = await remote.spawnIsolated(['true', ...args], { policy }).wait();
    assert.equal(run.returncode, 0);
    assert.equal(run.receipt.command.argvTruncated.args, 8);
    assert.equal(run.receipt.policy.network.allowTruncated.entries, 1024);
  });

  test('writes to protocol after the run settled are dropped and counted in protocolDroppedBytes, as a local run counts them (R16b-1)', { timeout: 60_000 }, async () => {
    const execution = remote.spawnIsolated(['true'], { policy: remote.readOnly() });
    execution.stderr.resume();
    execution.protocol.resume();
    const run = await execution.wait();
    assert.equal(run.returncode, 0);
    assert.equal(execution.protocolDroppedBytes, 0);
    const results = await Promise.all([10, 20].map((n) => new Promise((resolve) => execution.protocol.write(Buffer.alloc(n), (error) => resolve(error ?? null)))));
    assert.deepEqual(results, [null, null], 'dropped, not an error');
    assert.equal(execution.protocolDroppedBytes, 30);
  });

  test('bytes the host still held when the program exited are counted: each byte of a successful write is in the receipt or protocolDroppedBytes (R17w-1)', { timeout: 60_000 }, async () => {
    // Round 17w, R17w-1: the host's relay held the client's chunks while
    // fd 3 was full and handed them on after the receipt: they were in no
    // counter the client sees (9 of 10 runs without exit.inbound).
    let missingRuns = 0;
    const seen = [];
    for (let round = 0; round < 4; round += 1) {
      const execution = remote.spawnIsolated(['sleep', '0.3'], { policy: remote.readOnly() });
      execution.stderr.resume();
      execution.protocol.resume();
      let okBytes = 0;
      const writes = [300_000, 65_536, 1000, 200_000, 1 << 20, 10].map((n) => new Promise((resolve) => {
        execution.protocol.write(Buffer.alloc(n, 98), (error) => { if (!error) okBytes += n; resolve(); });
      }));
      const { receipt } = await execution.wait();
      await Promise.all(writes);
      const { protocolIn, protocolInDiscarded } = receipt.bytes;
      const counted = protocolIn + protocolInDiscarded + execution.protocolDroppedBytes;
      seen.push({ okBytes, protocolIn, protocolInDiscarded, dropped: execution.protocolDroppedBytes });
      if (counted !== okBytes) missingRuns += 1;
    }
    assert.equal(missingRuns, 0, JSON.stringify(seen));
  });

  test('protocol.destroy() half-closes fd 3 through the host as end() does: the program reads EOF and exits, and every accepted byte is counted (R18b-1)', { timeout: 60_000 }, async () => {
    // Round 18b, R18b-1: the remote protocol stream had no _destroy, so the
    // host never half-closed fd 3 and a program reading to EOF ran until its
    // deadline (exit 143, stop reason "deadline"), holding a session slot.
    // Writes a byte (so the client knows it runs), then counts fd 3 to EOF.
    const program = "printf x >&3; n=$(wc -c <&3); printf 'eof after %s' $n >&2";
    for (const how of ['destroy', 'write after end']) {
      const execution = remote.spawnIsolated(['sh', '-c', program], { policy: remote.readOnly(), deadlineMs: 20_000 });
      let stderr = '';
      execution.stderr.on('data', (d) => { stderr += d; });
      execution.protocol.on('error', () => {});
      const size = 1 << 20;
      let okBytes = 0;
      execution.protocol.once('data', () => {
        execution.protocol.write(Buffer.alloc(size, 0x61), (error) => { if (!error) okBytes += size; });
        setTimeout(() => {
          if (how === 'destroy') execution.protocol.destroy();
          else {
            // A write after end() destroys the stream (ERR_STREAM_WRITE_AFTER_END) before the end is sent.
            execution.protocol.end();
            execution.protocol.write('late');
          }
        }, 30);
      });
      execution.protocol.resume();
      const outcome = await execution.wait();
      const { protocolIn, protocolInDiscarded } = outcome.receipt.bytes;
      const detail = `${how}: ${stderr} ${JSON.stringify({ rc: outcome.returncode, stop: outcome.receipt.stop, bytes: outcome.receipt.bytes })}`;
      assert.equal(outcome.returncode, 0, detail);
      assert.equal(Number(/eof after (\d+)/.exec(stderr)?.[1]), protocolIn, detail);
      assert.equal(protocolIn + protocolInDiscarded + execution.protocolDroppedBytes, okBytes, detail);
      assert.equal(okBytes, size, detail);
    }
  });
});
