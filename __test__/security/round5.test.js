'use strict';

// Round 5, mediated network (findings/round5-net/README.md, issue 19): the
// black-box round's breaks of the egress engine, each kept as a probe that
// tries the attack in real sandboxes — as a root provider and as a provider
// of uid 65534 — and sees it fail. The programs are Python (/usr/bin/python3
// inside the sandbox, as in network.test.js); every upstream is a Node
// server on 127.0.0.1 in this process.
//
// Each provider is a child process, awaited with a bound: the R5N-1 attack
// froze the provider's JS thread, so a probe that ran it in this process
// could only time out the harness instead of failing.

const { describe, test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');

const cordon = require('../..');
const h = require('./harness');

const skip = h.skipReason() ?? (fs.existsSync('/usr/bin/python3') ? null : 'no /usr/bin/python3 (scripts/host-deps.sh installs it)');
if (skip) console.log(`# SKIPPED round 5: ${skip}`);
if (skip && process.env.CI) throw new Error(`round 5 skipped under CI: ${skip}`);

const PROVIDERS = [['a root provider', false], ['a provider of uid 65534', true]];

/** Python helpers every program shares (from the round's driver). */
const PRELUDE = String.raw`
import socket, struct, os, time, glob
KEEP = []
CH = socket.socket(fileno=4)
def fill(s):
    s.setblocking(False); n = 0
    try:
        while True: n += s.send(b'x' * 65536)
    except OSError: pass
    s.setblocking(True)
    return n
def linger_pair():
    # A loopback TCP pair whose sender holds unsent bytes (the receiver never
    # reads) and lingers an hour on close.
    l = socket.socket(); l.bind(('127.0.0.1', 0)); l.listen(1)
    snd = socket.create_connection(l.getsockname()); rcv, _ = l.accept()
    fill(snd)
    snd.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, 3600))
    KEEP.append(l)
    return snd, rcv
def mecq(port, host):
    return struct.pack('>IBBHH', 0x4d454351, 1, 1, port, len(host)) + host
def px(port, host=b'127.0.0.1'):
    s = socket.create_connection(('127.0.0.1', 3128))
    s.sendall(b'CONNECT %s:%d HTTP/1.1\r\n\r\n' % (host, port))
    head = b''
    while b'\r\n\r\n' not in head:
        c = s.recv(1)
        if not c: raise Exception('closed ' + repr(head))
        head += c
    if b' 200 ' not in head.split(b'\r\n')[0]: raise Exception(repr(head))
    return s
def f4(port):
    CH.send(mecq(port, b'127.0.0.1'))
    msg, fds, _, _ = socket.recv_fds(CH, 8, 1)
    if msg[5] != 0 or not fds: raise Exception('fd4 status %d' % msg[5])
    return socket.socket(fileno=fds[0])
def hold():
    print('READY', len(KEEP), flush=True)
    while True: time.sleep(100)
`;

/** Runs `script` in a provider process (root or uid 65534); resolves with its JSON line, or an error once `timeoutMs` passed (the provider is then killed). */
function provider(script, { asNobody, timeoutMs }) {
  const { node, pkg } = asNobody ? require('./nobody-provider').nobodyProvider() : { node: process.execPath, pkg: path.join(__dirname, '..', '..') };
  const identity = asNobody ? { uid: h.NOBODY_UID, gid: h.NOBODY_UID, env: { PATH: process.env.PATH } } : {};
  const child = spawn(node, ['-e', `const cordon = require(${JSON.stringify(pkg)});\n${script}`], { cwd: '/', stdio: ['ignore', 'pipe', 'pipe'], ...identity });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { err += d; });
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      resolve({ error: `the provider gave no answer in ${timeoutMs} ms (frozen?); output so far: ${out.slice(-2000)} ${err.slice(-2000)}` });
    }, timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code !== 0) return resolve({ error: `provider exited ${code ?? signal}: ${err.slice(-4000)}` });
      try {
        resolve({ value: JSON.parse(out) });
      } catch (e) {
        resolve({ error: `provider output is not JSON (${e.message}): ${out.slice(-2000)} ${err.slice(-2000)}` });
      }
    });
  });
}

