'use strict';
// R11-2: an authenticated peer that connects, reads `welcome` and closes, in a
// loop, has the host append one ~245-byte `session` line (outcome "closed")
// per connection with no bound: no run, no admission slot, no rate limit (only
// `handshake-failed` lines pass the token bucket, docs/remote.md › Logging).
// Control: the same number of connections that fail the handshake (a bad
// first frame) write at most the bucket's burst plus a suppressed count.
// Usage (root): node host-log-closed-flood.js [connections]
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

const N = Number(process.argv[2] || 3000);
const frame = (type, obj) => { const p = Buffer.from(JSON.stringify(obj)); const b = Buffer.alloc(5 + p.length); b.writeUInt32BE(1 + p.length); b[4] = type; p.copy(b, 5); return b; };

function connectOnce(sock, mode) {
  return new Promise((resolve) => {
    const c = net.connect(sock);
    c.on('error', resolve);
    c.on('close', resolve);
    c.on('connect', () => {
      if (mode === 'welcome-then-close') { c.write(frame(1, { v: 1 })); c.once('data', () => c.destroy()); }
      else c.write(Buffer.from([0, 0, 0, 0])); // L = 0: a protocol error before hello
    });
  });
}

async function flood(sock, log, mode) {
  const before = fs.existsSync(log) ? fs.statSync(log).size : 0;
  const t = Date.now();
  let started = 0;
  await Promise.all(Array.from({ length: 8 }, async () => { while (started < N) { started++; await connectOnce(sock, mode); } }));
  const ms = Date.now() - t;
  await new Promise((r) => setTimeout(r, 1500)); // the log writer thread drains
  const grew = fs.statSync(log).size - before;
  console.log(`${mode}: ${N} connections in ${ms} ms, log grew ${grew} bytes (${Math.round(grew / ms * 1000 / 1024)} KiB/s)`);
  return grew;
}

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'r11-hostlog-'));
  fs.mkdirSync(path.join(dir, 'run'), { mode: 0o700 });
  const sock = path.join(dir, 'run', 'host.sock');
  const log = path.join(dir, 'host.log');
  fs.writeFileSync(path.join(dir, 'host.json'), JSON.stringify({
    listen: { unix: sock }, stateDir: path.join(dir, 'state'), allowUids: [0], programs: { true: '/bin/true' }, logFile: log,
  }));
  const host = spawn(process.execPath, [path.join(__dirname, '../../../../bin/cordon.js'), 'host', '--config', path.join(dir, 'host.json')], { stdio: 'ignore' });
  try {
    for (let i = 0; i < 100 && !fs.existsSync(sock); i++) await new Promise((r) => setTimeout(r, 100));
    const control = await flood(sock, log, 'bad-first-frame (control)');
    const probe = await flood(sock, log, 'welcome-then-close');
    console.log(probe > 100 * N && control < 20 * 1024 ? 'FINDING: welcome-then-close connections write one log line each, unbounded' : 'held');
  } finally {
    host.kill('SIGTERM');
    await new Promise((r) => host.once('exit', r));
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
main().catch((e) => { console.error(e); process.exitCode = 1; });
