'use strict';
// Reaching / claiming the provider's abstract Unix namespace from the sandbox. fd 4 and the handed-out streams are
// made in the provider's network namespace: try connect / sendto / bind on them. The host binds abstract names
// (datagram, stream, seqpacket) and watches whether anything arrives, and whether a name the program claims shows up
// in the provider's namespace (/proc/net/unix as seen by the provider, and a host bind() of the same name failing).
// Control: a socket the program creates itself (sandbox netns) binding the same kind of name.
const fs = require('fs');
const { execFileSync } = require('child_process');
const { cordon, tcpServer, policyFor, collect, PY_PRELUDE } = require('./common');
const tag = `r16b-${process.pid}`;
const py = (port) => PY_PRELUDE + `
tag = ${JSON.stringify(tag)}
def t(name, f):
    try: print(name, 'OK', f())
    except Exception as e: print(name, 'ERR', type(e).__name__, getattr(e, 'errno', ''))
t('fd4.connect.dgram', lambda: fd4.connect('\\0' + tag + '-dgram'))
t('fd4.sendto.dgram', lambda: fd4.sendto(b'hi-from-fd4', '\\0' + tag + '-dgram'))
t('fd4.sendto.reply', lambda: reply())
t('fd4.connect.seqpacket', lambda: fd4.connect('\\0' + tag + '-seq'))
t('fd4.connect.absent', lambda: fd4.connect('\\0' + tag + '-absent'))
t('fd4.bind', lambda: fd4.bind('\\0' + tag + '-fd4bind'))
t('fd4.getsockname', lambda: fd4.getsockname())
req(${port}); msg, fds = reply()
s = socket.socket(fileno=fds[0])
t('stream.getsockname', lambda: s.getsockname())
t('stream.connect', lambda: s.connect('\\0' + tag + '-stream'))
t('stream.connect.absent', lambda: s.connect('\\0' + tag + '-absent'))
t('stream.sendto', lambda: s.sendto(b'x', '\\0' + tag + '-dgram'))
t('stream.bind.squat', lambda: s.bind('\\0' + tag + '-squat'))
t('stream.bind.probe', lambda: (req(${port}), socket.socket(fileno=reply()[1][0]).bind('\\0' + tag + '-hostowned')))
own = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
t('own.bind.control', lambda: own.bind('\\0' + tag + '-control'))
t('own.sendto.control', lambda: own.sendto(b'x', '\\0' + tag + '-dgram'))
print('READY', flush=True)
time.sleep(1.5)
`;
(async () => {
  const srv = await tcpServer();
  // host-side abstract services, created in the provider's netns by python3 on the host
  const host = require('child_process').spawn('python3', ['-c', `
import socket, select, sys, time
tag = ${JSON.stringify(tag)}
d = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); d.bind('\\0' + tag + '-dgram')
st = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); st.bind('\\0' + tag + '-stream'); st.listen()
sq = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); sq.bind('\\0' + tag + '-seq'); sq.listen()
own = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); own.bind('\\0' + tag + '-hostowned')
print('up', flush=True)
end = time.time() + 8
while time.time() < end:
    r, _, _ = select.select([d, st, sq], [], [], 0.2)
    for x in r:
        if x is d: print('HOST GOT DGRAM', d.recv(100), flush=True)
        else: print('HOST GOT CONNECT', flush=True); x.accept()
`]);
  let hostOut = ''; host.stdout.on('data', (d) => (hostOut += d)); host.stderr.on('data', (d) => (hostOut += d));
  await new Promise((r) => host.stdout.once('data', r));
  const run = cordon.spawnIsolated(['/usr/bin/python3', '-c', py(srv.port)], { policy: policyFor(srv.port), deadlineMs: 15000 });
  let out = ''; run.stderr.on('data', (d) => { out += d; }); run.protocol.resume();
  let seenInHost = null, hostBind = null;
  await Promise.race([new Promise((r) => { const iv = setInterval(() => { if (out.includes('READY')) { clearInterval(iv); r(); } }, 20); }), run.wait()]);
  const unix = fs.readFileSync('/proc/net/unix', 'utf8');
  seenInHost = { squat: unix.includes(`@${tag}-squat`), fd4bind: unix.includes(`@${tag}-fd4bind`), control: unix.includes(`@${tag}-control`) };
  try { execFileSync('python3', ['-c', `import socket; socket.socket(socket.AF_UNIX).bind('\\0${tag}-squat')`], { stdio: 'pipe' }); hostBind = 'host bind of the squatted name succeeded'; }
  catch (e) { hostBind = 'host bind failed: ' + String(e.stderr).trim().split('\n').pop(); }
  const r = await run.wait(); host.kill(); srv.close();
  console.log(out.trim()); console.log('host:', hostOut.trim().replace(/\n/g, ' | '));
  console.log('provider /proc/net/unix:', JSON.stringify(seenInHost), '|', hostBind);
  const bad = [];
  const oracle = (present, absent) => { const m = (k) => (out.match(new RegExp('^' + k.replace('.', '\\.') + ' (.*)$', 'm')) || [])[1]; return m(present) && m(absent) && m(present) !== m(absent) ? `${present}: ${m(present)} vs ${m(absent)}` : null; };
  for (const o of [oracle('fd4.connect.seqpacket', 'fd4.connect.absent'), oracle('stream.connect', 'stream.connect.absent')]) if (o) bad.push('connect() tells an existing abstract name of the provider\'s namespace from an absent one (' + o + ')');
  if (/HOST GOT/.test(hostOut)) bad.push('a host abstract socket received data/connection');
  if (seenInHost.squat || seenInHost.fd4bind) bad.push('the program bound a name in the provider\'s abstract namespace');
  if (/stream.bind.probe ERR OSError 98/.test(out)) bad.push('the program can probe which abstract names the host uses (EADDRINUSE)');
  console.log(bad.length ? 'FINDING: ' + bad.join('; ') : 'held', '(control own socket in host ns:', seenInHost.control, ')');
})();
