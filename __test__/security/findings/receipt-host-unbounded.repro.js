'use strict';

// FINDING (network round): a refused request's host is copied into its
// receipt unbounded (up to ~16 KiB, the proxy's request-head limit), so the
// 4096-receipt cap that "bounds host memory" (docs/network.md) bounds it ~64x
// less tightly than canonical hosts (<= 253 bytes) would. One sandboxed
// program, ~2 s, no allowed destination needed: the provider ends up holding a
// ~68 MB receipt and grows by ~280 MiB RSS (several copies: native, JSON, JS
// objects); concurrent runs multiply it.
//
//   node --expose-gc __test__/security/findings/receipt-host-unbounded.repro.js
//
// Loopback only: the program talks to the in-sandbox relay; every request is
// refused (malformed-name), no upstream is contacted.

const assert = require('node:assert/strict');
const { spawnIsolated, readOnly } = require('../../..');
const { runToEnd } = require('../../spawn-support');

(async () => {
  const code = `
import socket
h = (b'a' * 60 + b'.') * 267            # 16287 bytes: 267 valid-length labels, > 253 in total
for i in range(4096):
    s = socket.create_connection(('127.0.0.1', 3128))
    s.sendall(b'CONNECT ' + h + b':1 HTTP/1.1\\r\\n\\r\\n'); s.recv(200); s.close()
`;
  const policy = { ...readOnly(), network: { mode: 'mediated', allow: ['example.com:443'] },
    resources: { ...readOnly().resources, networkStreams: 100000 } };
  global.gc?.();
  const before = process.memoryUsage().rss;
  const { result } = await runToEnd(spawnIsolated(['/usr/bin/python3', '-c', code], { policy }));
  global.gc?.();
  const grown = (process.memoryUsage().rss - before) / 2 ** 20;
  const receipts = result.networkReceipts;
  const json = JSON.stringify(result.receipt).length;
  console.log(`receipts=${receipts.length} result=${receipts[0].result} host bytes=${receipts[0].host.length} ` +
    `receipt JSON=${(json / 1e6).toFixed(1)} MB provider RSS +${grown.toFixed(0)} MiB`);
  assert.equal(receipts[0].result, 'malformed-name');
  // Expected after a fix: a refused host is truncated (or null) at 253 bytes.
  assert.ok(receipts[0].host.length > 253, 'FIXED: the receipt host is bounded');
  console.log('REPRODUCED: an unbounded attacker-chosen host string is stored in every refused receipt');
})();
