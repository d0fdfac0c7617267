'use strict';
// Probe: the nested lingering TCP socket (nested-linger.js) sits in fd 3's
// queue *behind 1 MiB the provider never reads* (a provider that does not
// consume `protocol`, then calls stop()). Whoever drops the host's end of fd 3
// with that message still queued runs the last close of the TCP socket. If
// that is the JS thread, the event loop blocks (SO_LINGER 3600 s); if a pump,
// wait() does not settle. Control: the same without the nested socket.
const fs = require('node:fs');
const { py, cordon, snap, sleep, within, delayMonitor } = require('./h');
const policy = { ...cordon.readOnly(), network: { mode: 'mediated', allow: ['example.com:443'] } };
const relay = process.env.R14_RELAY ? { networkRelayPath: process.env.R14_RELAY } : {};
const CODE = String.raw`
import socket, struct, sys, array, os, time
nested = sys.argv[1] == 'nested'
ch = socket.socket(fileno=3)
ch.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
ch.sendall(b'.' * (1 << 20))
if nested:
    L = socket.socket(); L.bind(('127.0.0.1', 0)); L.listen(1)
    X = socket.socket(); X.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    X.connect(L.getsockname()); P, _ = L.accept()
    P.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    X.setblocking(False)
    try:
        while True: X.send(b'x' * 65536)
    except BlockingIOError: pass
    X.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, 3600))
    U1, U2 = socket.socketpair()
    U1.sendmsg([b'z'], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', [X.fileno(), P.fileno()]))])
    U1.close(); X.close(); P.close(); L.close()
    ch.sendmsg([b'y'], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', [U2.fileno()]))])
    U2.close()
sys.stderr.write('queued\n'); sys.stderr.flush()
if sys.argv[2] == 'sleep': time.sleep(600)
`;
function stuck() { let n = 0; for (const t of fs.readdirSync('/proc/self/task')) { try { if (/wait_woken|sk_stream_wait_close/.test(fs.readFileSync(`/proc/self/task/${t}/wchan`, 'utf8'))) n++; } catch {} } return n; }
async function one(kind, end) {
  const ex = py(CODE, [kind, end], { policy, ...relay });
  ex.stderr.resume();
  while (!/queued/.test(ex.text) && ex.text.length < 5000) { await sleep(50); if (/Error/.test(ex.text)) break; }
  await sleep(500);
  const mon = delayMonitor();
  const t0 = Date.now();
  const stopP = end === 'sleep' ? ex.stop() : null;
  const settled = await within(ex.wait(), 8000);
  const ms = Date.now() - t0;
  let drained = null;
  if (!settled) { ex.protocol.resume(); drained = await within(ex.wait(), 8000); }
  const d = mon.stop();
  return { kind, end, settled, ms, drainedAfterResume: drained, stopSettled: stopP ? await within(stopP, 1) : null, delay: d, stuck: stuck(), err: ex.text.slice(-150) };
}
(async () => {
  const res = [];
  for (const [k, e] of [['plain', 'sleep'], ['nested', 'sleep'], ['plain', 'exit'], ['nested', 'exit']]) { res.push(await one(k, e)); console.log(JSON.stringify(res[res.length - 1])); }
  const c = res[0];
  const bad = res.filter((r) => r.kind === 'nested' && (r.delay.maxMs > 500 || (r.settled !== res.find((x) => x.kind === 'plain' && x.end === r.end).settled)));
  console.log(bad.length ? 'FINDING: ' + bad.map((r) => `${r.kind}/${r.end}: settled ${r.settled}, loop delay max ${r.delay.maxMs} ms`).join('; ') : `held (stuck close threads now ${stuck()})`);
  process.exit(0);
})();
