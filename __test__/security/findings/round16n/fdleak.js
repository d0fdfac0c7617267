'use strict';
// R16n probe: provider descriptors and threads over RUNS runs that each use
// fd 4 the seqpacket ways (a junk record, a zero-length one, a record with
// descriptors, fd 4 passed over itself, a late MECQ, SHUT_WR; every other
// run leaves without the shutdown). Expected: back to the baseline (+/- 2)
// once the closer threads are done. Control: the baseline after 5 warm-up runs.
const { py, cordon, sleep, within, snap } = require('./h');
const policy = { ...cordon.readOnly(), network: { mode: 'mediated', allow: ['example.com:443'] } };
const relay = process.env.R14_RELAY ? { networkRelayPath: process.env.R14_RELAY } : {};
const RUNS = Number(process.env.R16_RUNS || 200);
const CODE = String.raw`
import socket, sys, os, array, struct
c4 = socket.socket(fileno=4)
r, w = os.pipe()
def send(data, fds): c4.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', fds))] if fds else [], socket.MSG_NOSIGNAL)
send(b'junk', []); send(b'', []); send(b'', [r, w, 4]); send(b'x' * 400, [w])
host = b'example.com'
send(struct.pack('>IBBHH', 0x4d454351, 1, 1, 443, len(host)) + host, [])
if int(sys.argv[1]) % 2 == 0: c4.shutdown(socket.SHUT_WR)
`;
(async () => {
  const one = async (i) => { const ex = py(CODE, [i], { policy, ...relay }); ex.protocol.resume(); const ok = await within(ex.wait(), 15000); if (!ok) await within(ex.stop(), 5000); return ok; };
  for (let i = 0; i < 5; i++) await one(i);
  await sleep(1500);
  const base = snap(); const t0 = Date.now(); let stuck = 0;
  for (let i = 0; i < RUNS; i++) if (!(await one(i))) stuck++;
  const ms = Date.now() - t0;
  await sleep(2000);
  const end = snap();
  console.log(JSON.stringify({ runs: RUNS, ms, perRunMs: Math.round(ms / RUNS), unsettled: stuck, base, end }));
  console.log(end.fds > base.fds + 2 || end.threads > base.threads + 2 || stuck ? `FINDING: after ${RUNS} runs fds ${base.fds}->${end.fds}, threads ${base.threads}->${end.threads}, ${stuck} runs unsettled` : 'held');
  process.exit(0);
})();
