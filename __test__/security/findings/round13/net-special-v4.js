'use strict';
// Mediated network: destinations that are this machine or special-purpose IPv4 space, named as strict IPv4
// literals WITHOUT allowPrivateAddresses. docs/network.md: non-global addresses are refused (private-address)
// unless allowed. A loopback HTTP server listens on 0.0.0.0:<port>; the sandbox asks the proxy for each.
// Control: 127.0.0.1 → private-address. Usage (root or uid 65534): node net-special-v4.js
const http = require('node:http'); const os = require('node:os');
const { spawnIsolated, readOnly } = require(process.env.R13_PKG || '../../../..');
(async () => {
  const srv = http.createServer((q, r) => r.end('hello-from-host\n')).listen(0, '0.0.0.0'); await new Promise((r) => srv.once('listening', r));
  const port = srv.address().port;
  const own = Object.values(os.networkInterfaces()).flat().filter((a) => a.family === 'IPv4' && !a.internal).map((a) => a.address);
  const targets = ['127.0.0.1', '0.0.0.0', '0.0.0.1', '127.0.0.2', ...own, '100.64.0.1', '198.18.0.1', '192.0.0.1', '240.0.0.1', '255.255.255.255', '224.0.0.1', '169.254.1.1', '10.0.0.1', '192.88.99.1', '198.51.100.1', '203.0.113.1'];
  const res = {};
  try {
    for (const h of targets) {
      const py = `import socket
s = socket.create_connection(('127.0.0.1', 3128), timeout=5)
s.sendall(b'GET http://${h}:${port}/ HTTP/1.1\\r\\nHost: ${h}:${port}\\r\\nConnection: close\\r\\n\\r\\n')
s.settimeout(4)
d = b''
try:
    while True:
        x = s.recv(4096)
        if not x: break
        d += x
except Exception as e: d += str(e).encode()
print(d.decode(errors='replace').split('\\r\\n')[0], 'BODY-HOST' if b'hello-from-host' in d else '', flush=True)`;
      const ex = spawnIsolated(['/usr/bin/python3', '-c', py], { policy: { ...readOnly(), network: { mode: 'mediated', allow: [`${h}:${port}`] } } });
      let err = ''; ex.stderr.on('data', (d) => { err += d; }); ex.protocol.resume();
      const r = await ex.wait().catch((e) => ({ e: e.code + ' ' + e.message }));
      const nr = r.networkReceipts || r.receipt?.networkReceipts || [];
      res[h] = { result: nr.map((x) => x.result).join(','), out: err.trim().slice(0, 100), e: r.e };
      console.log(h.padEnd(16), r.e ? 'policy: ' + r.e.slice(0, 120) : `receipt ${res[h].result || '-'} | ${res[h].out}`);
    }
  } finally { srv.close(); }
  const reached = Object.entries(res).filter(([, v]) => /BODY-HOST/.test(v.out)).map(([k]) => k);
  console.log(!/private-address/.test(res['127.0.0.1'].result) ? 'control failed' : reached.length ? `FINDING: reached this machine's server without allowPrivateAddresses through ${reached.join(', ')}` : 'held');
})().catch((e) => { console.error(e); process.exitCode = 1; });
