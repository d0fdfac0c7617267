'use strict';
// Probe: the provider's event loop, threads and descriptors while a program
// floods fd 3 for 5 s with (a) 1-byte sends, (b) 1-byte messages each carrying
// 253 descriptors (pipe ends), (c) zero-byte sendmsg with descriptors only,
// (d) 253 sockets per message that each hold unsent data and SO_LINGER
// {1, 3600} (AF_UNIX stream pairs whose peer is in the same message).
// Control: a program that sleeps 5 s. Each: event-loop delay max/p99 (5 ms
// resolution), peak provider threads and fds, wait() time, fds/threads after.
// Usage: node floods.js
const fs = require('node:fs');
const { py, snap, sleep, within, delayMonitor, threads, fds } = require('./h');

const CODE = String.raw`
import socket, sys, os, array, time, struct
ch = socket.socket(fileno=3); mode = sys.argv[1]; end = time.time() + 5; n = 0; nf = 0
r, w = os.pipe()
etoomany = 0
def msg(data, fdl):
    global etoomany
    while True:
        try: return ch.sendmsg(data, [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', fdl))])
        except OSError as e:
            if e.errno != 109: raise
            etoomany += 1; time.sleep(0.0005)   # in-flight descriptors of this uid > RLIMIT_NOFILE: wait for the host
if mode == 'sleep':
    time.sleep(5)
while time.time() < end and mode != 'sleep':
    if mode == 'tiny':
        ch.send(b'x'); n += 1
    elif mode == 'fds':
        msg([b'x'], [r] * 126 + [w] * 127); n += 1; nf += 253
    elif mode == 'fdonly':
        try: msg([], [r] * 253); n += 1; nf += 253
        except OSError as e: sys.stderr.write('fdonly %s\n' % e); break
    elif mode == 'linger':
        socks = []
        for i in range(60):
            a, b = socket.socketpair(); a.setblocking(False)
            try:
                while True: a.send(b'y' * 65536)
            except BlockingIOError: pass
            a.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, 3600))
            socks += [a, b]
        msg([b'x'], [s.fileno() for s in socks]); n += 1; nf += len(socks)
        for s in socks: s.close()
sys.stderr.write('N %d %d etoomanyrefs %d\n' % (n, nf, etoomany))
`;

async function one(mode) {
  const s0 = snap();
  const mon = delayMonitor();
  let peakT = 0, peakF = 0;
  const iv = setInterval(() => { peakT = Math.max(peakT, threads()); peakF = Math.max(peakF, fds()); }, 20);
  const ex = py(CODE, [mode]);
  let got = 0; ex.protocol.on('data', (d) => { got += d.length; });
  const t0 = Date.now();
  const ok = await within(ex.wait(), 20000);
  const ms = Date.now() - t0;
  if (!ok) await within(ex.stop(), 10000);
  clearInterval(iv);
  const d = mon.stop();
  await sleep(300);
  const r = ok ? await ex.wait() : null;
  return { mode, settled: ok, waitMs: ms, delay: d, peakThreads: peakT, peakFds: peakF, before: s0, after: snap(), got, receiptOut: r && r.receipt.bytes.protocolOut, prog: (ex.text.match(/N \d+ \d+ etoomanyrefs \d+|fdonly.*/) || [ex.text.slice(-200)])[0] };
}

(async () => {
  const res = [];
  for (const m of ['sleep', 'tiny', 'fds', 'fdonly', 'linger']) { res.push(await one(m)); console.log(JSON.stringify(res[res.length - 1])); }
  const c = res[0];
  const bad = res.slice(1).filter((r) => !r.settled || r.delay.maxMs > Math.max(250, 4 * c.delay.maxMs) || r.after.fds > c.after.fds + 2 || r.after.threads > c.after.threads + 2 || (r.receiptOut !== null && r.receiptOut !== r.got));
  if (bad.length) console.log('FINDING: ' + bad.map((r) => `${r.mode}: settled=${r.settled} delay max ${r.delay.maxMs} ms (control ${c.delay.maxMs}), fds ${r.after.fds}, threads ${r.after.threads}`).join('; '));
  else console.log('held');
  process.exit(0);
})();
