'use strict';
// R11-2 re-test: log lines a peer causes without running anything, other ways than welcome-then-close.
// Control: 3000 connections failing the handshake (bounded bucket). Probes: a uid not in allowUids (closed at
// accept), an authenticated `receipt-query`, an authenticated `spawn` of an unknown program (refused).
// Usage (root): node host-log-variants.js [connections]
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const N = Number(process.argv[2] || 3000);
const frame = (type, obj) => { const p = Buffer.from(JSON.stringify(obj)); const b = Buffer.alloc(5 + p.length); b.writeUInt32BE(1 + p.length); b[4] = type; p.copy(b, 5); return b; };
function connectOnce(sock, mode) {
  return new Promise((resolve) => {
    const c = net.connect(sock);
    c.on('error', resolve); c.on('close', resolve);
    c.on('connect', () => {
      if (mode === 'bad-first-frame') c.write(Buffer.from([0, 0, 0, 0]));
      else {
        c.write(frame(1, { v: 1 }));
        c.once('data', () => { if (mode === 'receipt-query') c.write(frame(0x40, { invocationId: 'nope' })); else c.write(frame(4, { program: 'nope', args: [], options: {} })); });
      }
    });
  });
}
async function flood(sock, log, mode) {
  const before = fs.existsSync(log) ? fs.statSync(log).size : 0;
  const t = Date.now(); let started = 0;
  await Promise.all(Array.from({ length: 8 }, async () => { while (started < N) { started++; await connectOnce(sock, mode); } }));
  const ms = Date.now() - t;
  await new Promise((r) => setTimeout(r, 1500));
  const grew = fs.statSync(log).size - before;
  console.log(`${mode}: ${N} connections in ${ms} ms, log grew ${grew} bytes`);
  return grew;
}
if (process.argv[2] === 'child') {
  (async () => { const sock = process.argv[3]; let started = 0; const n = Number(process.argv[4]);
    await Promise.all(Array.from({ length: 8 }, async () => { while (started < n) { started++; await connectOnce(sock, 'bad-first-frame'); } })); })();
} else (async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'r12-hostlog-'));
  fs.chmodSync(dir, 0o755);
  fs.mkdirSync(path.join(dir, 'run'), { mode: 0o755 });
  const sock = path.join(dir, 'run', 'host.sock');
  const log = path.join(dir, 'host.log');
  fs.writeFileSync(path.join(dir, 'host.json'), JSON.stringify({ listen: { unix: sock }, stateDir: path.join(dir, 'state'), allowUids: [0], programs: { true: '/bin/true' }, logFile: log }));
  fs.cpSync(__filename, path.join(dir, 'me.js')); fs.chmodSync(path.join(dir, 'me.js'), 0o644);
  const host = spawn(process.execPath, [path.join(__dirname, '../../../../bin/cordon.js'), 'host', '--config', path.join(dir, 'host.json')], { stdio: ['ignore', 'ignore', 'pipe'] });
  host.stderr.resume();
  try {
    for (let i = 0; i < 100 && !fs.existsSync(sock); i++) await new Promise((r) => setTimeout(r, 100));
    await new Promise((r) => setTimeout(r, 300));
    const ctl = await flood(sock, log, 'bad-first-frame');
    const b0 = fs.statSync(log).size; const t = Date.now();
    spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, path.join(dir, 'me.js'), 'child', sock, String(N)], { cwd: '/tmp', stdio: 'inherit' });
    await new Promise((r) => setTimeout(r, 1500));
    const unauth = fs.statSync(log).size - b0;
    console.log(`uid 65534 (not allowed): ${N} connections in ${Date.now() - t - 1500} ms, log grew ${unauth} bytes`);
    const rq = await flood(sock, log, 'receipt-query');
    const sp = await flood(sock, log, 'spawn-unknown-program');
    const big = Object.entries({ unauth, rq, sp }).filter(([, v]) => v > 10 * Math.max(ctl, 1000));
    console.log(big.length ? `FINDING: unbounded log lines for ${big.map(([k]) => k).join(', ')}` : 'held');
  } finally { host.kill('SIGTERM'); await new Promise((r) => host.once('exit', r)); fs.rmSync(dir, { recursive: true, force: true }); }
})().catch((e) => { console.error(e); process.exitCode = 1; });
