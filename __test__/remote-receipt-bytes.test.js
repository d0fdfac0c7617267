'use strict';

// R11-1 through a real `cordon host` (Unix socket): a receipt the host keeps
// holds the first 4096 bytes of the run's arguments and a digest of them
// all, so what a tenant leaves on the host's disk per run does not grow with
// the arguments it chooses (a receipt kept them verbatim: ~0.93 MB a run
// with 9 × 100 KiB arguments, and retention counts receipts, not bytes).
// The client's `exit` still has them whole.

const { after, before, describe, test } = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const h = require('./security/harness');
const { startHost } = require('./remote-support');
const { connectRemote } = require('../lib/remote');

const skip = h.skipReason() || false;
if (skip) console.log(`# SKIPPED remote receipt bytes: ${skip}`);

let host;
let remote;

before(async () => {
  if (skip) return;
  host = await startHost();
  remote = connectRemote({ socket: host.socket });
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
});
