'use strict';
// R15 probe: docs/network.md — on fd 4 "every datagram counts against networkStreams, a
// malformed one too", and once spent the channel is closed (later sends: ECONNREFUSED).
// Does a zero-length datagram carrying only descriptors count, and does the channel close?
// (256 + the refused one get receipts; one more send may be queued before the close.)
// Also fd 3 (Linux 6.16+): sendmsg with SCM_RIGHTS fails with EPERM. Control: MECQ junk
// datagrams without descriptors.   usage: node quota-rights.js
const h = require('./h');
const CODE = h.PY + String.raw`
kind = sys.argv[1]
import errno
c4 = socket.socket(fileno=4); c4.settimeout(2)
p = os.pipe()[0]
sent = 0; err = None
for i in range(400):
    try:
        if kind == 'rights': c4.sendmsg([], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', [p] * 8))])
        else: c4.send(b'junk')
        sent += 1
        try: c4.recv(64)
        except socket.timeout: pass
    except OSError as e:
        err = errno.errorcode.get(e.errno, e.errno); break
try:
    send(socket.socket(fileno=3), b'x', [p]); fd3 = 'accepted'
except OSError as e: fd3 = errno.errorcode.get(e.errno, e.errno)
log('RES', sent, err, fd3)
`;
(async () => {
  const s = await h.server('sink');
  const out = {};
  for (const kind of ['junk', 'rights']) {
    const ex = h.py(CODE, [kind], { policy: h.policyFor(s.port) });
    const r = await ex.wait();
    out[kind] = { res: (ex.text.match(/RES (.*)/) || [, ex.text.slice(-200)])[1], receipts: r.networkReceipts.length, dropped: r.networkReceiptsDropped };
    console.log(kind, JSON.stringify(out[kind]));
  }
  s.shut();
  const [n, e, fd3] = out.rights.res.split(' ');
  console.log(Number(n) <= 260 && ['ECONNREFUSED', 'EPIPE'].includes(e) && fd3 === 'EPERM' ? `held (rights-only datagrams: ${n} sent, then ${e}; ${out.rights.receipts} receipts; fd 3 rights: ${fd3}; control junk: ${out.junk.res})` : `FINDING: rights-only datagrams: ${out.rights.res} (control ${out.junk.res})`);
  process.exit(0);
})();
