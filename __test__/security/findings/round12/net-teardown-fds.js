'use strict';
// Leak after teardown: a session's command holds 32 admitted CONNECT tunnels (and 32 handed-over sockets) to an
// allowed loopback server; then end(). Provider descriptors and the upstream's open connections after end().
// Control: the same session, no connections.
const fs = require('node:fs');
const net = require('node:net');
const { withManager } = require('./h.js');
const fds = () => fs.readdirSync('/proc/self/fd').length;
const py = (port) => `import socket, time
L = []
for i in range(32):
    s = socket.create_connection(('127.0.0.1', 3128)); s.sendall(b'CONNECT localhost:${port} HTTP/1.1\\r\\nHost: localhost:${port}\\r\\n\\r\\n')
    r = s.recv(100)
    if not r.startswith(b'HTTP/1.1 200'): print('refused', r[:40]); break
    L.append(s)
print(len(L), flush=True)
time.sleep(30)`;
(async () => {
  const conns = new Set();
  const srv = net.createServer((c) => { conns.add(c); c.on('close', () => conns.delete(c)); c.on('error', () => {}); }).listen(0, '127.0.0.1');
  await new Promise((r) => srv.once('listening', r));
  const port = srv.address().port;
  try {
    await withManager({ network: { allow: [{ host: 'localhost', port, allowPrivateAddresses: true }] } }, async (sessions) => {
      const res = {};
      for (const k of ['control', 'probe']) {
        const s = await sessions.acquire({ tenant: 't', conversation: k }, { tenant: 't' });
        const f0 = fds();
        let held = 0;
        if (k === 'probe') {
          const h = await s.start(['python3', '-c', py(port)]);
          for (let i = 0; i < 50 && conns.size < 32; i++) await new Promise((r) => setTimeout(r, 100));
          held = conns.size;
        }
        const f1 = fds();
        await s.end();
        await new Promise((r) => setTimeout(r, 2000));
        res[k] = { before: f0, during: f1, after: fds(), upstreamOpen: conns.size, held };
        console.log(`${k}: provider descriptors ${f0} → ${f1} (upstream connections ${held}) → after end() + 2 s: ${res[k].after}; upstream connections still open ${conns.size}`);
      }
      const leak = res.probe.after - res.probe.before > 3 || res.probe.upstreamOpen > 0;
      console.log(res.probe.held < 32 ? 'probe could not hold 32 tunnels' : leak ? 'FINDING: descriptors or upstream connections outlive the session' : 'held');
    });
  } finally { srv.close(); for (const c of conns) c.destroy(); }
})().catch((e) => { console.error(e); process.exitCode = 1; });
