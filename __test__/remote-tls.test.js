'use strict';

// cordon/remote over TLS on 127.0.0.1 against a real `cordon host` child
// process: mutual TLS, a token inside TLS, and the handshakes that must
// fail (a foreign client certificate, a host certificate the client's CA did
// not sign, a wrong token). Certificates are made at test time (openssl).

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { connectRemote } = require('../lib/remote');
const { canonicalJson } = require('../lib/code-mode/audit');
const { runToEnd } = require('./spawn-support');
const { startHost, tlsMaterial } = require('./remote-support');

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-remote-tls-'));
const tls = tlsMaterial(scratch);
const TOKEN = 'cordon-test-token-1';
const signing = crypto.generateKeyPairSync('ed25519');
let mtls;
let tokenHost;

test.before(async () => {
  fs.writeFileSync(path.join(scratch, 'sign.key'), signing.privateKey.export({ type: 'pkcs8', format: 'pem' }));
  mtls = await startHost({
    listen: { tcp: '127.0.0.1:0' },
    tls: { cert: tls.file('host.pem'), key: tls.file('host.key'), clientCa: tls.file('ca.pem') },
    signingKey: path.join(scratch, 'sign.key'),
  });
  tokenHost = await startHost({
    listen: { tcp: '127.0.0.1:0' },
    tls: { cert: tls.file('host.pem'), key: tls.file('host.key'), clientAuth: 'none' },
    tokens: { [crypto.createHash('sha256').update(TOKEN).digest('hex')]: 'tenant-t' },
  });
});
test.after(async () => {
  await Promise.all([mtls?.stop(), tokenHost?.stop()]);
  fs.rmSync(scratch, { recursive: true, force: true });
});

test('over mutual TLS a run resolves like a local one; the receipt names the transport, auth and the certificate\'s tenant, and its signature verifies', async () => {
  const remote = connectRemote({ url: mtls.url, tls: { ca: tls.ca, ...tls.client } });
  const execution = remote.spawnIsolated(['sh', '-c', 'echo hi >&3'], { policy: remote.readOnly() });
  const { result, protocol } = await runToEnd(execution);
  assert.equal(result.returncode, 0);
  assert.equal(protocol, 'hi\n');
  assert.deepEqual([result.receipt.remote.transport, result.receipt.remote.auth, result.receipt.remote.tenant], ['tls', 'mtls', 'tenant-a']);
  const publicKey = execution.remote.host.publicKey;
  assert.equal(typeof result.signature, 'string');
  assert.equal(crypto.verify(null, Buffer.from(canonicalJson(result.receipt)), publicKey, Buffer.from(result.signature, 'base64')), true);
});

test('a Code Mode run over mutual TLS calls a tool in this process', async () => {
  const remote = connectRemote({ url: mtls.url, tls: { ca: tls.ca, ...tls.client } });
  const mode = remote.createCodeMode({ tools: [{ name: 'twice', description: 'x2', effect: 'read', inputSchema: { type: 'object' }, handler: ({ n }) => n * 2 }] });
  const result = await mode.run('return await tools.twice({ n: 21 });');
  assert.equal(result.ok, true, JSON.stringify(result.error));
  assert.equal(result.result, 42);
});

test('a client certificate of another CA is closed before welcome: ERR_CORDON_REMOTE_HANDSHAKE_FAILED', async () => {
  const remote = connectRemote({ url: mtls.url, tls: { ca: tls.ca, ...tls.foreign } });
  await assert.rejects(remote.spawnIsolated(['true'], { policy: remote.readOnly() }).wait(), { code: 'ERR_CORDON_REMOTE_HANDSHAKE_FAILED' });
});

test('a host certificate the client\'s CA did not sign is refused by the client: ERR_CORDON_REMOTE_HANDSHAKE_FAILED', async () => {
  const remote = connectRemote({ url: mtls.url, tls: { ca: tls.otherCa, ...tls.client } });
  await assert.rejects(remote.spawnIsolated(['true'], { policy: remote.readOnly() }).wait(), { code: 'ERR_CORDON_REMOTE_HANDSHAKE_FAILED' });
});

test('a token inside TLS names the tenant; a wrong token is closed before welcome', async () => {
  const remote = connectRemote({ url: tokenHost.url, tls: { ca: tls.ca }, token: TOKEN });
  const { result } = await runToEnd(remote.spawnIsolated(['true'], { policy: remote.readOnly() }));
  assert.deepEqual([result.receipt.remote.auth, result.receipt.remote.tenant], ['token', 'tenant-t']);
  const wrong = connectRemote({ url: tokenHost.url, tls: { ca: tls.ca }, token: 'not-the-token' });
  await assert.rejects(wrong.spawnIsolated(['true'], { policy: wrong.readOnly() }).wait(), { code: 'ERR_CORDON_REMOTE_HANDSHAKE_FAILED' });
});

test('with the host\'s public key pinned, a signed receipt resolves and one signed by another key rejects ERR_CORDON_REMOTE_SIGNATURE_INVALID', async () => {
  const pinned = signing.publicKey.export({ type: 'spki', format: 'pem' });
  const remote = connectRemote({ url: mtls.url, tls: { ca: tls.ca, ...tls.client } }, { hostPublicKey: pinned });
  const { result } = await runToEnd(remote.spawnIsolated(['true'], { policy: remote.readOnly() }));
  assert.equal(result.returncode, 0);
  const impostor = crypto.generateKeyPairSync('ed25519').publicKey;
  const wrong = connectRemote({ url: mtls.url, tls: { ca: tls.ca, ...tls.client } }, { hostPublicKey: impostor });
  await assert.rejects(wrong.spawnIsolated(['true'], { policy: wrong.readOnly() }).wait(), { code: 'ERR_CORDON_REMOTE_SIGNATURE_INVALID' });
  // An unsigned host cannot satisfy a pinned key either.
  const unsigned = connectRemote({ url: tokenHost.url, tls: { ca: tls.ca }, token: TOKEN }, { hostPublicKey: pinned });
  await assert.rejects(unsigned.spawnIsolated(['true'], { policy: unsigned.readOnly() }).wait(), { code: 'ERR_CORDON_REMOTE_SIGNATURE_INVALID' });
});
