'use strict';

// R11-10 through a real `cordon host` (Unix socket): a launch that fails
// after `started` reaches the client at once as the local spawnIsolated
// error (the host waited for stream ends that never came, then dropped the
// client without `exit`: wait() rejected at its slack with
// ERR_CORDON_REMOTE_TIMEOUT), and `openFiles`, `cpuSeconds`,
// `fileSizeBytes` are clamped to the host's ceilings like the other
// resources (`openFiles: 1e6`, past the host's hard RLIMIT_NOFILE, was that
// failing launch).

const { after, before, describe, test } = require('node:test');
const assert = require('node:assert/strict');

const h = require('./security/harness');
const { startHost } = require('./remote-support');
const { connectRemote } = require('../lib/remote');

const skip = h.skipReason() || false;
if (skip) console.log(`# SKIPPED remote launch failure: ${skip}`);

let host; // default ceilings
let loose; // an openFiles ceiling far above any host's hard limit
let remote;
let looseRemote;

before(async () => {
  if (skip) return;
  host = await startHost();
  loose = await startHost({ ceilings: { openFiles: 2_000_000_000 } });
  remote = connectRemote({ socket: host.socket });
  // A slack far past the test's timeout: only an `exit` settles wait() in time.
  looseRemote = connectRemote({ socket: loose.socket }, { slackMs: 3_600_000 });
});

after(async () => {
  await remote?.close();
  await looseRemote?.close();
  await host?.stop();
  await loose?.stop();
});

describe('a remote launch that fails after started (R11-10)', { skip }, () => {
  test('reaches the client as the local error, not at its slack', { timeout: 120_000 }, async () => {
    const policy = { ...looseRemote.readOnly(), resources: { openFiles: 1_000_000_000 } };
    const run = looseRemote.spawnIsolated(['sh', '-c', 'true'], { policy });
    await assert.rejects(run.wait(), (e) => {
      assert.equal(e.code, 'ERR_CORDON_SPAWN_FAILED', e.message);
      return true;
    });
    // The host still runs sandboxes.
    assert.equal((await looseRemote.spawnIsolated(['true'], { policy: looseRemote.readOnly() }).wait()).returncode, 0);
  });

  test("openFiles, cpuSeconds and fileSizeBytes are clamped to the host's ceilings", { timeout: 120_000 }, async () => {
    const resources = { openFiles: 1_000_000, cpuSeconds: 1_000_000, fileSizeBytes: 2 ** 41 };
    const run = await remote.spawnIsolated(['sh', '-c', 'true'], { policy: { ...remote.readOnly(), resources } }).wait();
    assert.equal(run.returncode, 0);
    const { clamped } = run.receipt.remote;
    assert.deepEqual(clamped.openFiles, { requested: 1_000_000, applied: 1024 });
    assert.deepEqual(clamped.cpuSeconds, { requested: 1_000_000, applied: 300 });
    assert.deepEqual(clamped.fileSizeBytes, { requested: 2 ** 41, applied: 2 ** 30 });
    const rlimit = (name) => run.receipt.confinement.planned.rlimits.find((r) => r.name === name);
    assert.equal(rlimit('NOFILE').hard, 1024);
    assert.equal(rlimit('CPU').soft, 300);
    assert.equal(rlimit('FSIZE').hard, 2 ** 30);
  });
});
