'use strict';
// fd 4 odds and ends: SCM_CREDENTIALS ancillary (a forged pid), a valid request carrying descriptors, a 1-byte and a
// 65535-byte record, a record with a truncated host, stream half-close (SHUT_WR) then read the echo.
// Expected per docs/network.md: MALFORMED (4) for ancillary/bad records (a forged pid may already fail in sendmsg),
// receipts one per record, half-close gives the echo and end "closed". Control: one plain request.
const { cordon, tcpServer, policyFor, collect, PY_PRELUDE } = require('./common');
(async () => {
  const srv = await tcpServer();
  const py = PY_PRELUDE + `
def st(): return reply()[0][5]
creds = [(socket.SOL_SOCKET, socket.SCM_CREDENTIALS, struct.pack('iII', 1, 0, 0))]
out = {}
try: req(${srv.port}, anc=creds); out['creds_forged_pid1'] = st()
except OSError as e: out['creds_forged_pid1'] = 'send ' + str(e.errno)
a, b = socket.socketpair()
req(${srv.port}, anc=rights([a.fileno()])); m, f = reply(); out['valid_with_fd'] = (m[5], len(f))
fd4.send(b'M'); out['one_byte'] = st()
try: fd4.send(b'\\0' * 65535); out['big'] = st()
except OSError as e: out['big'] = 'send ' + str(e.errno)
fd4.send(struct.pack('>IBBHH', 0x4d454351, 1, 1, ${srv.port}, 20) + b'127.0.0.1'); out['short_host'] = st()
req(${srv.port}); m, f = reply(); s = socket.socket(fileno=f[0]); s.sendall(b'half-close'); s.shutdown(socket.SHUT_WR)
data = b''
while True:
    c = s.recv(100)
    if not c: break
    data += c
out['halfclose_echo'] = data.decode()
print(out, flush=True)
`;
  const run = cordon.spawnIsolated(['/usr/bin/python3', '-c', py], { policy: policyFor(srv.port), deadlineMs: 15000 });
  const out = collect(run.stderr); run.protocol.resume();
  const r = await run.wait(); srv.close();
  console.log(out().trim());
  const recs = r.networkReceipts.map((x) => `${x.result}/${x.end}/${x.bytesFromClient}`);
  console.log(JSON.stringify(recs));
  const o = out();
  const bad = [];
  if (!/'creds_forged_pid1': (4|'send)/.test(o)) bad.push('SCM_CREDENTIALS request not refused');
  if (!/'valid_with_fd': \(4, 0\)/.test(o)) bad.push('request carrying a descriptor not MALFORMED');
  if (!/'halfclose_echo': 'half-close'/.test(o)) bad.push('half-close lost the echo');
  if (!recs.some((x) => x === 'allowed/closed/10')) bad.push('half-closed stream receipt not allowed/closed/10');
  console.log(bad.length ? 'FINDING: ' + bad.join('; ') : 'held');
})();
