'use strict';
// Does one run's slow namespace teardown (many inodes in /tmp, R12-2's 30 s wait) hold up the provider's shared
// supervision runtime, on which every other run's egress engine runs (docs/network.md › The engine)? Run A (mediated)
// fetches from a loopback server through the proxy every 50 ms and reports the largest gap between answers; meanwhile
// N other runs each make ~1 M empty files in /tmp for T s and exit (their teardowns take seconds).
// Control: A alone. Usage (uid 65534 or root): node teardown-vs-network.js [N=3] [T=3]
const fs = require('node:fs'); const os = require('node:os'); const path = require('node:path'); const http = require('node:http'); const { execFileSync } = require('node:child_process');
const { spawnIsolated, readOnly, workspaceWrite } = require(process.env.R13_PKG || '../../../..');
const N = Number(process.argv[2] || 3), T = Number(process.argv[3] || 3);
const src = `#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <time.h>
#include <sys/stat.h>
int main(int c,char**v){int T=atoi(v[1]);char p[64];long n=0;time_t e=time(0)+T;if(chdir("/tmp"))return 2;
for(;;){snprintf(p,64,"%ld",n);if(mknod(p,S_IFREG|0644,0))break;n++;if(!(n&1023)&&time(0)>=e)break;}printf("%ld files\\n",n);return 0;}`;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'r13-tvn-')); fs.writeFileSync(tmp + '/l.c', src);
execFileSync('gcc', ['-O2', '-o', tmp + '/l', tmp + '/l.c']); const bin = fs.readFileSync(tmp + '/l'); fs.rmSync(tmp, { recursive: true, force: true });
const clientPy = (port, secs) => `import socket, time
gaps = []; last = time.time(); end = last + ${secs}; n = 0; errs = 0
while time.time() < end:
    try:
        s = socket.create_connection(('127.0.0.1', 3128), timeout=30)
        s.sendall(b'GET http://127.0.0.1:${port}/ HTTP/1.1\\r\\nHost: 127.0.0.1:${port}\\r\\nConnection: close\\r\\n\\r\\n')
        d = b''
        while True:
            x = s.recv(65536)
            if not x: break
            d += x
        s.close()
        if b'hello' in d: n += 1
        else: errs += 1
    except Exception as e:
        errs += 1
    now = time.time(); gaps.append(now - last); last = now
    time.sleep(0.05)
print('answers', n, 'errors', errs, 'maxgap_ms', int(max(gaps) * 1000), flush=True)`;
const runA = (port, secs) => {
  const ex = spawnIsolated(['/usr/bin/python3', '-c', clientPy(port, secs)], { policy: { ...readOnly(), network: { mode: 'mediated', allow: [{ protocol: 'tcp', host: '127.0.0.1', port, allowPrivateAddresses: true }] }, resources: { ...readOnly().resources, networkStreams: 10000 } } });
  let err = ''; ex.stderr.on('data', (d) => { err += d; }); ex.protocol.resume();
  return ex.wait().then((r) => ({ rc: r.returncode, err: err.trim(), n: r.receipt?.networkReceipts?.length }));
};
const fill = async () => {
  const t = Date.now();
  const ex = spawnIsolated(['/bin/sh', '-c', `head -c ${bin.length} <&3 > /tmp/l && chmod +x /tmp/l && exec /tmp/l ${T} >&2`], { policy: workspaceWrite() });
  ex.protocol.end(bin); ex.protocol.resume(); let err = ''; ex.stderr.on('data', (d) => { err += d; });
  const r = await ex.wait(); return `${err.trim()} wait ${Date.now() - t} ms confirmed ${r.receipt?.stop?.containmentConfirmed}`;
};
(async () => {
  const srv = http.createServer((q, r) => r.end('hello\n')).listen(0, '127.0.0.1'); await new Promise((r) => srv.once('listening', r));
  const port = srv.address().port;
  let lag = 0; let lastTick = Date.now(); const iv = setInterval(() => { const n = Date.now(); lag = Math.max(lag, n - lastTick - 20); lastTick = n; }, 20);
  try {
    const c = await runA(port, 8); console.log('control, A alone:', JSON.stringify(c), 'provider loop lag max', lag, 'ms');
    lag = 0;
    const a = runA(port, 14);
    await new Promise((r) => setTimeout(r, 2500));
    const fills = await Promise.all(Array.from({ length: N }, fill));
    console.log('fills:', fills.join(' | '));
    const p = await a; console.log('probe, A with', N, 'teardowns:', JSON.stringify(p), 'provider loop lag max', lag, 'ms');
    const g = (x) => Number((x.err.match(/maxgap_ms (\d+)/) || [])[1]);
    console.log(!(g(c) < 1000) ? 'control failed' : g(p) > 2000 ? `FINDING: another run's network stalled ${g(p)} ms while ${N} runs tore down` : 'held');
  } finally { clearInterval(iv); srv.close(); }
})().catch((e) => { console.error(e); process.exitCode = 1; });
