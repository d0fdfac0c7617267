'use strict';
// The program passes its fd 3 (the protocol socket) in an fd-4 record while the provider keeps writing to it.
// The engine's closer "receives a passed Unix socket's own queue to its end": does it keep draining the provider's
// protocol bytes (a provider thread reading for as long as the provider writes)? Also checks SO_PASSRIGHTS on a
// handed-out stream (sendmsg with descriptors -> EPERM on 6.16+) and that a direct TCP connect (mediated mode allows AF_INET in the private namespace) goes nowhere.
// Control: the program does not pass fd 3 (bytes the provider manages to write = the socket buffer).
const { cordon, tcpServer, policyFor, collect, PY_PRELUDE, cpuTicks, closerWchans } = require('./common');
const MODE = process.argv[2] || 'pass';
(async () => {
  const srv = await tcpServer();
  const py = PY_PRELUDE + `
def t(name, f):
    try: print(name, 'OK', f())
    except Exception as e: print(name, 'ERR', type(e).__name__, getattr(e, 'errno', ''))
req(${srv.port}); msg, fds = reply()
s = socket.socket(fileno=fds[0])
t('stream.sendmsg.rights', lambda: s.sendmsg([b'x'], rights([4])))
t('inet.connect.outside', lambda: socket.create_connection(('1.1.1.1', 80), timeout=2))
if ${JSON.stringify(MODE)} == 'pass':
    req(1, raw=b'junk', anc=rights([3] * 253)); t('reply', reply)
print('passed', flush=True)
time.sleep(4)
`;
  const run = cordon.spawnIsolated(['/usr/bin/python3', '-c', py], { policy: policyFor(srv.port), deadlineMs: 20000 });
  const out = collect(run.stderr); run.protocol.resume();
  let written = 0; let stop = false; const buf = Buffer.alloc(65536, 1);
  const c0 = cpuTicks(); let closers = 0;
  const iv = setInterval(() => { closers = Math.max(closers, closerWchans().length); }, 50);
  (async () => { while (!stop) { written += buf.length; if (!run.protocol.write(buf)) await new Promise((r) => { const d = () => { clearTimeout(to); r(); }; const to = setTimeout(() => { run.protocol.off('drain', d); r(); }, 200); run.protocol.once('drain', d); }); else await new Promise((r) => setImmediate(r)); } })();
  const r = await run.wait(); stop = true; clearInterval(iv); srv.close();
  const b = r.receipt.bytes;
  console.log(out().trim());
  console.log(JSON.stringify({ mode: MODE, protocolInMiB: +(b.protocolIn / 1048576).toFixed(1), discardedMiB: +(b.protocolInDiscarded / 1048576).toFixed(1), cpuTicks: cpuTicks() - c0, closers, receipts: r.networkReceipts.map((x) => x.result) }));
  const bad = [];
  if (b.protocolIn > 64 * 1048576) bad.push(`the engine drained ${(b.protocolIn / 1048576).toFixed(0)} MiB of the provider's protocol bytes from the passed fd 3`);
  if (!/stream.sendmsg.rights ERR PermissionError/.test(out())) bad.push('descriptors accepted on a handed-out stream');
  if (/inet.connect.outside OK/.test(out())) bad.push('a direct TCP connection left the sandbox');
  console.log(bad.length ? 'FINDING: ' + bad.join('; ') : 'held');
})();
