'use strict';

// The launcher computes each receipt's digest (sha256 of its canonical JSON,
// crates/launcher/src/receipt/canonical.rs) so Code Mode's audit record need not
// hash the receipt on the JS thread (docs/performance.md). The digest must be
// byte for byte the one JavaScript computes from the object it holds
// (lib/code-mode/audit.js receiptDigest): checked here on real receipts of
// several shapes — a plain run, a stopped run, a mediated run with network
// receipts (addresses, byte counts, times), and a Code Mode run, whose audit
// record must carry the launcher's digest.

const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnIsolated, readOnly, createCodeMode } = require('..');
const { receiptDigest } = require('../lib/code-mode/audit');
const { loopbackServer: server } = require('./network-servers');

async function digests(command, options) {
  const execution = spawnIsolated(command, options);
  execution.protocol.resume();
  execution.stderr.resume();
  const { receipt } = await execution.wait();
  return { launcher: execution.receiptDigest, js: receiptDigest(receipt), receipt };
}

test('the launcher\'s receipt digest is the one JavaScript computes, for plain, stopped and mediated runs', async () => {
  const plain = await digests(['/bin/true'], { policy: readOnly() });
  assert.match(plain.launcher, /^sha256:[0-9a-f]{64}$/);
  assert.equal(plain.launcher, plain.js);

  const stopped = spawnIsolated(['/bin/sleep', '60'], { policy: readOnly(), stop: { graceMs: 50, forceMs: 500 } });
  stopped.protocol.resume();
  stopped.stderr.resume();
  await stopped.stop();
  const { receipt } = await stopped.wait();
  assert.equal(receipt.stop.reason, 'stop');
  assert.equal(stopped.receiptDigest, receiptDigest(receipt));

  const echo = await server('echo');
  try {
    const code = `
import socket
s = socket.create_connection(('127.0.0.1', 3128))
s.sendall(b'CONNECT 127.0.0.1:${echo.port} HTTP/1.1\\r\\n\\r\\n')
head = b''
while not head.endswith(b'\\r\\n\\r\\n'): head += s.recv(1)
s.sendall(b'ping'); s.recv(4); s.close()
try: socket.create_connection(('127.0.0.1', 3128)).sendall(b'CONNECT 192.0.2.1:9 HTTP/1.1\\r\\n\\r\\n')
except OSError: pass
`;
    const policy = {
      ...readOnly(),
      network: { mode: 'mediated', allow: [{ protocol: 'tcp', host: '127.0.0.1', port: echo.port, allowPrivateAddresses: true }] },
    };
    const mediated = await digests(['/usr/bin/python3', '-c', code], { policy });
    assert.ok(mediated.receipt.networkReceipts.length >= 1, JSON.stringify(mediated.receipt.networkReceipts));
    assert.equal(mediated.launcher, mediated.js);
  } finally {
    echo.close();
  }
});

test('a Code Mode run\'s audit record carries the launcher\'s digest of its receipt', async () => {
  const audits = [];
  const mode = createCodeMode({ tools: [], onAudit: (record) => audits.push(record) });
  const result = await mode.run('return 1');
  assert.equal(result.ok, true);
  assert.equal(result.audit.receiptDigest, receiptDigest(result.receipt));
  assert.equal(audits[0].receiptDigest, result.audit.receiptDigest);
  const failed = await mode.run('throw new Error("no")');
  assert.equal(failed.ok, false);
  assert.equal(failed.audit.receiptDigest, receiptDigest(failed.receipt));
});
