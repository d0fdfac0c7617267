'use strict';
// Smoke/control: one fd-4 request, the handed-out stream (AF_UNIX SOCK_STREAM) echoes through the engine.
const { cordon, tcpServer, policyFor, collect, PY_PRELUDE } = require('./common');
(async () => {
  const srv = await tcpServer();
  const py = PY_PRELUDE + `
req(${srv.port}); msg, fds = reply(); print('reply', msg.hex(), fds)
s = socket.socket(fileno=fds[0]); print(s.family, s.type); s.sendall(b'hello'); print(s.recv(10))
`;
  const run = cordon.spawnIsolated(['/usr/bin/python3', '-c', py], { policy: policyFor(srv.port) });
  const out = collect(run.stderr); run.protocol.resume();
  const r = await run.wait(); srv.close();
  console.log(r.returncode, out(), r.networkReceipts.map((x) => [x.frontend, x.result, x.end, x.bytesFromClient]));
  console.log(/b'hello'/.test(out()) && r.networkReceipts.length === 1 ? 'held (smoke: fd-4 stream echo, one receipt)' : 'FINDING: fd-4 smoke failed');
})();
