'use strict';

// Loopback servers for the fetch tests: every server counts the TCP
// connections it accepted (so a test can assert that nothing connected), and
// a test CA with a leaf certificate for localhost/127.0.0.1, generated at
// test time with openssl.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const http = require('node:http');
const https = require('node:https');
const { spawnSync } = require('node:child_process');

/**
 * An HTTP(S) server on 127.0.0.1 with a port of its own.
 * @param {(req: http.IncomingMessage, res: http.ServerResponse) => void} handler
 * @param {{tls?: {key: string, cert: string}}} [options]
 */
async function loopbackServer(handler, { tls } = {}) {
  const server = tls ? https.createServer(tls, handler) : http.createServer(handler);
  const state = { connections: 0, closed: 0, server };
  server.on('connection', (socket) => {
    state.connections += 1;
    socket.on('close', () => { state.closed += 1; });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.port = server.address().port;
  state.close = () => new Promise((resolve) => { server.closeAllConnections?.(); server.close(() => resolve()); });
  return state;
}

function openssl(args, cwd) {
  const run = spawnSync('openssl', args, { cwd, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`openssl ${args[0]} failed: ${run.stderr}`);
}

/** A throwaway CA and a leaf for localhost + 127.0.0.1 signed by it (PEM strings). */
function testCertificates() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-fetch-ca-'));
  try {
    openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem',
      '-days', '1', '-subj', '/CN=cordon fetch test CA'], dir);
    openssl(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'leaf.key', '-out', 'leaf.csr',
      '-subj', '/CN=localhost'], dir);
    fs.writeFileSync(path.join(dir, 'ext.cnf'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
    openssl(['x509', '-req', '-in', 'leaf.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'leaf.pem',
      '-days', '1', '-extfile', 'ext.cnf'], dir);
    const read = (name) => fs.readFileSync(path.join(dir, name), 'utf8');
    return { ca: read('ca.pem'), key: read('leaf.key'), cert: read('leaf.pem') };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Whether openssl can run here (CI installs it: scripts/host-deps.sh). */
function hasOpenssl() {
  return spawnSync('openssl', ['version'], { encoding: 'utf8' }).status === 0;
}

module.exports = { loopbackServer, testCertificates, hasOpenssl };
