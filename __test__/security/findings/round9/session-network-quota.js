'use strict';
// R9 (low): a session's sandbox is ONE run, so the mediated network's per-run quotas
// (docs/network.md: networkStreams 256, networkBytesOut 64 MiB, networkBytesIn 1 GiB)
// are quotas for the whole conversation. After 256 streams in all, every later turn's
// request fails (curl exit 7) with nothing telling the caller; one model-written loop
// spends it at once, and so does an ordinary conversation over time (a package install
// opens dozens of streams). docs/sessions.md's "Network" section says nothing of it.
//   node session-network-quota.js           300 requests, then one in a later command
//   node session-network-quota.js control   20 requests, then one in a later command
// Loopback upstream (allowPrivateAddresses). VULNERABLE when the later request fails.
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const http = require('node:http');
const cordon = require(path.resolve(__dirname, '../../../..'));

async function main() {
  const control = process.argv[2] === 'control';
  const burst = control ? 20 : 300;
  const server = http.createServer((q, s) => s.end('hello\n')).listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const { port } = server.address();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'r9-netquota-'));
  fs.chmodSync(dir, 0o711);
  const m = cordon.createSessionManager({ secret: crypto.randomBytes(32), root: path.join(dir, 'sessions'), store: cordon.memorySessionStore(), authorize: () => true });
  const s = await m.acquire({ tenant: 't', conversation: 'c' }, {}, { network: { allow: [{ host: 'localhost', port, allowPrivateAddresses: true }] } });
  try {
    let r = await s.exec({ shell: 'bash', script: `ok=0; for i in $(seq 1 ${burst}); do curl -s -m 2 -o /dev/null -w '%{http_code}\\n' http://localhost:${port}/ | grep -q 200 && ok=$((ok+1)); done; echo $ok` }, { timeoutMs: 300_000 });
    console.log(`turn 1: ${burst} requests, ${r.stdout.trim()} answered`);
    r = await s.exec({ shell: 'bash', script: `curl -s -m 5 http://localhost:${port}/; echo "curl exit $?"` }, { timeoutMs: 30_000 });
    const later = r.stdout.trim().replace(/\n/g, ' ');
    console.log(`turn 2: one request: ${later}`);
    const works = later.startsWith('hello');
    console.log(control ? (works ? 'control ok' : 'control FAILED') : (works ? 'held' : 'VULNERABLE: the session\'s network is spent for the rest of the conversation'));
  } finally {
    await s.end();
    server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
main().catch((e) => { console.error(e); process.exitCode = 1; });
