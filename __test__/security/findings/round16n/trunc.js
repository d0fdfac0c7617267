'use strict';
// R16n probe: records around and far past MAX_REQUEST_BYTES (263,
// crates/egress/src/fd4_codec.rs:17) on the seqpacket channel: exactly 263
// (a long name: refused by name, not as truncated), 264, 64 KiB, 4 MiB
// (SO_SNDBUF raised), and a 300-byte one carrying a descriptor. Expected:
// each read once (one receipt, one 8-byte reply each, protocol-error for the
// truncated ones), the 4 MiB one costing the provider no more than a small one,
// and the channel still serving afterwards (a last valid MECQ answered).
const { py, cordon, within } = require('./h');
const policy = { ...cordon.readOnly(), network: { mode: 'mediated', allow: ['example.com:443'] } };
const relay = process.env.R14_RELAY ? { networkRelayPath: process.env.R14_RELAY } : {};
const CODE = String.raw`
import socket, sys, os, array, struct, time
c4 = socket.socket(fileno=4)
c4.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 16 << 20)
def mecq(host, extra=b''): return struct.pack('>IBBHH', 0x4d454351, 1, 1, 443, len(host)) + host + extra
out = []
r, w = os.pipe()
for name, rec, fds in [('263', mecq(b'a' * 253), []), ('264', mecq(b'a' * 253, b'z'), []), ('64k', b'q' * 65536, []), ('4m', b'q' * (4 << 20), []), ('300+fd', b'q' * 300, [w]), ('last', mecq(b'example.com'), [])]:
    t0 = time.time()
    try:
        c4.sendmsg([rec], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', fds))] if fds else [], socket.MSG_NOSIGNAL)
        rep = c4.recv(65536)
        out.append('%s:%s:%dB:%.1fms' % (name, rep.hex(), len(rep), (time.time() - t0) * 1000))
    except OSError as e: out.append('%s:E%d' % (name, e.errno))
os.close(w)
print(' '.join(out), file=sys.stderr)
`;
(async () => {
  const ex = py(CODE, [], { policy, ...relay });
  ex.protocol.resume();
  let result; const ok = await within(ex.wait().then((r) => { result = r; }), 20000);
  const receipts = (result && result.networkReceipts) || [];
  console.log(JSON.stringify({ ok, text: ex.text.trim(), receipts: receipts.map((r) => r.result) }));
  const replies = (ex.text.match(/:[0-9a-f]{16}:8B:/g) || []).length;
  console.log(ok && replies === 6 && receipts.length === 6 ? 'held' : `FINDING: ${replies} 8-byte replies to 6 records, ${receipts.length} receipts, settled ${ok}`);
  process.exit(0);
})();
