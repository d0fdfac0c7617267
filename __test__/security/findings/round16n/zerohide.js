'use strict';
// R16n-1 probe: the end-of-run drain of the fd-4 channel (a seqpacket socket
// since 5cffac46) gives up after BEFORE_SHUTDOWN (4096) receives plus
// ZERO_RECORDS (4096) consecutive zero-length reads
// (crates/passed-fds/src/drain.rs:27,35,86). Its comment bounds the queue
// by the sender's send buffer "(at most 2 x wmem_max, ~425 KiB here)", but
// wmem_max is a host setting (4 MiB on this host: fd 4's SO_SNDBUF raised to
// 8 MiB queues 10 923 zero-length records). The program spends the stream
// quota (the serve task ends and drains while the program still runs),
// queues SLOW groups of [a record carrying /dev/null + 16 empty records]
// (each descriptor costs the drain a closer-thread start, so the program
// stays ahead of it), then PAD empty records (sendmmsg), then a record
// carrying P (a never-reading TCP peer) and one carrying X (a TCP socket
// with unsent data and SO_LINGER {1, LINGER}). The drain stops before them;
// the closer thread closes the engine end unemptied (settle.rs:16-24 leaves
// the host's own channel ends alone), and the kernel's purge of its queue
// closes X on that thread: tcp_close waits the linger time (up to 2^31-1 s).
// Control: PAD 3000 (< 4096), so the drain reaches P and X and settles them.
// Env: R16_LINGER (s, default 20), R16_PAD, R16_SLOW.
const { py, cordon, sleep, within, snap, stuck, closers, endIfFd4Refuses } = require('./h');
const policy = { ...cordon.readOnly(), network: { mode: 'mediated', allow: ['example.com:443'] } };
const relay = process.env.R14_RELAY ? { networkRelayPath: process.env.R14_RELAY } : {};
const SLOW = Number(process.env.R16_SLOW || 300);
const LINGER = Number(process.env.R16_LINGER || 20);
const CODE = String.raw`
import socket, struct, sys, array, os, time, ctypes
pad, linger, slow = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
c4 = socket.socket(fileno=4)
c4.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 64 << 20)
sb = c4.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF)
def send(s, data, fds): s.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', fds))] if fds else [])
L = socket.socket(); L.bind(('127.0.0.1', 0)); L.listen(1)
X = socket.socket(); X.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
X.connect(L.getsockname()); P, _ = L.accept(); L.close()
P.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
X.setblocking(False)
try:
    while True: X.send(b'x' * 65536)
except BlockingIOError: pass
X.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, linger))
# The stream quota goes first (the serve task ends and the drain starts while
# this program still runs); then SLOW records each carrying a /dev/null
# descriptor (each costs the drain a closer-thread start, so this program
# stays ahead of it), then GAP zero-length records, then P and X.
dn = os.open('/dev/null', os.O_RDONLY)
libc = ctypes.CDLL(None, use_errno=True); buf = ctypes.create_string_buffer(64 * 1024)
def zeros(k):
    n = 0
    while n < k:
        r = libc.sendmmsg(4, buf, min(1024, k - n), 0)
        if r < 0: raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
        n += r
    return n
sent = 0; err = None
try:
    sent += zeros(300)
    for i in range(slow):
        while True:  # ETOOMANYREFS: RLIMIT_NOFILE bounds descriptors in flight
            try: send(c4, b'', [dn]); break
            except OSError as e:
                if e.errno != 109: raise
        sent += 1 + zeros(16)
    sent += zeros(pad)
    send(c4, b'p', [P.fileno()]); sent += 1
    send(c4, b'x', [X.fileno()]); sent += 1
except OSError as e: err = e
X.close(); P.close()
print('nofile', __import__('resource').getrlimit(__import__('resource').RLIMIT_NOFILE)[0], 'sndbuf', sb, 'sent', sent, 'err', err, file=sys.stderr)
time.sleep(1)
`;
(async () => {
  await endIfFd4Refuses();
  const res = [];
  for (const [mode, pad] of [['control', 3000], ['hide', Number(process.env.R16_PAD || 4400)]]) {
    const was = stuck().length;
    const t0 = Date.now();
    const ex = py(CODE, [pad, LINGER, SLOW], { policy, ...relay });
    ex.protocol.resume();
    const ok = await within(ex.wait(), 30000);
    if (!ok) await within(ex.stop(), 5000);
    let added = 0;
    for (let i = 0; i < 10; i++) { await sleep(500); added = stuck().length - was; if (added > 0) break; }
    const r = { mode, pad, settled: ok, closers: closers(), ms: Date.now() - t0, text: ex.text.trim().split('\n').slice(-2).join(' | '), added, ...snap() };
    res.push(r); console.log(JSON.stringify(r));
  }
  const t0 = Date.now(); while (stuck().length && Date.now() - t0 < (LINGER + 10) * 1000) await sleep(1000);
  const [c, b] = res;
  console.log(b.added > c.added ? `FINDING: a TCP socket queued behind ${b.pad} zero-length records on fd 4 escaped the end-of-run drain and was closed by the closer thread's purge: +${b.added} closer thread(s) waiting in tcp_close (control, ${c.pad} records: +${c.added}); gone ${Math.round((Date.now() - t0) / 1000)} s later (linger ${LINGER} s)` : 'held');
  process.exit(0);
})();