/** uid 65534 cannot reach the relay inside this checkout: a copy it can (removed in after()). */
let relayDir = null;
function relayFor(asNobody) {
  if (!asNobody || process.geteuid() !== 0) return null;
  if (!relayDir) {
    relayDir = fs.mkdtempSync('/var/tmp/cordon-round5-relay-');
    fs.chmodSync(relayDir, 0o755);
    fs.copyFileSync(cordon.runnerPath.replace(/cordon-runner$/, 'cordon-egress-relay'), path.join(relayDir, 'relay'));
    fs.chmodSync(path.join(relayDir, 'relay'), 0o755);
  }
  return path.join(relayDir, 'relay');
}
after(() => { if (relayDir) fs.rmSync(relayDir, { recursive: true, force: true }); });

/**
 * The provider side: `runs` sandboxes of `code` at once; once each printed
 * READY, stop() them (`stop`) or let them exit; each must settle within
 * `boundMs`; then a `/bin/true` run (no network) must settle within
 * `boundMs` too. Prints one JSON object.
 */
function providerScript({ code, policy, relay, runs, stop, boundMs }) {
  return `
    const policy = ${JSON.stringify(policy)};
    const bound = (p, ms, what) => Promise.race([p, new Promise((res) => setTimeout(() => res({ hung: what }), ms))]);
    const runs = [];
    for (let i = 0; i < ${runs}; i += 1) {
      const ex = cordon.spawnIsolated(['/usr/bin/python3', '-c', ${JSON.stringify(code)}], { policy${relay ? `, networkRelayPath: ${JSON.stringify(relay)}` : ''} });
      let text = ''; ex.stderr.on('data', (c) => { text += c; }); ex.protocol.resume();
      const settled = ex.wait();
      settled.catch(() => {});
      const ready = new Promise((resolve) => {
        const t = setInterval(() => { if (/READY/.test(text)) { clearInterval(t); resolve(true); } }, 20);
        settled.then(() => { clearInterval(t); resolve(/READY/.test(text)); }, () => { clearInterval(t); resolve(false); });
      });
      runs.push({ ex, settled, ready, text: () => text });
    }
    (async () => {
      const ready = await Promise.all(runs.map((r) => bound(r.ready, 30000, 'not ready')));
      if (${stop}) for (const r of runs) r.ex.stop().catch(() => {});
      const settled = await Promise.all(runs.map((r) => bound(r.settled.then((o) => ({ returncode: o.returncode, receipts: o.networkReceipts })), ${boundMs}, 'run')));
      const t = cordon.spawnIsolated(['/bin/true'], { policy: cordon.readOnly() });
      t.stderr.resume(); t.protocol.resume();
      const next = await bound(t.wait().then((o) => ({ returncode: o.returncode })), ${boundMs}, 'next run');
      // Exit once the line is flushed (a run's receipts can pass a pipe's buffer).
      process.stdout.write(JSON.stringify({ ready, settled, next, text: runs.map((r) => r.text().slice(-600)) }), () => process.exit(0));
    })();`;
}

