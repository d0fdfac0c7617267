'use strict';

// R11-9 through a real `cordon host` (Unix socket, mediated network through
// the built relay, python3 as a program): a tenant's run that asks for more
// network streams than the host's ceiling gets the ceiling (an unclamped
// quota let one tenant's idle engine-socket connections take the host to its
// descriptor limit), and a run whose network receipts pass the protocol's
// 1 MiB control frame still gets its `exit`, the last receipts cut and
// counted (the client rejected the whole frame and lost the run's result).

const { after, before, describe, test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const h = require('./security/harness');
const { startHost, ROOT } = require('./remote-support');
const { connectRemote } = require('../lib/remote');
const { cargoTargetDir } = require('../lib/platform-package');

const PYTHON = '/usr/bin/python3';
const RELAY = path.join(cargoTargetDir(), 'release', 'cordon-egress-relay');
const skip = h.skipReason() || (!fs.existsSync(PYTHON) ? `no ${PYTHON}` : !fs.existsSync(RELAY) ? `no ${RELAY} (npm run build)` : false);
if (skip) console.log(`# SKIPPED remote network ceilings: ${skip}`);

/** `n` CONNECT attempts on the engine socket, one at a time, each closed after the engine's answer; prints how many were sent. */
const attempts = (n, destination) => `import socket
sent = 0
for i in range(${n}):
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect('/.cordon/egress/engine.sock')
        s.sendall(b'CONNECT ${destination} HTTP/1.1\\r\\nHost: ${destination}\\r\\n\\r\\n')
        s.recv(100)
        sent += 1
    except OSError:
        pass
    s.close()
print(sent)`;

let tight; // networkStreams ceiling 4
let wide; // networkStreams ceiling 5000: receipts past the frame bound
let tightRemote;
let wideRemote;

before(async () => {
  if (skip) return;
  const config = { programs: { python3: PYTHON }, networkRelayPath: RELAY };
  tight = await startHost({ ...config, ceilings: { networkStreams: 4 } });
  wide = await startHost({ ...config, ceilings: { networkStreams: 5000 } });
  tightRemote = connectRemote({ socket: tight.socket });
  wideRemote = connectRemote({ socket: wide.socket });
});

after(async () => {
  await tightRemote?.close();
  await wideRemote?.close();
  await tight?.stop();
  await wide?.stop();
});

function mediated(remote, networkStreams) {
  const base = remote.readOnly();
  return { ...base, resources: { ...base.resources, networkStreams }, network: { mode: 'mediated', allow: ['example.com:443'] } };
}

describe('remote network quotas (R11-9)', { skip }, () => {
  test("a run asking for 100000 network streams gets the host's ceiling of 4", { timeout: 120_000 }, async () => {
    const policy = mediated(tightRemote, 100_000);
    const run = await tightRemote.spawnIsolated(['python3', '-c', attempts(10, 'denied.invalid:80')], { policy }).wait();
    assert.deepEqual(run.receipt.remote.clamped.networkStreams, { requested: 100_000, applied: 4 });
    const results = run.networkReceipts.map((r) => r.result);
    // Four attempts counted against the quota, then every one refused by it.
    assert.equal(results.filter((r) => r !== 'quota-streams').length, 4, results.join(' '));
    assert.ok(results.includes('quota-streams'), results.join(' '));
  });

  test('a welcome names the network ceilings', { timeout: 60_000 }, async () => {
    const run = tightRemote.spawnIsolated(['true'], { policy: tightRemote.readOnly() });
    await run.wait();
    assert.equal(run.remote.ceilings.networkStreams, 4);
    assert.equal(run.remote.ceilings.networkConcurrentStreams, 32);
  });

  test('an exit whose network receipts pass 1 MiB arrives, the last receipts cut and counted', { timeout: 300_000 }, async () => {
    const policy = mediated(wideRemote, 5000);
    const run = await wideRemote.spawnIsolated(['python3', '-c', attempts(3000, 'denied.invalid:80')], { policy }).wait();
    const omitted = run.receipt.networkReceiptsOmitted;
    assert.ok(Number.isInteger(omitted) && omitted > 0, `omitted ${omitted}`);
    assert.equal(run.networkReceipts.length + omitted, 3000);
    assert.equal(run.receipt.networkReceipts.length, run.networkReceipts.length);
    // The kept ones are the first, in order.
    assert.deepEqual(run.networkReceipts.map((r) => r.id), run.networkReceipts.map((_, i) => i + 1));
  });
});
