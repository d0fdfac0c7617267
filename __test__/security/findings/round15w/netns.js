'use strict';
// R15w-6 probe: the program's fd 4 (a socketpair end the provider made:
// datagram when this round ran, seqpacket since) lives in the provider's network namespace, not the sandbox's: the
// program can bind it to an abstract name there (squatting host names) and
// connect it to a host abstract datagram socket and send (or sendto it) (the sandbox's own
// network namespace hides both). Host side: a datagram socket bound to an
// abstract name in this (the provider's) namespace, by a python3 child.
// fd 3 (the protocol socketpair end, also the provider's) is bound too.
// Control: the same from a socket the program makes itself (its own
// namespace: not found).
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const { py, cordon, sleep, within } = require('./h');
const policy = { ...cordon.readOnly(), network: { mode: 'mediated', allow: ['example.com:443'] } };
const relay = process.env.R14_RELAY ? { networkRelayPath: process.env.R14_RELAY } : {};
const TAG = `cordon-r15w-${process.pid}`;
const HOST = String.raw`
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind(b'\0' + sys.argv[1].encode() + b'-host')
print('bound', flush=True); s.settimeout(20)
while True:
    try: print('got', s.recv(256), flush=True)
    except Exception: break
`;
const CODE = String.raw`
import socket, sys
tag = sys.argv[1]
own = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
try: own.sendto(b'from a socket of the sandbox', b'\0' + tag.encode() + b'-host'); print('own: sent', file=sys.stderr)
except OSError as e: print('own:', e, file=sys.stderr)
S4 = socket.socket(fileno=4)
try: S4.bind(b'\0' + tag.encode() + b'-squat'); print('fd4: bound', file=sys.stderr)
except OSError as e: print('fd4 bind:', e, file=sys.stderr)
try: S4.connect(b'\0' + tag.encode() + b'-host'); S4.send(b'from fd 4 of the sandbox'); print('fd4: sent', file=sys.stderr)
except OSError as e: print('fd4 send:', e, file=sys.stderr)
try: S4.sendto(b'from fd 4 of the sandbox (sendto)', b'\0' + tag.encode() + b'-host'); print('fd4: sendto returned', file=sys.stderr)
except OSError as e: print('fd4 sendto:', e, file=sys.stderr)
import os
s3 = socket.socket(fileno=os.dup(3))
try: s3.bind(b'\0' + tag.encode() + b'-fd3'); print('fd3: bound', file=sys.stderr)
except OSError as e: print('fd3 bind:', e, file=sys.stderr)
import time; time.sleep(1)
`;
(async () => {
  const host = spawn('python3', ['-c', HOST, TAG], { stdio: ['ignore', 'pipe', 'inherit'] });
  let got = ''; host.stdout.on('data', (d) => { got += d; });
  while (!/bound/.test(got)) await sleep(20);
  const ex = py(CODE, [TAG], { policy, ...relay });
  ex.protocol.resume();
  let squat = false; let fd3 = false;
  const t0 = Date.now();
  while (Date.now() - t0 < 3000 && !(squat && fd3)) { const t = fs.readFileSync('/proc/net/unix', 'utf8'); squat = t.includes(`@${TAG}-squat`); fd3 = t.includes(`@${TAG}-fd3`); await sleep(50); }
  await within(ex.wait(), 10000);
  // fd 3 in a run without any network (policy readOnly): bound there too?
  const plain = py(String.raw`
import socket, os, sys, time
s3 = socket.socket(fileno=os.dup(3)); s3.bind(b'\0' + sys.argv[1].encode() + b'-plainfd3'); time.sleep(1)`, [TAG]);
  plain.protocol.resume();
  let plainFd3 = false;
  const t1 = Date.now();
  while (Date.now() - t1 < 3000 && !plainFd3) { plainFd3 = fs.readFileSync('/proc/net/unix', 'utf8').includes(`@${TAG}-plainfd3`); await sleep(50); }
  // a host service binding that name now (a stream socket, as fd 3 is)
  const svc = require('node:child_process').spawnSync('python3', ['-c', `import socket\ns = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\ntry: s.bind(b'\\0${TAG}-plainfd3'); print('bound')\nexcept OSError as e: print(e)`], { encoding: 'utf8' }).stdout.trim();
  await within(plain.wait(), 10000);
  await sleep(300); host.kill();
  console.log(JSON.stringify({ sandbox: ex.text.trim().split('\n'), hostReceived: got.trim().split('\n').slice(1), squatVisibleInProviderNamespace: squat, fd3SquatVisible: fd3, plainRunFd3SquatVisible: plainFd3, hostServiceBindingThatName: svc }));
  const bad = /from fd 4/.test(got) || squat;
  console.log(bad ? `FINDING: through fd 4 the sandbox ${/from fd 4/.test(got) ? 'sent a datagram to a host abstract socket' : ''}${squat ? (/from fd 4/.test(got) ? ' and ' : '') + 'bound an abstract name in the provider\'s network namespace' : ''}${fd3 ? ', and bound one through fd 3 too' : ''}${plainFd3 ? ` (fd 3 also in a run without network; a host service binding that name meanwhile: ${svc})` : ''} (control, its own socket: ${/from a socket/.test(got) ? 'delivered too' : 'not delivered'})` : 'held');
  process.exit(0);
})();