describe('R5N-1: descriptors still queued when the engine closes a socket the sandbox writes to', () => {
  // The program hands a loopback TCP socket with unsendable data and
  // SO_LINGER 3600 s to the engine on a socket the engine then closes
  // WITHOUT reading: the fd-4 channel at run end (its queue parked: the
  // program never reads the engine's replies), and a connection to the
  // engine socket refused at accept while the program runs (its stream
  // quota spent). Closing a
  // Unix socket drops what its queue holds in the closing thread — a
  // supervision runtime worker, held in tcp_close for the hour. Two such
  // runs took both workers: no run of the provider settled again. Fixed:
  // every such socket is drained (shut down, queue received through
  // cordon-passed-fds) before it closes (crates/egress/src/sandbox_socket.rs).
  // The refused connection's program must not exit by itself: a program
  // whose own last copy of the lingering socket closes waits in its own
  // tcp_close (its connect or send failing, say), which is its own stall,
  // not the provider's; this one holds until stop().
  const paths = {
    'the fd-4 channel closed at run end with a datagram carrying descriptors unread': {
      stop: false,
      // Above the 300 requests: a spent stream quota closes the channel.
      resources: { networkStreams: 100000 },
      code: `${PRELUDE}
CH.setblocking(False)
for i in range(300):
    try: CH.send(mecq(1, b'127.0.0.1'))
    except BlockingIOError: time.sleep(0.01)
time.sleep(1)
snd, rcv = linger_pair()
try:
    socket.send_fds(CH, [b'MECQ'], [snd.fileno(), rcv.fileno()])
except PermissionError:
    # The channel refuses descriptors at the sender (SO_PASSRIGHTS off, since 2026-12-06): no trap is set,
    # and these copies are the last, so the program's own close must not linger.
    snd.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, 0))
snd.close(); rcv.close()
print('READY', flush=True)
time.sleep(0.3)
os._exit(0)`,
    },
    'a connection to the engine socket refused at accept (concurrent-stream quota full) carrying descriptors': {
      // The round's path: the program connects to the engine socket
      // directly and sends the lingering pair on a connection the engine
      // refuses at accept and closes while the program runs on (until
      // stop()). The round spent the stream quota; since R11-8 the engine
      // shuts a refused connection down the moment it accepts it, and a
      // spent quota also closes the listener, so the program's one try
      // usually came too late (EPIPE, nothing queued: CI failed on that).
      // Here one idle connection fills the concurrent-stream quota of 1, so
      // the listener stays open and the program tries again on a new
      // connection until a pair is queued before the engine's shutdown.
      stop: true,
      resources: { networkConcurrentStreams: 1 },
      code: `${PRELUDE}
u0 = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
u0.connect('/.cordon/egress/engine.sock'); KEEP.append(u0)
time.sleep(0.2)
snd, rcv = linger_pair()
last = None
for attempt in range(2000):
    u = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    u.connect('/.cordon/egress/engine.sock')
    try:
        socket.send_fds(u, [b'x'], [snd.fileno(), rcv.fileno()])
        break
    except PermissionError:
        # The engine socket refuses descriptors at the sender on every connection after the relay's
        # (SO_PASSRIGHTS off, since 2026-12-06, W26-1): no trap can be set, and these copies are the last,
        # so the program's own close must not linger.
        snd.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, 0))
        print('REFUSED at the sender', flush=True)
        break
    except OSError as e:
        last = e; u.close()
else:
    # Our own last copy of the pair must not linger in our own close.
    snd.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, 0))
    raise Exception('every connection was closed before the pair was queued: %r' % last)
print('QUEUED after', attempt + 1, 'connections', flush=True)
snd.close(); rcv.close(); KEEP.append(u)
time.sleep(1)
hold()`,
      receipts: (receipts) => receipts.some((r) => r.result === 'quota-concurrent-streams'),
      // Where the kernel can refuse them (6.16+), no descriptor reaches the engine socket's connections.
      refused: /REFUSED at the sender/,
    },
  };
  for (const [what, p] of Object.entries(paths)) {
    for (const [who, asNobody] of PROVIDERS) {
      test(`under ${who}, ${what}: two such runs settle, and so does the next run`, { skip: skip ?? false, timeout: 180_000 }, async () => {
        const policy = { ...cordon.readOnly(), network: { mode: 'mediated', allow: ['example.com:443'] }, resources: { ...cordon.readOnly().resources, ...p.resources } };
        const script = providerScript({ code: p.code, policy, relay: relayFor(asNobody), runs: 2, stop: p.stop, boundMs: 20_000 });
        const run = await provider(script, { asNobody, timeoutMs: 90_000 });
        assert.equal(run.error, undefined, run.error);
        const { ready, settled, next, text } = run.value;
        assert.deepEqual(ready, [true, true], `both programs set the trap: ${text.join('\n---\n')}`);
        for (const s of settled) assert.equal(s.hung, undefined, `a run did not settle within 20 s${p.stop ? ' of stop()' : ''}`);
        if (p.receipts) for (const s of settled) assert.ok(p.receipts(s.receipts), `the attack took the path: ${JSON.stringify(s.receipts)}`);
        if (p.refused) for (const t of text) assert.equal(p.refused.test(t), h.kernelRefusesPassedFds(), t);
        assert.deepEqual(next, { returncode: 0 }, 'a /bin/true run after them settles within 20 s: no supervision worker is held');
      });
    }
  }
});

