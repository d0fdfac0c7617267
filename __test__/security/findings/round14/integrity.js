'use strict';
// Probe: bytes over fd 3 in both directions are neither lost, duplicated nor
// reordered, and the receipt's counts match, under odd chunking: the program
// sends random-sized writes (1 B .. 200 KiB) interleaved with descriptor-only
// and descriptor-carrying messages (SCM_RIGHTS with 1..253 pipe ends), while
// the host writes random-sized chunks, some with end() mid-flight, and reads
// with pauses. Control: a plain cat-like echo of the same data.
// Usage: node integrity.js [MiB=32]
const crypto = require('node:crypto');
const { py, snap, sleep, within, delayMonitor } = require('./h');
const MIB = Number(process.argv[2] || 32);

const CODE = String.raw`
import socket, sys, os, array, hashlib, random, threading
ch = socket.socket(fileno=3)
total = int(sys.argv[1]); fdmode = sys.argv[2] == 'fds'
rnd = random.Random(7)
def reader():
    h = hashlib.sha256(); n = 0
    while True:
        b = ch.recv(1 << 20)
        if not b: break
        h.update(b); n += len(b)
    sys.stderr.write('IN %d %s\n' % (n, h.hexdigest())); sys.stderr.flush()
t = threading.Thread(target=reader); t.start()
h = hashlib.sha256(); sent = 0; i = 0
while sent < total:
    k = min(total - sent, rnd.choice([1, 2, 7, 100, 4096, 65535, 65536, 65537, 200000]))
    data = bytes(((sent + j) * 31) & 255 for j in range(min(k, 64))) * (k // 64 + 1)
    data = data[:k]
    if fdmode and i % 5 == 0:
        nf = rnd.choice([1, 8, 126])
        ps = [os.pipe() for _ in range(nf)]
        fds = [p[0] for p in ps] + [p[1] for p in ps]
        ch.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', fds[:253]))])
        for f in fds: os.close(f)
    else:
        ch.sendall(data)
    h.update(data); sent += len(data); i += 1
ch.shutdown(socket.SHUT_WR)
sys.stderr.write('OUT %d %s\n' % (sent, h.hexdigest())); sys.stderr.flush()
t.join()
`;

async function one(fdmode) {
  const total = MIB * 1048576;
  const ex = py(CODE, [total, fdmode ? 'fds' : 'plain']);
  const hin = crypto.createHash('sha256'); let nin = 0;
  ex.protocol.on('data', (d) => { hin.update(d); nin += d.length; if (Math.random() < 0.01) { ex.protocol.pause(); setTimeout(() => ex.protocol.resume(), 5); } });
  // host -> program: random chunks
  const hout = crypto.createHash('sha256'); let nout = 0;
  const want = total / 4;
  while (nout < want) {
    const k = Math.min(want - nout, [1, 3, 4096, 65536, 300000][Math.floor(Math.random() * 5)]);
    const b = crypto.randomBytes(k);
    hout.update(b); nout += k;
    if (!ex.protocol.write(b)) await new Promise((r) => ex.protocol.once('drain', r));
  }
  ex.protocol.end();
  const ok = await within(ex.wait(), 60000);
  if (!ok) { await ex.stop(); return { fdmode, settled: false }; }
  const r = await ex.wait();
  const m = /OUT (\d+) (\w+)/.exec(ex.text) || []; const mi = /IN (\d+) (\w+)/.exec(ex.text) || [];
  const b = r.receipt.bytes;
  const res = {
    fdmode, rc: r.returncode,
    toHost: { sent: Number(m[1]), got: nin, same: m[2] === hin.digest('hex'), receiptOut: b.protocolOut },
    toProg: { sent: nout, got: Number(mi[1]), same: mi[2] === hout.digest('hex'), receiptIn: b.protocolIn, discarded: b.protocolInDiscarded },
  };
  res.bad = !(res.toHost.same && res.toHost.got === res.toHost.sent && b.protocolOut === nin && res.toProg.same && res.toProg.got === nout && b.protocolIn === nout);
  return res;
}

(async () => {
  const s0 = snap(); const mon = delayMonitor();
  const control = await one(false);
  const probe = await one(true);
  const probe2 = await one(true);
  const d = mon.stop();
  console.log(JSON.stringify({ control, probe, probe2, delay: d, s0, s1: snap() }));
  if (control.bad) console.log('control failed: cannot tell');
  else if (probe.bad || probe2.bad || !probe.toHost) console.log('FINDING: bytes or receipt counts differ with descriptor-carrying messages');
  else console.log('held');
  process.exit(0);
})();
