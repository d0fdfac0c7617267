'use strict';
// R15 probe (benign side): a program that passes its OWN channels back to the host must keep
// them working (docs/security.md: sockets whose peer the provider created — fd 3, the fd-4
// channel, fd-4 streams, engine connections — are left as they are). Steps, each checked with
// a real request or an echo through the stream: fd 4 sent over fd 4 (with a MECQ request and
// as rights alone), fd 4 sent over an fd-4 stream, a stream sent over itself and over fd 4,
// fd 3 sent over fd 4 (then fd 3 still carries bytes to the provider), an engine-socket
// connection sent over itself. Control: the same program without the passing.
// usage: node own-channel.js
const h = require('./h');
const CODE = h.PY + String.raw`
mode, port = sys.argv[1], int(sys.argv[2])
c4 = socket.socket(fileno=4)
host = b'127.0.0.1'
req = struct.pack('>IBBHH', 0x4d454351, 1, 1, port, len(host)) + host
ok = {}
def echo(S, tag):
    S.settimeout(3); d = tag.encode(); S.sendall(d); got = b''
    while len(got) < len(d): got += S.recv(100)
    return got == d
def reply(): c4.settimeout(3); return c4.recv(64).hex()
def step(name, fn):
    try: ok[name] = fn()
    except Exception as e: ok[name] = 'EXC ' + type(e).__name__ + ' ' + str(e)
P = mode == 'pass'
def s1():
    global S1; msg, fds = mecq(c4, '127.0.0.1', port); S1 = socket.socket(fileno=fds[0]); return echo(S1, 'one')
step('stream1', s1)
def s2():
    if P: send(c4, req, [4]); reply()
    global S2; msg, fds = mecq(c4, '127.0.0.1', port); S2 = socket.socket(fileno=fds[0]); return echo(S2, 'two')
step('fd4-over-fd4+request', s2)
def s3():
    if P: c4.sendmsg([], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', [4]))]); reply()
    msg, fds = mecq(c4, '127.0.0.1', port); S = socket.socket(fileno=fds[0]); return echo(S, 'three')
step('fd4-over-fd4-rights-only', s3)
def s4():
    if P: send(S2, b'', [4]) if False else send(S2, b'Q', [4]); S2.settimeout(3); S2.recv(1)
    msg, fds = mecq(c4, '127.0.0.1', port); S = socket.socket(fileno=fds[0]); return echo(S, 'four') and echo(S2, 'four-b')
step('fd4-over-stream', s4)
def s5():
    if P: send(S2, b'Y', [S2.fileno()]); S2.settimeout(3); S2.recv(1)
    return echo(S2, 'five')
step('stream-over-itself', s5)
def s6():
    if P: send(c4, req, [S1.fileno()]); reply()
    return echo(S1, 'six')
step('stream-over-fd4', s6)
def s7():
    if P: send(c4, req, [3]); reply()
    os.write(3, b'hello-protocol'); return True
step('fd3-over-fd4', s7)
def s8():
    E = socket.socket(socket.AF_UNIX); E.connect('/.cordon/egress/engine.sock')
    E.sendall(b'CONNECT 127.0.0.1:%d HTTP/1.1\r\nHost: x\r\n\r\n' % port); E.settimeout(3)
    head = b''
    while b'\r\n\r\n' not in head: head += E.recv(1)
    if P: send(E, b'Z', [E.fileno()]); E.recv(1)
    return b' 200 ' in head and echo(E, 'eight')
step('engine-conn-over-itself', s8)
def s9():
    msg, fds = mecq(c4, '127.0.0.1', port); S = socket.socket(fileno=fds[0]); return echo(S, 'nine')
step('fd4-still-works-at-end', s9)
log('RESULT', json_ok := __import__('json').dumps(ok))
`;
(async () => {
  const srv = await h.server('echo');
  const policy = h.policyFor(srv.port);
  const out = {};
  for (const mode of ['control', 'pass']) {
    const ex = cordonRun(mode);
    async function dummy() {}
    await dummy();
    function cordonRun(m) { const e = h.cordon.spawnIsolated(['/usr/bin/python3', '-c', CODE, m, String(srv.port)], { policy, ...h.relay }); e.text = ''; e.proto = ''; e.stderr.on('data', (d) => { e.text += d; }); e.protocol.on('data', (d) => { e.proto += d; }); return e; }
    const ok = await h.within(ex.wait(), 30000);
    if (!ok) await h.within(ex.stop(), 5000);
    const r = ok ? await ex.wait() : null;
    const m = ex.text.match(/RESULT (.*)/);
    out[mode] = { settled: ok, returncode: r && r.returncode, steps: m ? JSON.parse(m[1]) : ex.text.slice(-500), protocol: ex.proto, streams: r && r.networkReceipts.filter((x) => x.result === 'allowed').length };
    console.log(mode, JSON.stringify(out[mode]));
  }
  srv.shut();
  const p = out.pass;
  const broken = typeof p.steps === 'string' ? ['(no result)'] : Object.entries(p.steps).filter(([, v]) => v !== true).map(([k, v]) => `${k}: ${v}`);
  if (!p.settled) broken.push('run did not settle');
  if (p.protocol !== 'hello-protocol') broken.push(`fd 3 carried ${JSON.stringify(p.protocol)}`);
  console.log(broken.length ? `FINDING: passing its own channels back broke: ${broken.join('; ')}` : 'held (every own channel passed back keeps working; control and pass equal)');
  process.exit(0);
})();
