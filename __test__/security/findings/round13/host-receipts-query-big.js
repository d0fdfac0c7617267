'use strict';
// Remote host: docs/remote.md — the kept receipt has every network receipt (refused attempts up to the engine's
// 4096, left open by R12-8), and `receipts(id)` answers "at most 16 and as many as one control frame holds".
// A run that makes 4200 refused proxy attempts to 250-byte names: its `exit` is cut to 1 MiB, its kept receipt is
// not. Can the tenant still read its own kept receipt with receipts(invocationId)? Control: a run with 3 attempts.
// Usage (root): node host-receipts-query-big.js [attempts=4200]
const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs'); const os = require('node:os'); const path = require('node:path');
const PKG = process.env.R13_PKG || path.join(__dirname, '../../../..');
const { connectRemote } = require(PKG + '/lib/remote');
const N = Number(process.argv[2] || 4200);
const py = (n) => `import socket
name = ('a' * 62 + '.') * 3 + 'b' * 61
for i in range(${n}):
    try:
        s = socket.create_connection(('127.0.0.1', 3128), timeout=10)
        s.sendall(('CONNECT %d%s:443 HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n' % (i, name[len(str(i)):])).encode())
        s.recv(100); s.close()
    except Exception as e:
        pass
print('done', flush=True)`;
(async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'r13-hostq-')); fs.chmodSync(dir, 0o755);
  fs.mkdirSync(path.join(dir, 'run'), { mode: 0o700 });
  const sock = path.join(dir, 'run', 'host.sock'); const state = path.join(dir, 'state');
  fs.writeFileSync(path.join(dir, 'host.json'), JSON.stringify({ listen: { unix: sock }, stateDir: state, allowUids: [0], programs: { python3: '/usr/bin/python3' }, networkRelayPath: PKG + '/target/release/cordon-egress-relay' }));
  const host = spawn(process.execPath, [PKG + '/bin/cordon.js', 'host', '--config', path.join(dir, 'host.json')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = ''; host.stderr.on('data', (d) => { log += d; });
  const res = {};
  try {
    for (let i = 0; i < 100 && !fs.existsSync(sock); i++) await new Promise((r) => setTimeout(r, 100));
    const remote = connectRemote({ socket: sock });
    const policy = { ...remote.readOnly(), network: { mode: 'mediated', allow: ['127.0.0.1:9'] } };
    for (const [k, n] of [['control', 3], ['probe', N]]) {
      const id = `r13-${k}-${Date.now()}`;
      const t = Date.now();
      const r = await remote.spawnIsolated(['python3', '-c', py(n)], { policy, invocationId: id }).wait().catch((e) => ({ err: e.code + ' ' + e.message }));
      const exitInfo = r.err || `rc ${r.returncode}, exit networkReceipts ${r.networkReceipts?.length}, omitted ${r.receipt?.networkReceiptsOmitted}, dropped ${r.receipt?.networkReceiptsDropped}`;
      const kept = execFileSync('sh', ['-c', `grep -rl ${id} ${state}/receipts | xargs -r stat -c %s`]).toString().trim();
      let q; try { const got = await remote.receipts(id); q = `receipts(): ${got.length} receipt(s)${got[0] ? ', ' + (got[0].networkReceipts?.length ?? '?') + ' network receipts' : ''}`; res[k] = got.length; } catch (e) { q = `receipts(): ${e.code} ${String(e.message).slice(0, 160)}`; res[k] = e.code; }
      console.log(`${k}: ${n} attempts in ${Date.now() - t} ms; ${exitInfo}; kept receipt file(s) ${kept.replace(/\n/g, ',')} B; ${q}`);
    }
    await remote.close();
  } finally { host.kill('SIGTERM'); await new Promise((r) => host.once('exit', r)); fs.rmSync(dir, { recursive: true, force: true }); }
  console.log(res.control !== 1 ? 'control failed' : res.probe !== 1 ? `FINDING: the tenant cannot read its own kept receipt (receipts() → ${res.probe})` : 'held');
})().catch((e) => { console.error(e); process.exitCode = 1; });
