'use strict';
// R11-6 (a documented limit, confirmed): the TLS host's handshake slots are
// shared per source address, but 8 sources (maxConcurrent 32 / perSource 4)
// that each keep 4+ connections open — one byte sent, so the 1 s first-byte
// bound does not close them; the 5 s first-frame bound does, and they reconnect —
// keep every mutual-TLS client out, with no credential. On a loopback or
// same-host deployment every local user has 127.0.0.0/8; remotely, 8 IPv4
// addresses or 8 IPv6 /64s. Control: the same flood from 1 source (the
// documented, tested case) lets the legitimate client run.
// Usage (root, needs openssl): node host-tls-slots-eight-sources.js
const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { connectRemote } = require('../../../../lib/remote');

function certs(dir) {
  const o = (...a) => execFileSync('openssl', a, { cwd: dir, stdio: 'ignore' });
  o('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '1', '-subj', '/CN=r11-ca');
  o('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'srv.key', '-out', 'srv.csr', '-subj', '/CN=localhost');
  fs.writeFileSync(path.join(dir, 'srv.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
  o('x509', '-req', '-in', 'srv.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'srv.pem', '-days', '1', '-extfile', 'srv.ext');
  o('pkcs8', '-topk8', '-nocrypt', '-in', 'srv.key', '-out', 'srv.p8.key');
  o('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'cli.key', '-out', 'cli.csr', '-subj', '/CN=tenant-a');
  fs.writeFileSync(path.join(dir, 'cli.ext'), 'extendedKeyUsage=clientAuth\n');
  o('x509', '-req', '-in', 'cli.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'cli.pem', '-days', '1', '-extfile', 'cli.ext');
}

async function attempt(dir, port, sources) {
  let stop = false;
  let opened = 0;
  const sockets = new Set();
  const hold = () => {
    if (stop) return;
    const c = net.connect({ host: '127.0.0.1', port, localAddress: `127.0.0.${2 + (opened % sources)}` });
    opened++;
    sockets.add(c);
    c.on('connect', () => c.write(Buffer.from([0x16]))); // one byte of a TLS record header, then silence
    c.on('error', () => {});
    c.on('close', () => { sockets.delete(c); setTimeout(hold, 20); });
    c.resume();
  };
  const n = sources === 1 ? 40 : 8 * sources;
  for (let i = 0; i < n; i++) hold();
  await new Promise((r) => setTimeout(r, 1000));
  const remote = connectRemote({ url: `tls://127.0.0.1:${port}`, tls: { ca: fs.readFileSync(path.join(dir, 'ca.pem')), cert: fs.readFileSync(path.join(dir, 'cli.pem')), key: fs.readFileSync(path.join(dir, 'cli.key')), servername: 'localhost' } });
  let ran = 0;
  for (let i = 0; i < 4; i++) {
    try { if ((await remote.spawnIsolated(['true'], { policy: remote.readOnly() }).wait()).returncode === 0) ran++; } catch { /* refused at the handshake */ }
    await new Promise((r) => setTimeout(r, 300));
  }
  stop = true;
  for (const c of sockets) c.destroy();
  await remote.close();
  console.log(`${n} held connections from ${sources} source(s) (${opened} opened): the mutual-TLS client ran ${ran}/4`);
  return ran;
}

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'r11-tls-'));
  certs(dir);
  const port = 20000 + Math.floor(Math.random() * 20000);
  fs.writeFileSync(path.join(dir, 'host.json'), JSON.stringify({
    listen: { tcp: `127.0.0.1:${port}` }, tls: { cert: path.join(dir, 'srv.pem'), key: path.join(dir, 'srv.p8.key'), clientCa: path.join(dir, 'ca.pem') },
    stateDir: path.join(dir, 'state'), programs: { true: '/bin/true' }, logFile: path.join(dir, 'host.log'),
  }));
  const host = spawn(process.execPath, [path.join(__dirname, '../../../../bin/cordon.js'), 'host', '--config', path.join(dir, 'host.json')], { stdio: 'ignore' });
  try {
    for (let i = 0; i < 100; i++) {
      const up = await new Promise((r) => { const c = net.connect(port, '127.0.0.1'); c.on('connect', () => { c.destroy(); r(true); }); c.on('error', () => r(false)); });
      if (up) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    await new Promise((r) => setTimeout(r, 1500)); // let the probe connection's slot go
    const control = await attempt(dir, port, 1);
    const probe = await attempt(dir, port, 8);
    console.log(control === 4 && probe === 0 ? 'FINDING (documented limit): 8 source addresses lock every client out of the TLS host, unauthenticated' : 'held');
  } finally {
    host.kill('SIGTERM');
    await new Promise((r) => host.once('exit', r));
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
main().catch((e) => { console.error(e); process.exitCode = 1; });
