'use strict';
// R11-8 variant: instead of idle engine-socket connections, a session's command hands TCP sockets over
// the engine socket (marker byte 0 + SCM_RIGHTS, "still relayed as before", docs/network.md) and closes its
// engine-socket connection at once. Are the adopted sockets bounded by networkConcurrentStreams (32)?
// Usage: node handoff-provider-fds.js [handoff|control] [P=6]   (root, or uid 65534 via setpriv from /tmp)
const fs = require('node:fs');
const http = require('node:http');
const { withManager } = require('./h.js');
const mode = process.argv[2] || 'handoff';
const P = Number(process.argv[3] || 6);
const fds = () => { try { return fs.readdirSync('/proc/self/fd').length; } catch (e) { return e.code; } };
const py = `import socket, array, time, sys
L = socket.socket(); L.bind(('127.0.0.1', 0)); L.listen(512); port = L.getsockname()[1]
keep = []; answers = {}
for i in range(110):
    try:
        c = socket.create_connection(('127.0.0.1', port)); a, _ = L.accept()
        if ${mode === 'handoff' ? 'True' : 'False'}:
            e = socket.socket(socket.AF_UNIX); e.connect('/.cordon/egress/engine.sock')
            e.sendmsg([b'\\0'], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', [a.fileno()]))])
            e.settimeout(0.2)
            try: r = e.recv(1); answers[r] = answers.get(r, 0) + 1
            except Exception as x: answers[type(x).__name__] = answers.get(type(x).__name__, 0) + 1
            e.close(); a.close()
        else:
            keep.append(a)
        keep.append(c)
    except Exception as x:
        answers['stop:' + type(x).__name__] = 1; break
print(len(keep), answers, flush=True)
time.sleep(12)`;
(async () => {
  const srv = http.createServer((q, r) => r.end('hello\n')).listen(0, '127.0.0.1');
  await new Promise((r) => srv.once('listening', r));
  const port = srv.address().port;
  try {
    await withManager({ network: { allow: [{ host: 'localhost', port, allowPrivateAddresses: true }] } }, async (sessions) => {
      const a = await sessions.acquire({ tenant: 't', conversation: 'attacker' }, { tenant: 't' });
      const before = fds();
      let peak = before;
      const iv = setInterval(() => { const n = fds(); if (typeof n === 'number' && n > peak) peak = n; }, 100);
      const h = await a.start({ shell: 'bash', script: `for i in $(seq ${P}); do python3 -c "$PY" & done; wait` }, { env: { PY: py } });
      await new Promise((r) => setTimeout(r, 9000));
      const during = fds();
      const r = await h.wait();
      clearInterval(iv);
      const after = fds();
      console.log(`uid ${process.getuid()}, ${mode}: ${P} processes: ${r.stdout.trim().split('\n').join(' | ')}; provider descriptors ${before} → ${during} (peak ${peak}) → ${after} after the processes ended`);
      console.log(peak - before > 100 ? 'FINDING: handed-over sockets are not bounded by networkConcurrentStreams' : 'held');
    });
  } finally { srv.close(); }
})().catch((e) => { console.error(e); process.exitCode = 1; });