describe('R5N-2: a stop is recorded as a stop, whatever phase each stream was in', () => {
  // Streams open at stop(): 8 in the proxy handshake, 8 awaiting a
  // ClientHello, 8 fd-4 and 8 proxy streams relaying with both directions
  // stalled, 8 proxy streams half-closed by the client. The stop kills the
  // sandbox first; its sockets then close, and the engine recorded that
  // close (protocol-error, sni-absent, end error/closed) as the client's
  // doing. Fixed: the ladder latches the stop in the engine before it
  // signals the sandbox (crates/egress/src/stop_latch.rs).
  const servers = {};
  before(async () => {
    const start = (onConnection) => new Promise((resolve) => {
      const sockets = new Set();
      const server = net.createServer((s) => { sockets.add(s); s.on('error', () => {}); s.on('close', () => sockets.delete(s)); onConnection(s); });
      server.listen(0, '127.0.0.1', () => resolve({ port: server.address().port, close: () => { for (const s of sockets) s.destroy(); server.close(); } }));
    });
    const chunk = Buffer.alloc(65536, 0x61);
    servers.echo = await start((s) => s.pipe(s));
    // Never reads, writes until the stream is stalled.
    servers.floodsink = await start((s) => { s.pause(); const go = () => { while (!s.destroyed && s.write(chunk)); }; s.on('drain', go); go(); });
  });
  after(() => { for (const s of Object.values(servers)) s.close(); });

  for (const [who, asNobody] of PROVIDERS) {
    test(`under ${who}, every stream open at stop() is recorded cancelled: handshake, ClientHello, relay stalled both ways, half-closed`, { skip: skip ?? false, timeout: 180_000 }, async () => {
      const K = 8;
      const code = `${PRELUDE}
for i in range(${K}):
    s = socket.create_connection(('127.0.0.1', 3128)); s.sendall(b'CONNECT 127.0.0.1:'); KEEP.append(s)
for i in range(${K}):
    s = px(${servers.echo.port}, b'localhost'); s.sendall(b'\\x16\\x03\\x01\\x02\\x00\\x01'); KEEP.append(s)
relaying = []
for i in range(${K}):
    s = f4(${servers.floodsink.port}); fill(s); relaying.append(s)
for i in range(${K}):
    s = px(${servers.floodsink.port}); fill(s); relaying.append(s)
for i in range(${K}):
    s = px(${servers.floodsink.port}); fill(s); s.shutdown(socket.SHUT_WR); KEEP.append(s)
time.sleep(1)
for s in relaying: fill(s)
KEEP.extend(relaying)
hold()`;
      const allow = [
        { protocol: 'tcp', host: '127.0.0.1', port: servers.floodsink.port, allowPrivateAddresses: true },
        { protocol: 'tcp', host: 'localhost', port: servers.echo.port, allowPrivateAddresses: true, requireTlsSni: true },
      ];
      const policy = { ...cordon.readOnly(), network: { mode: 'mediated', allow }, resources: { ...cordon.readOnly().resources, networkConcurrentStreams: 64, networkStreams: 256, networkBytesOut: 2 ** 30, networkBytesIn: 2 ** 30 } };
      const script = providerScript({ code, policy, relay: relayFor(asNobody), runs: 1, stop: true, boundMs: 30_000 });
      const run = await provider(script, { asNobody, timeoutMs: 120_000 });
      assert.equal(run.error, undefined, run.error);
      const { ready, settled, text } = run.value;
      assert.deepEqual(ready, [true], `the program opened every stream: ${text[0]}`);
      assert.equal(settled[0].hung, undefined, 'the run settled after stop()');
      const receipts = settled[0].receipts;
      assert.equal(receipts.length, 5 * K, `one receipt per stream: ${JSON.stringify(receipts.map((r) => [r.result, r.end]))}`);
      const notCancelled = receipts.filter((r) => r.result !== 'cancelled' && r.end !== 'cancelled');
      assert.deepEqual(notCancelled.map((r) => `${r.protocol}/${r.result}/${r.end}`), [], 'every stream the stop ended reads cancelled');
      const relayed = receipts.filter((r) => r.result === 'allowed');
      assert.equal(relayed.length, 4 * K, 'the admitted streams keep their allowed result (ClientHello, relay, half-closed)');
    });
  }
});
