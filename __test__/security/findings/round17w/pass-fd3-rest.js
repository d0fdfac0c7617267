'use strict';
// The one path where counted_rest could go stale: fd 3's peer outliving the sandbox (the program passes its fd 3
// ×253 in an fd-4 record, then exits; the engine's closer holds and drains the copies). If ProtocolEnd's hand-on of a
// kept rest then meets a full socket it is kept again, dropped at settle without reaching the launcher, and the
// rest counted at the close would be subtracted from a later write. Each run: big writes (rests kept) until wait(),
// then 777 bytes: protocolDroppedBytes must grow by exactly 777 and the invariant hold.
// node pass-fd3-rest.js [RUNS] [control]   (control: the program does not pass fd 3)
const path = require('path');
const net = require('net');
const { spawn, account, sleep } = require('./common');
const RUNS = +(process.argv[2] || 30);
const control = process.argv[3] === 'control';
const { cordon } = require('./common');
(async () => {
  const srv = net.createServer((c) => { c.on('error', () => {}); c.pipe(c); });
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  const port = srv.address().port;
  const policy = { ...cordon.readOnly(), network: { mode: 'mediated', frontend: 'fd4', allow: [{ protocol: 'tcp', host: '127.0.0.1', port, allowPrivateAddresses: true }] } };
  let bad = 0;
  for (let i = 0; i < RUNS; i++) {
    const py = `
import socket, struct, array, time
fd4 = socket.socket(fileno=4)
time.sleep(${(i % 5) * 0.01})
if ${control ? 'False' : 'True'}:
    fd4.sendmsg([b'junk'], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', [3] * 253))])
`;
    const { ex, p, st, w } = spawn(py, { policy });
    p.resume();
    let settled = false;
    ex.wait().then(() => { settled = true; }, () => { settled = true; });
    for (let k = 0; !settled && k < 40; k++) await w(1 << 20);
    let r;
    try { r = await ex.wait(); } catch (e) { console.log('run failed', e.code); bad++; continue; }
    for (let k = 0; k < 100 && st.pending > 0; k++) await sleep(2);
    const before = ex.protocolDroppedBytes;
    await w(777);
    const grew = ex.protocolDroppedBytes - before;
    const a = account(ex, st, r);
    const ok = a.missing === 0 && grew === 777 && !a.pending;
    if (!ok) bad++;
    if (!ok || process.env.V) console.log(ok ? 'ok ' : 'BAD', JSON.stringify({ i, grew, ...a }));
  }
  srv.close();
  console.log(bad ? `FINDING: ${bad}/${RUNS} runs miscounted (a stale counted_rest or a lost byte)` : `held (${RUNS} runs)`);
})();
