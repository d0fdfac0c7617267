'use strict';
// R16n probe: what fd 4 (the seqpacket channel end), fd 3 and an fd-4 stream
// end (a MECP reply's descriptor; all three made in the provider's network
// namespace) can reach there besides the engine. Host side, in the
// provider's namespace: an abstract datagram socket and an abstract
// seqpacket listener. Tried from the sandbox: sendto/sendmsg with msg_name,
// connect, bind, listen, MSG_OOB, fd 4 passed over itself, a dup'd copy.
// Control: the same sendto/connect from a socket the sandbox makes (its own
// namespace: nothing found).
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const { py, cordon, sleep, within } = require('./h');
const UP = process.env.R16_UP || '1.2.3.4';
const policy = { ...cordon.readOnly(), network: { mode: 'mediated', allow: [`${UP}:443`] } };
const relay = process.env.R14_RELAY ? { networkRelayPath: process.env.R14_RELAY } : {};
const TAG = `cordon-r16n-${process.pid}`;
const HOST = String.raw`
import socket, sys, select
d = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); d.bind(b'\0' + sys.argv[1].encode() + b'-d')
l = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); l.bind(b'\0' + sys.argv[1].encode() + b'-l'); l.listen(8)
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.bind(b'\0' + sys.argv[1].encode() + b'-s'); s.listen(8)
print('bound', flush=True)
import time; end = time.time() + 25
while time.time() < end:
    r, _, _ = select.select([d, l, s], [], [], 0.5)
    for x in r:
        if x is d: print('got-dgram', d.recv(256), flush=True)
        else: c, _ = x.accept(); print('got-conn', x.type, flush=True)
`;
const CODE = String.raw`
import socket, sys, os, struct, array
tag, up = sys.argv[1].encode(), sys.argv[2].encode()
D, L, S = b'\0' + tag + b'-d', b'\0' + tag + b'-l', b'\0' + tag + b'-s'
res = {}
def t(name, f):
    try: r = f(); res[name] = 'ok' if r is None else repr(r)
    except OSError as e: res[name] = 'E' + (__import__('errno').errorcode.get(e.errno, str(e.errno)))
own = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
t('own.sendto', lambda: own.sendto(b'own', D))
t('own.connect-l', lambda: socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET).connect(L))
c4 = socket.socket(fileno=4)
d4 = socket.socket(fileno=os.dup(4))
# a stream end from the engine (MECP OK for an allowed upstream)
req = struct.pack('>IBBHH', 0x4d454351, 1, 1, 443, len(up)) + up
c4.send(req)
msg, anc, fl, _ = c4.recvmsg(64, socket.CMSG_SPACE(4))
fds = [array.array('i', d[:4])[0] for (lv, ty, d) in anc if ty == socket.SCM_RIGHTS]
res['mecp'] = msg.hex()
ends = [('fd4', c4), ('dup4', d4), ('fd3', socket.socket(fileno=os.dup(3)))]
if fds: ends.append(('stream', socket.socket(fileno=fds[0])))
for n, s in ends:
    t(n + '.sendto-d', lambda: s.sendto(b'from ' + n.encode(), socket.MSG_NOSIGNAL, D))
    t(n + '.sendmsg-d', lambda: s.sendmsg([b'from ' + n.encode()], [], socket.MSG_NOSIGNAL, D))
    t(n + '.connect-d', lambda: s.connect(D))
    t(n + '.connect-l', lambda: s.connect(L))
    t(n + '.connect-s', lambda: s.connect(S))
    t(n + '.bind', lambda: s.bind(b'\0' + tag + b'-squat-' + n.encode()))
    t(n + '.listen', lambda: s.listen(1))
    t(n + '.oob', lambda: s.send(b'o', socket.MSG_OOB | socket.MSG_NOSIGNAL))
# fd 4 passed over itself, then used again
t('fd4-over-fd4', lambda: c4.sendmsg([b'self'], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', [4]))], socket.MSG_NOSIGNAL))
t('fd4-over-fd3', lambda: socket.socket(fileno=os.dup(3)).sendmsg([b''], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', [4]))], socket.MSG_NOSIGNAL))
t('fd4.sendto-d-after', lambda: c4.sendto(b'after', socket.MSG_NOSIGNAL, D))
print(repr(res), file=sys.stderr, flush=True)
import time; time.sleep(1)
`;
(async () => {
  const host = spawn('python3', ['-c', HOST, TAG], { stdio: ['ignore', 'pipe', 'inherit'] });
  let got = ''; host.stdout.on('data', (d) => { got += d; });
  while (!/bound/.test(got)) await sleep(20);
  const ex = py(CODE, [TAG, UP], { policy, ...relay });
  ex.protocol.resume();
  let squat = [];
  const t0 = Date.now();
  const poll = setInterval(() => { const t = fs.readFileSync('/proc/net/unix', 'utf8'); squat = [...new Set([...squat, ...(t.match(new RegExp(`@${TAG}-squat-\\w+`, 'g')) || [])])]; }, 50);
  const ok = await within(ex.wait(), 20000);
  clearInterval(poll);
  await sleep(500); host.kill();
  const received = got.trim().split('\n').slice(1);
  console.log(JSON.stringify({ settled: ok, sandbox: ex.text.trim(), hostReceived: received, squat }));
  const fromChannel = received.filter((l) => !/b'own'/.test(l));
  console.log(fromChannel.length || squat.length ? `FINDING: from the sandbox's provider-namespace sockets the host ${fromChannel.length ? `got ${fromChannel.join(', ')}` : ''}${squat.length ? ` names squatted: ${squat.join(', ')}` : ''} (control own socket: ${received.some((l) => /b'own'/.test(l)) ? 'reached' : 'not reached'})` : 'held');
  process.exit(0);
})();
