'use strict';
// R15w-5 probe: the sandbox's own fd-4 end (a DATAGRAM socketpair end the
// provider made: SO_PEERCRED names the provider, so settle.rs never empties
// it) can be re-connected and bound by the program, so others queue into it.
// The engine holds a copy until the run ends (run_engine.rs finish:
// drain_and_close(fd4_peer)); drain() stops at once on a pending error
// (ECONNRESET, set on it through a peer's re-connect) and, after its
// shutdown, at a zero-length datagram; the rest of the queue — a lingering
// TCP socket and its never-reading peer — is purged on the closer thread,
// which leaves the "own" socket alone. Mode 'passed' also hands fd 4 back
// over itself first (left alone, as designed). Control: the same queue
// without the pending error.
const { py, cordon, sleep, within, stuck } = require('./h');
const policy = { ...cordon.readOnly(), network: { mode: 'mediated', allow: ['example.com:443'] } };
const relay = process.env.R14_RELAY ? { networkRelayPath: process.env.R14_RELAY } : {};
const LINGER = Number(process.env.R15_LINGER || 30);
const CODE = String.raw`
import socket, struct, sys, array, os
mode, linger = sys.argv[1], int(sys.argv[2])
S4 = socket.socket(fileno=4)
def send(s, data, fds): s.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', fds))] if fds else [])
if 'passed' in mode:
    send(S4, b'junk', [S4.fileno()])
    try: S4.settimeout(3); S4.recv(64)
    except Exception as e: print('reply', e, file=sys.stderr)
    S4.settimeout(None)
L = socket.socket(); L.bind(('127.0.0.1', 0)); L.listen(1)
X = socket.socket(); X.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
X.connect(L.getsockname()); P, _ = L.accept(); L.close()
P.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
X.setblocking(False)
try:
    while True: X.send(b'x' * 65536)
except BlockingIOError: pass
X.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, linger))
import tempfile
d = None
for base in ('/tmp', os.getcwd(), '/dev/shm'):
    try: d = tempfile.mkdtemp(dir=base); break
    except OSError: pass
print('dir', d, file=sys.stderr)
# fd 4 lives in the provider's network namespace (R15w-6): path names reach it
W = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); W.bind(d + '/w')
Z = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); Z.bind(d + '/z')
S4.bind(d + '/s4'); S4.connect(d + '/w'); W.connect(d + '/s4')   # fd 4 now talks to W only
W.send(b'')
send(W, b'x', [X.fileno(), P.fileno()]); X.close(); P.close()
if 'err' in mode:
    S4.send(b'y'); W.connect(d + '/z')     # W's queue purged: fd 4 gets sk_err = ECONNRESET
print('queued', file=sys.stderr)
`;
(async () => {
  const res = [];
  for (const mode of ['control', 'err', 'passed-err']) {
    const was = stuck().length;
    const ex = py(CODE, [mode, LINGER], { policy, ...relay });
    ex.protocol.resume();
    const ok = await within(ex.wait(), 15000);
    if (!ok) await within(ex.stop(), 5000);
    await sleep(1500);
    const r = { mode, settled: ok, text: ex.text.trim().split('\n').slice(-2).join(' | '), added: stuck().length - was };
    res.push(r); console.log(JSON.stringify(r));
  }
  const t0 = Date.now(); while (stuck().length && Date.now() - t0 < (LINGER + 15) * 1000) await sleep(1000);
  const bad = res.filter((r) => r.mode !== 'control' && r.added > res[0].added);
  console.log(bad.length ? `FINDING: after the run ended, the drain of the engine's copy of fd 4 left a lingering socket to the closer thread: ${bad.map((r) => `${r.mode} +${r.added}`).join(', ')} waiting (control +${res[0].added}); gone ${Math.round((Date.now() - t0) / 1000)} s later (the linger)` : 'held');
  process.exit(0);
})();
