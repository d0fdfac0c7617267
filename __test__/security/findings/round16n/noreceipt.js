'use strict';
// R16n probe: records queued before SHUT_WR behind a zero-length record.
// fd4_server.rs:70-78 ends the channel on the first zero-length read once
// POLLRDHUP is set, so a zero-length record read after the program's
// shutdown is taken for the shutdown itself and every record queued behind
// it (a junk one, a MECQ) is dropped unread: no receipt, no quota slot.
// Control: the same records without the shutdown (3 receipts).
const { py, cordon, within } = require('./h');
const policy = { ...cordon.readOnly(), network: { mode: 'mediated', allow: ['example.com:443'] } };
const relay = process.env.R14_RELAY ? { networkRelayPath: process.env.R14_RELAY } : {};
const CODE = String.raw`
import socket, sys, struct, time
c4 = socket.socket(fileno=4)
host = b'example.com'
c4.send(b''); c4.send(b'junk'); c4.send(struct.pack('>IBBHH', 0x4d454351, 1, 1, 443, len(host)) + host)
if sys.argv[1] == 'shut': c4.shutdown(socket.SHUT_WR)
time.sleep(0.5)
`;
(async () => {
  const got = {}; const lost = [];
  for (const mode of ['control', 'shut', 'shut', 'shut', 'shut', 'shut']) {
    const ex = py(CODE, [mode], { policy, ...relay });
    ex.protocol.resume();
    let result; await within(ex.wait().then((r) => { result = r; }), 15000);
    got[mode] = ((result && result.networkReceipts) || []).map((r) => r.result);
    if (mode === 'shut') lost.push(3 - got[mode].length);
  }
  console.log(JSON.stringify({ control: got.control, lostPerShutRun: lost }));
  const bad = lost.filter((n) => n > 0).length;
  console.log(bad ? `FINDING: in ${bad} of ${lost.length} runs the 3 records sent before SHUT_WR (zero-length, junk, MECQ) left no receipt (lost per run: ${lost.join(',')}); control without the shutdown: ${got.control.length} receipts (${got.control.join(', ')}) (racy: the engine must read the zero-length record after the shutdown)` : 'held');
  process.exit(0);
})();
