'use strict';
// R15 probe: shapes of descriptors sent over the fd-4 channel (with a MECQ request, or alone)
// and over the engine socket, each built around a loopback TCP socket X with unsent data and
// SO_LINGER {1, 3600} whose peer P never reads (R4-4/R14-2's payload), placed where the host
// must dig for it: a Unix listener's backlog (the pending connection's queue), a TCP
// listener's accept queue (children inherit the listener's linger), a socket cycle, a chain
// of DEPTH Unix sockets, a zero-length datagram carrying only rights, rights on the CONNECT
// bytes of a direct engine-socket connection and on a tunnel's bytes there.
// docs/security.md: "no close waits on a lingering socket queued inside it", "as deep as the
// sockets nest". Per shape: provider threads stuck in tcp_close/sk_stream_wait_close while
// the program sleeps (it keeps nothing of X/P), whether stop() settles, a next run's time,
// descriptors after. Control: the same program sending nothing.
// Also the same payload made of an MPTCP socket (IPPROTO_MPTCP, 262) or an IPv6 TCP socket
// over ::1: mptcp-direct (P kept by the program), mptcp-pair, mptcp-nested, mptcp-stream, tcp6-….
// usage: node fd4-shapes.js [shapes…]
const h = require('./h');
const SHAPES = process.argv.slice(2).length ? process.argv.slice(2) : ['control', 'unix-backlog', 'tcp-backlog', 'cycle', 'chain', 'rights-only', 'engine-connect', 'engine-tunnel', 'stream-backlog'];
const CODE = h.PY + String.raw`
shape, port, depth = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
c4 = socket.socket(fileno=4)
host = b'127.0.0.1'
req = struct.pack('>IBBHH', 0x4d454351, 1, 1, port, len(host)) + host
def wrap(fds):
    a, b = socket.socketpair(); send(a, b'z', fds); a.close(); return b
if shape == 'control':
    pass
elif shape == 'unix-backlog':
    X, P = linger_pair()
    L = socket.socket(socket.AF_UNIX); L.bind(b'\0r15-' + str(os.getpid()).encode()); L.listen(8)
    c = socket.socket(socket.AF_UNIX); c.connect(L.getsockname()); send(c, b'z', [X.fileno(), P.fileno()]); c.close()
    X.close(); P.close()
    send(c4, req, [L.fileno()]); L.close()
elif shape == 'stream-backlog':
    # the Unix listener is passed over an fd-4 STREAM instead of the channel
    msg, fds = mecq(c4, '127.0.0.1', port); S = socket.socket(fileno=fds[0])
    X, P = linger_pair()
    L = socket.socket(socket.AF_UNIX); L.bind(b'\0r15s-' + str(os.getpid()).encode()); L.listen(8)
    c = socket.socket(socket.AF_UNIX); c.connect(L.getsockname()); send(c, b'z', [X.fileno(), P.fileno()]); c.close()
    X.close(); P.close()
    send(S, b'a', [L.fileno()]); L.close()
elif shape == 'tcp-backlog':
    L = socket.socket(); L.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    L.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    L.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, 3600))
    L.bind(('127.0.0.1', 0)); L.listen(8)
    cs = []
    for i in range(4):
        c = socket.socket(); c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096); c.connect(L.getsockname()); cs.append(c)
    # the children (unaccepted) cannot have unsent data, so also pass the clients, lingering, never-read
    for c in cs:
        c.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096); c.setblocking(False)
        try:
            while True: c.send(b'x' * 65536)
        except BlockingIOError: pass
        c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, 3600))
    send(c4, req, [L.fileno()] + [c.fileno() for c in cs]); L.close()
    for c in cs: c.close()
elif shape == 'cycle':
    X, P = linger_pair()
    a, b = socket.socketpair(); c, d = socket.socketpair()
    send(a, b'z', [c.fileno(), d.fileno(), X.fileno(), P.fileno()]); send(c, b'z', [a.fileno(), b.fileno()])
    X.close(); P.close(); a.close(); c.close(); d.close()
    send(c4, req, [b.fileno()]); b.close()
elif shape == 'chain':
    X, P = linger_pair()
    u = wrap([X.fileno(), P.fileno()]); X.close(); P.close()
    for i in range(depth):
        n = wrap([u.fileno()]); u.close(); u = n
    send(c4, req, [u.fileno()]); u.close()
elif shape.startswith(('mptcp-', 'tcp6-')):
    # the R4-4/R14-2 payload made of an MPTCP socket or an IPv6 TCP socket instead of IPv4 TCP
    fam, proto, addr = (socket.AF_INET, 262, '127.0.0.1') if shape.startswith('mptcp') else (socket.AF_INET6, 0, '::1')
    X, P = linger_pair(fam=fam, proto=proto, addr=addr)
    if shape.endswith('-direct'):
        send(c4, req, [X.fileno()]); X.close(); globals()['keepP'] = P
    elif shape.endswith('-pair'):
        send(c4, req, [X.fileno(), P.fileno()]); X.close(); P.close()
    elif shape.endswith('-stream'):
        msg, fds = mecq(c4, '127.0.0.1', port); S = socket.socket(fileno=fds[0])
        u = wrap([X.fileno(), P.fileno()]); X.close(); P.close(); send(S, b'a', [u.fileno()]); u.close()
    else:
        u = wrap([X.fileno(), P.fileno()]); X.close(); P.close(); send(c4, req, [u.fileno()]); u.close()
elif shape == 'rights-only':
    X, P = linger_pair()
    u = wrap([X.fileno(), P.fileno()]); X.close(); P.close()
    c4.sendmsg([], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', [u.fileno()]))]); u.close()
elif shape in ('engine-connect', 'engine-tunnel'):
    E = socket.socket(socket.AF_UNIX); E.connect('/.cordon/egress/engine.sock')
    X, P = linger_pair()
    u = wrap([X.fileno(), P.fileno()]); X.close(); P.close()
    line = b'CONNECT 127.0.0.1:%d HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n' % (port, port)
    if shape == 'engine-connect':
        send(E, line, [u.fileno()]); u.close()
        E.settimeout(3); log('reply', E.recv(200))
    else:
        E.send(line); E.settimeout(3); log('reply', E.recv(200))
        send(E, b'tunnelled', [u.fileno()]); u.close()
    globals()['keepE'] = E
try:
    c4.settimeout(2); log('fd4 reply', c4.recv(64).hex())
except Exception as e: log('fd4 reply', type(e).__name__)
log('SENT', shape)
time.sleep(15)
`;
(async () => {
  const srv = await h.server('sink');
  const policy = h.policyFor(srv.port);
  const depth = Number(process.env.R15_DEPTH || 100);
  const base = h.snap();
  const res = [];
  for (const shape of SHAPES) {
    const ex = h.py(CODE, [shape, srv.port, depth], { policy });
    for (let i = 0; i < 100 && !/SENT|Traceback/.test(ex.text); i++) await h.sleep(100);
    await h.sleep(1500);
    const during = { stuck: h.stuck(), snap: h.snap(), nextMs: await h.next(0) };
    const t0 = Date.now(); const ok = await h.within(ex.stop(), 15000); const stopMs = Date.now() - t0;
    await h.sleep(500);
    const r = { shape, during, stopSettled: ok, stopMs, after: h.snap(), stuckAfter: h.stuck(), text: ex.text.replace(/\n/g, ' | ').slice(-300) };
    res.push(r); console.log(JSON.stringify(r));
  }
  srv.shut();
  const bad = res.filter((r) => r.shape !== 'control' && (r.during.stuck.length || r.stuckAfter.length || !r.stopSettled || r.during.nextMs === 'UNSETTLED' || r.after.fds > base.fds + 5 || /Traceback/.test(r.text)));
  console.log(bad.length ? `FINDING: ${bad.map((r) => `${r.shape}: stuck [${r.during.stuck}] after [${r.stuckAfter}], stop settled ${r.stopSettled} (${r.stopMs} ms), next ${r.during.nextMs} ms, fds after ${r.after.fds} (base ${base.fds}) ${/Traceback/.test(r.text) ? r.text : ''}`).join('; ')}` : `held (${res.map((r) => `${r.shape}: next ${r.during.nextMs} ms, stop ${r.stopMs} ms`).join('; ')})`);
  process.exit(0);
})();
