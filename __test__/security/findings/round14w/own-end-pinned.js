'use strict';
// R14w: can a sandbox keep its own end of fd 3 open after it is gone, so the
// teardown's drain (crates/launcher/src/run/owner_reader.rs:177 drain_to_end,
// bound None when containment is confirmed) never sees EOF and wait() never
// settles?
// The program hands the host, over fd 3, one message [Y, P, S]: Y a unix socket
// whose queue holds T (loopback TCP, SO_LINGER 3600 s, unsent data), P T's
// never-read peer, S a dup of its own fd 3. The host's detached closer thread
// blocks closing Y (R4-4's documented nested case) with S still open in the
// provider. Then the program exits.
// Control: the same message without S. Settled within 20 s or not; stop() tried.
const path = require('node:path');
const PKG = process.env.R14W_PKG || path.resolve(__dirname, '../../../..');
const { spawnIsolated, readOnly } = require(PKG);
const WAIT_MS = Number(process.env.R14W_WAIT_MS || 20000);

const py = (withS) => `
import socket, os, array, struct, errno, time
S = socket.SOL_SOCKET
s3 = socket.socket(fileno=3)
L = socket.socket(); L.setsockopt(S, socket.SO_RCVBUF, 2048); L.bind(('127.0.0.1', 0)); L.listen(4)
t = socket.socket(); t.setsockopt(S, socket.SO_SNDBUF, 65536); t.connect(L.getsockname()); p, _ = L.accept()
t.setblocking(False)
try:
    while True: t.send(b'z' * 4096)
except BlockingIOError: pass
t.setsockopt(S, socket.SO_LINGER, struct.pack('ii', 1, 3600))
x, y = socket.socketpair()
x.sendmsg([b'n'], [(S, socket.SCM_RIGHTS, array.array('i', [t.fileno()]))])
t.close()
s3.setblocking(False)
try:
    while True: s3.send(b'.' * 65536)
except BlockingIOError: pass
s3.setblocking(True)
fds = [y.fileno(), p.fileno()] + ([os.dup(3)] if ${withS ? 1 : 0} else [])
s3.sendmsg([b'p'], [(S, socket.SCM_RIGHTS, array.array('i', fds))])
os.write(2, b'sent\\n')
os._exit(0)
`;

async function one(name, withS) {
  const t0 = Date.now();
  const e = spawnIsolated(['/usr/bin/python3', '-c', py(withS)], { policy: { ...readOnly(), network: { mode: 'mediated', allow: ['example.com:443'] } }, networkRelayPath: path.join(PKG, 'target/release/cordon-egress-relay') });
  e.protocol.resume(); let err = ''; e.stderr.on('data', (c) => { err += c; });
  let ended = false; e.protocol.on('end', () => { ended = true; });
  const settled = e.wait().then((r) => ({ rc: r.returncode, ms: Date.now() - t0, containmentConfirmed: r.receipt.containmentConfirmed ?? r.receipt.stop?.containmentConfirmed }));
  let r = await Promise.race([settled, new Promise((res) => setTimeout(() => res(null), WAIT_MS))]);
  let afterStop = null;
  if (!r) { e.stop(); afterStop = await Promise.race([settled, new Promise((res) => setTimeout(() => res(null), 5000))]); }
  const out = { name, settled: !!r, result: r, afterStop, protocolEnded: ended, stderr: err.trim() };
  console.log(JSON.stringify(out));
  return out;
}

(async () => {
  const ctl = await one('control [Y,P]', false);
  const atk = await one('[Y,P,S]', true);
  if (ctl.settled && !atk.settled) console.log(`FINDING: a sandbox that hands the host its own fd 3 end behind a blocking close keeps wait() pending > ${WAIT_MS} ms after it exited; stop() then: ${atk.afterStop ? 'settled' : 'still pending after 5 s'} (control settled in ${ctl.result.ms} ms)`);
  else console.log(`held (control ${JSON.stringify(ctl.result)}, probe ${JSON.stringify(atk.result)})`);
  process.exit(0);
})();
