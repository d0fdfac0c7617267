'use strict';

// Mediated network, end to end: real loopback servers on the host (HTTP,
// HTTPS with a self-signed certificate and SNI, TCP echo), real clients in
// real sandboxes (python3, curl, a static C client for fd 4), the real
// engine and relay. Destinations are on 127.0.0.0/8 / ::1 only, allowed
// explicitly with allowPrivateAddresses; nothing here touches another address.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const http = require('node:http');
const https = require('node:https');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { spawnIsolated, readOnly } = require('..');
const { runToEnd, eventually, ownControlRoots, ownPidsWithMarker } = require('./spawn-support');

const PYTHON = '/usr/bin/python3';
const CURL = '/usr/bin/curl';

/** A mediated policy allowing `allow` (strings or destination objects). */
const mediated = (allow, extra = {}) => ({ ...readOnly(), network: { mode: 'mediated', allow, ...extra } });
const loopback = (port, host = '127.0.0.1', more = {}) => ({ protocol: 'tcp', host, port, allowPrivateAddresses: true, ...more });

/** Starts `server` on an ephemeral loopback port; counts bytes per connection. */
async function listen(server, host = '127.0.0.1') {
  const stats = { connections: 0, bytesRead: 0, bytesWritten: 0, open: new Set() };
  server.on('connection', (socket) => {
    stats.connections += 1;
    stats.open.add(socket);
    socket.on('close', () => {
      stats.bytesRead += socket.bytesRead;
      stats.bytesWritten += socket.bytesWritten;
      stats.open.delete(socket);
    });
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, resolve);
  });
  return { port: server.address().port, stats, close: () => new Promise((r) => { server.close(r); server.closeAllConnections?.(); for (const s of stats.open) s.destroy(); }) };
}

const echoServer = () => listen(net.createServer((socket) => socket.pipe(socket)));
const httpServer = () => listen(http.createServer((req, res) => { res.end(`hello ${req.url}`); }));

let tlsMaterial = null;
/** A throwaway self-signed certificate for "localhost" (openssl, once). */
function tls() {
  if (tlsMaterial) return tlsMaterial;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-net-tls-'));
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=localhost',
    '-addext', 'subjectAltName=DNS:localhost', '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem')],
  { stdio: 'ignore' });
  tlsMaterial = { key: fs.readFileSync(path.join(dir, 'key.pem')), cert: fs.readFileSync(path.join(dir, 'cert.pem')) };
  fs.rmSync(dir, { recursive: true, force: true });
  return tlsMaterial;
}

/** Runs python3 `code` in a sandbox; returns stdout+stderr text and the result. */
async function python(code, options) {
  const { result, stderr } = await runToEnd(spawnIsolated([PYTHON, '-c', code], options));
  return { result, out: stderr, receipts: result.networkReceipts };
}

/** Python that sends one CONNECT through the proxy and prints the status line and refusal header. */
const connectProbe = (targets) => `
import os, socket
for target in ${JSON.stringify(targets)}:
    s = socket.create_connection(('127.0.0.1', 3128), timeout=10)
    s.sendall(('CONNECT %s HTTP/1.1\\r\\nHost: %s\\r\\n\\r\\n' % (target, target)).encode())
    head = b''
    while b'\\r\\n\\r\\n' not in head:
        chunk = s.recv(1)
        if not chunk: break
        head += chunk
    lines = head.decode().split('\\r\\n')
    reason = [l.split(': ', 1)[1] for l in lines if l.lower().startswith('x-cordon-refusal:')]
    print(target, lines[0].split(' ')[1] if lines[0] else 'closed', reason[0] if reason else '-')
    s.close()
`;

test('an allowed HTTP request through HTTP_PROXY is forwarded and its receipt is exact', async () => {
  const server = await httpServer();
  try {
    const code = `
import os, urllib.request
print(sorted(k for k in os.environ if 'proxy' in k.lower()))
print(os.environ['HTTP_PROXY'], os.environ['ALL_PROXY'])
print(urllib.request.urlopen('http://127.0.0.1:${server.port}/x', timeout=10).read().decode())
`;
    const { result, out, receipts } = await python(code, { policy: mediated([loopback(server.port)]), invocationId: 'net-forward' });
    assert.equal(result.returncode, 0, out);
    const lines = out.trim().split('\n');
    assert.equal(lines[0], "['ALL_PROXY', 'HTTPS_PROXY', 'HTTP_PROXY', 'all_proxy', 'http_proxy', 'https_proxy']");
    assert.equal(lines[1], 'http://127.0.0.1:3128 socks5h://127.0.0.1:3128', 'no userinfo');
    assert.equal(lines[2], 'hello /x');
    assert.equal(receipts.length, 1, JSON.stringify(receipts));
    const [r] = receipts;
    assert.deepEqual(
      { frontend: r.frontend, protocol: r.protocol, host: r.host, port: r.port, pinned: r.pinnedAddress, result: r.result, end: r.end, inv: r.invocationId },
      { frontend: 'proxy', protocol: 'HTTP_FORWARD', host: '127.0.0.1', port: server.port, pinned: '127.0.0.1', result: 'allowed', end: 'closed', inv: 'net-forward' },
    );
    await eventually(() => server.stats.open.size === 0, 2000);
    assert.equal(r.bytesFromClient, server.stats.bytesRead, 'bytes the server read');
    assert.equal(r.bytesToClient, server.stats.bytesWritten, 'bytes the server wrote');
    assert.equal(r.policyDigest, result.receipt.policy.digest);
    assert.deepEqual(result.receipt.networkReceipts, receipts, 'the receipt file carries the same list');
    assert.deepEqual(result.receipt.confinement.planned.seccomp.socketFamilies, ['AF_UNIX', 'AF_INET', 'AF_INET6']);
  } finally {
    await server.close();
  }
});

test('networkEngineMs: the time the engine spent on a run\'s tasks is in its receipt, more for a run that echoes 16 MiB than for one with no stream; none without mediation', async () => {
  const server = await echoServer();
  try {
    const policy = mediated([loopback(server.port)]);
    const idle = await python('pass', { policy });
    const echoed = await python(`
import socket
s = socket.create_connection(('127.0.0.1', 3128), timeout=10)
s.sendall(b'CONNECT 127.0.0.1:${server.port} HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n')
head = b''
while b'\\r\\n\\r\\n' not in head: head += s.recv(1)
chunk, total, back = b'x' * 65536, 16 << 20, 0
for _ in range(total // len(chunk)):
    s.sendall(chunk)
    while back < _ * len(chunk): back += len(s.recv(1 << 20))
while back < total: back += len(s.recv(1 << 20))
print('echoed', back)
`, { policy });
    assert.equal(echoed.result.returncode, 0, echoed.out);
    assert.match(echoed.out, /echoed 16777216/);
    const spent = [idle, echoed].map((r) => r.result.receipt.networkEngineMs);
    for (const ms of spent) assert.ok(typeof ms === 'number' && ms >= 0 && Number.isFinite(ms), `networkEngineMs ${ms}`);
    // 32 MiB through the engine's copies against an accept and a hand-over.
    assert.ok(spent[1] > spent[0] + 2, `engine ms: no stream ${spent[0]}, 16 MiB echoed ${spent[1]}`);
    const plain = await python('pass', { policy: readOnly() });
    assert.equal(plain.result.receipt.networkEngineMs, undefined, 'a run without mediation has no engine');
  } finally {
    await server.close();
  }
});

test('HTTPS through CONNECT with requireTlsSni: the right SNI passes, a wrong one is refused before any upstream byte', async () => {
  const server = await listen(https.createServer(tls(), (req, res) => res.end('secure')), '127.0.0.1');
  try {
    const dest = loopback(server.port, 'localhost', { requireTlsSni: true });
    const code = `
import socket, ssl, urllib.request
ctx = ssl._create_unverified_context()
print(urllib.request.urlopen('https://localhost:${server.port}/', timeout=10, context=ctx).read().decode())
s = socket.create_connection(('127.0.0.1', 3128), timeout=10)
s.sendall(b'CONNECT localhost:${server.port} HTTP/1.1\\r\\n\\r\\n')
print(s.recv(200).split(b'\\r\\n')[0].decode())
try:
    ctx.wrap_socket(s, server_hostname='evil.example').do_handshake()
    print('handshake=ok')
except (OSError, ssl.SSLError) as e:
    print('handshake=failed')
`;
    const { result, out, receipts } = await python(code, { policy: mediated([dest]) });
    assert.equal(result.returncode, 0, out);
    assert.deepEqual(out.trim().split('\n'), ['secure', 'HTTP/1.1 200 Connection established', 'handshake=failed']);
    assert.deepEqual(receipts.map((r) => [r.protocol, r.result, r.sniVerified]), [
      ['HTTP_CONNECT', 'allowed', true], ['HTTP_CONNECT', 'sni-mismatch', false],
    ]);
    assert.equal(receipts[1].bytesFromClient, 0, 'nothing of the refused hello went upstream');
    assert.ok(['127.0.0.1', '::1'].includes(receipts[0].pinnedAddress));
  } finally {
    await server.close();
  }
});

test('curl through HTTPS_PROXY and SOCKS5 with a hostname (socks5h) reach an allowed destination', { skip: !fs.existsSync(CURL) && !process.env.CI ? 'no /usr/bin/curl on this host' : false }, async () => {
  const server = await httpServer();
  try {
    const script = `${CURL} -sS --max-time 10 http://localhost:${server.port}/via-http && echo && ` +
      `${CURL} -sS --max-time 10 -x "$ALL_PROXY" http://localhost:${server.port}/via-socks`;
    const policy = mediated([loopback(server.port, 'localhost')]);
    const { result, stderr } = await runToEnd(spawnIsolated(['/bin/sh', '-c', script], { policy }));
    assert.equal(result.returncode, 0, stderr);
    assert.equal(stderr, 'hello /via-http\nhello /via-socks');
    assert.deepEqual(result.networkReceipts.map((r) => [r.protocol, r.host, r.result]), [
      ['HTTP_FORWARD', 'localhost', 'allowed'], ['SOCKS5', 'localhost', 'allowed'],
    ]);
  } finally {
    await server.close();
  }
});

test('ports, hosts, IP literals and private addresses not allowed are refused with their reason', async () => {
  const echo = await echoServer();
  try {
    const p = echo.port;
    const policy = mediated([
      loopback(p, 'localhost'),
      `127.0.0.1:${p}`, // a private literal listed without allowPrivateAddresses
      { protocol: 'tcp', host: 'localhost', port: p + 1 > 65535 ? 1 : p + 1 }, // a name resolving to loopback: the rebinding case
    ]);
    const targets = [`localhost:${p === 1 ? 2 : p - 1}`, `other.example:${p}`, `127.0.0.2:${p}`, `127.0.0.1:${p}`,
      `localhost:${p + 1 > 65535 ? 1 : p + 1}`, `[::1]:${p}`, `bad_name:${p}`];
    const { result, out, receipts } = await python(connectProbe(targets), { policy });
    assert.equal(result.returncode, 0, out);
    assert.deepEqual(out.trim().split('\n'), [
      `${targets[0]} 403 no-destination`, `${targets[1]} 403 no-destination`, `${targets[2]} 403 no-destination`,
      `${targets[3]} 403 private-address`, `${targets[4]} 403 private-address`, `${targets[5]} 501 unsupported`,
      `${targets[6]} 403 malformed-name`,
    ]);
    assert.deepEqual(receipts.map((r) => r.result), ['no-destination', 'no-destination', 'no-destination',
      'private-address', 'private-address', 'unsupported', 'malformed-name']);
    assert.equal(echo.stats.connections, 0, 'no refused stream reached the server');
  } finally {
    await echo.close();
  }
});

test('with mediation on, direct connections, IPv6, DNS, raw sockets and host abstract sockets still fail', async () => {
  const server = await httpServer();
  const abstractName = `cordon-net-test-${process.pid}`;
  const abstract = net.createServer(() => {});
  await new Promise((r) => abstract.listen(`\0${abstractName}`, r));
  try {
    const code = `
import socket
def attempt(name, fn):
    try:
        fn(); print(name + '=ok')
    except Exception as e:
        print(name + '=failed')
attempt('direct', lambda: socket.create_connection(('127.0.0.1', ${server.port}), timeout=2))
attempt('ipv6', lambda: socket.create_connection(('::1', ${server.port}), timeout=2))
attempt('dns', lambda: socket.getaddrinfo('example.com', 80))
attempt('raw', lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP))
attempt('packet', lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW))
attempt('netlink', lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW))
def abstract_unix():
    s = socket.socket(socket.AF_UNIX); s.settimeout(2); s.connect('\\0${abstractName}')
attempt('abstract', abstract_unix)
`;
    const { result, out } = await python(code, { policy: mediated([loopback(server.port)]) });
    assert.equal(result.returncode, 0, out);
    assert.deepEqual(out.trim().split('\n'), ['direct=failed', 'ipv6=failed', 'dns=failed', 'raw=failed',
      'packet=failed', 'netlink=failed', 'abstract=failed']);
    assert.equal(server.stats.connections, 0);
  } finally {
    abstract.close();
    await server.close();
  }
});

let fd4Client = null;
/** The static fd-4 client (cc -static), compiled once. */
function fd4ClientPath() {
  if (fd4Client) return fd4Client;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-fd4-'));
  fs.chmodSync(dir, 0o755);
  fd4Client = path.join(dir, 'fd4-client');
  execFileSync('cc', ['-static', '-O1', '-Wall', '-Werror', '-o', fd4Client, path.join(__dirname, 'fixtures', 'fd4-client.c')]);
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  return fd4Client;
}

test('the fd-4 channel hands a static C client a relay descriptor for allowed destinations only', async () => {
  const echo = await echoServer();
  try {
    const client = fd4ClientPath();
    const policy = mediated([loopback(echo.port)], { frontend: 'fd4' });
    const other = echo.port + 1 > 65535 ? 1 : echo.port + 1;
    const argv = [client, '127.0.0.1', String(echo.port), 'ping-over-fd4', '127.0.0.1', String(other), 'x'];
    const { result, stderr } = await runToEnd(spawnIsolated(argv, { policy }));
    assert.equal(result.returncode, 0, stderr);
    assert.deepEqual(stderr.trim().split('\n'), ['status=0 fd=yes reply=ping-over-fd4', 'status=1 fd=no reply=']);
    assert.deepEqual(result.networkReceipts.map((r) => [r.frontend, r.protocol, r.result, r.bytesFromClient, r.bytesToClient]), [
      ['fd4', 'FD4', 'allowed', 13, 13], ['fd4', 'FD4', 'no-destination', 0, 0],
    ]);
  } finally {
    await echo.close();
  }
});

test('fd 4 is bound to the engine: a zero-length record is one junk request, a shut-down channel none, sendto elsewhere goes to the engine', async () => {
  const echo = await echoServer();
  try {
    const policy = mediated([loopback(echo.port)], { frontend: 'fd4' });
    // A zero-length record is a (malformed) request; SHUT_WR ends the channel
    // without a receipt (a seqpacket socket reads as zero-length records
    // forever after it: before the engine looked for the shutdown, each was
    // a protocol-error receipt until the stream quota ran out, 257 of them).
    const { result, out } = await python(`
import socket, time
S4 = socket.socket(fileno=4)
print(S4.type == socket.SOCK_SEQPACKET, flush=True)
S4.send(b'')
print(len(S4.recv(64)), flush=True)
S4.sendto(b'', b'\\0cordon-not-the-engine')
print(len(S4.recv(64)), flush=True)
S4.shutdown(socket.SHUT_WR)
time.sleep(1)
`, { policy });
    assert.equal(result.returncode, 0, out);
    assert.deepEqual(out.trim().split('\n'), ['True', '8', '8']);
    assert.deepEqual(result.networkReceipts.map((r) => r.result), ['protocol-error', 'protocol-error']);
  } finally {
    await echo.close();
  }
});

test('two concurrent runs with different allowlists cannot use each other\'s destinations', async () => {
  const [a, b] = [await echoServer(), await echoServer()];
  try {
    const targets = [`127.0.0.1:${a.port}`, `127.0.0.1:${b.port}`];
    const [ra, rb] = await Promise.all([
      python(connectProbe(targets), { policy: mediated([loopback(a.port)]), invocationId: 'run-a' }),
      python(connectProbe(targets), { policy: mediated([loopback(b.port)]), invocationId: 'run-b' }),
    ]);
    assert.deepEqual(ra.out.trim().split('\n'), [`${targets[0]} 200 -`, `${targets[1]} 403 no-destination`]);
    assert.deepEqual(rb.out.trim().split('\n'), [`${targets[0]} 403 no-destination`, `${targets[1]} 200 -`]);
    assert.ok(ra.receipts.every((r) => r.invocationId === 'run-a'));
    assert.ok(rb.receipts.every((r) => r.invocationId === 'run-b'));
  } finally {
    await a.close();
    await b.close();
  }
});

test('a stop during an open stream tears it down: the upstream connection closes and the stream is recorded', async () => {
  const echo = await echoServer();
  try {
    const code = `
import socket, sys, time
s = socket.create_connection(('127.0.0.1', 3128), timeout=10)
s.sendall(b'CONNECT 127.0.0.1:${echo.port} HTTP/1.1\\r\\n\\r\\n')
s.recv(100)
s.sendall(b'hi'); s.recv(2)
print('open', flush=True)
time.sleep(60)
`;
    const execution = spawnIsolated([PYTHON, '-c', code], { policy: mediated([loopback(echo.port)]) });
    execution.protocol.resume();
    let out = '';
    execution.stderr.on('data', (d) => { out += d; });
    assert.ok(await eventually(() => out.includes('open'), 15000), out);
    assert.equal(echo.stats.open.size, 1);
    await execution.stop();
    const result = await execution.wait();
    assert.ok(await eventually(() => echo.stats.open.size === 0, 5000), 'the upstream connection is closed');
    // The stop kills the sandbox, whose end of the stream closes first; the
    // engine's own cancel covers a stream whose client outlives it (cargo tests).
    assert.deepEqual(result.networkReceipts.map((r) => [r.result, r.bytesFromClient]), [['allowed', 2]]);
    assert.ok(['closed', 'cancelled'].includes(result.networkReceipts[0].end), result.networkReceipts[0].end);
  } finally {
    await echo.close();
  }
});

test('the sandbox holds no proxy listener: no relay process, no listening descriptor in the program, 3128 cannot be taken, the proxy still answers', async () => {
  const server = await httpServer();
  try {
    // The relay handed its listener to the engine and exec'd the program:
    // nothing in the sandbox can accept, shut down or re-option it.
    const code = `
import os, socket, urllib.request
relays = sum(1 for pid in os.listdir('/proc') if pid.isdigit() and open('/proc/%s/comm' % pid).read().strip() == 'egress-relay')
listening = 0
for fd in os.listdir('/proc/self/fd'):
    try:
        s = socket.socket(fileno=os.dup(int(fd)))
    except OSError: continue
    try: listening += s.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN)
    except OSError: pass
    s.close()
print('relays', relays, 'listening', listening)
try:
    socket.socket().bind(('127.0.0.1', 3128)); print('bind=taken')
except OSError as e: print('bind=refused', e.errno)
print(urllib.request.urlopen('http://127.0.0.1:${server.port}/still', timeout=10).read().decode().strip())
`;
    const { result, out } = await python(code, { policy: mediated([loopback(server.port)]) });
    assert.equal(result.returncode, 0, out);
    assert.deepEqual(out.trim().split('\n'), ['relays 0 listening 0', 'bind=refused 98', 'hello /still']);
  } finally {
    await server.close();
  }
});

test('a mediated policy without a usable relay fails to launch with ERR_CORDON_NETWORK_UNAVAILABLE', () => {
  const before = ownControlRoots().length;
  assert.throws(
    () => spawnIsolated([PYTHON, '-c', 'pass'], { policy: mediated(['localhost:80']), networkRelayPath: '/nonexistent/cordon-egress-relay' }),
    { code: 'ERR_CORDON_NETWORK_UNAVAILABLE' },
  );
  assert.equal(ownControlRoots().length, before, 'nothing left behind');
  assert.throws(
    () => spawnIsolated([PYTHON, '-c', 'pass'], { policy: mediated(['Not A Host:80']) }),
    { code: 'ERR_CORDON_POLICY_INVALID' },
  );
});

test('cordon run --allow-private HOST:PORT --receipt FILE: the program reaches the destination and the file carries the network receipts', async () => {
  const server = await httpServer();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-net-cli-'));
  try {
    const receiptPath = path.join(dir, 'receipt.json');
    const shim = path.join(__dirname, '..', 'bin', 'cordon.js');
    const code = `import urllib.request\nprint(urllib.request.urlopen('http://127.0.0.1:${server.port}/cli', timeout=10).read().decode())`;
    const run = await new Promise((resolve) => {
      const child = require('node:child_process').spawn(process.execPath, [shim, 'run', '--allow-private', `127.0.0.1:${server.port}`,
        '--receipt', receiptPath, '--', PYTHON, '-c', code], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (d) => { stderr += d; });
      child.on('exit', (status) => resolve({ status, stderr }));
    });
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stderr, 'hello /cli\n');
    const receipt = JSON.parse(fs.readFileSync(receiptPath, 'utf8'));
    assert.deepEqual(receipt.policy.network.allow, [{ protocol: 'tcp', host: '127.0.0.1', port: server.port, requireTlsSni: false, allowPrivateAddresses: true }]);
    assert.deepEqual(receipt.networkReceipts.map((r) => [r.protocol, r.result, r.host]), [['HTTP_FORWARD', 'allowed', '127.0.0.1']]);
    const refused = require('node:child_process').spawnSync(process.execPath, [shim, 'run', '--allow', `127.0.0.1:${server.port}`, '--', PYTHON, '-c', code], { encoding: 'utf8' });
    // Refused before anything runs (it could never be reached), naming the flag that admits it.
    assert.equal(refused.status, 125, 'without --allow-private the loopback destination is a usage error');
    assert.match(refused.stderr, new RegExp(`use --allow-private 127\\.0\\.0\\.1:${server.port}`));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
    await server.close();
  }
});

test('doctor reports whether mediated networking can launch (the relay binary)', () => {
  const { doctor } = require('..');
  const check = doctor().checks.find((c) => c.name === 'mediated network');
  assert.ok(check, 'a mediated network check exists');
  assert.equal(check.ok, true, check.detail);
  const missing = doctor({ networkRelayPath: '/nonexistent/cordon-egress-relay' }).checks.find((c) => c.name === 'mediated network');
  assert.equal(missing.ok, false);
  assert.equal(missing.importance, 'optional');
  assert.match(missing.fix, /cordon-egress-relay/);
});

test('200 mediated runs with a stream each leak no descriptors, threads, sockets, relays or control roots', async () => {
  const echo = await echoServer();
  try {
    const client = fd4ClientPath();
    const policy = mediated([loopback(echo.port)]); // auto: the relay runs too
    const once = async () => {
      const { result, stderr } = await runToEnd(spawnIsolated([client, '127.0.0.1', String(echo.port), 'x'], { policy }));
      assert.equal(stderr, 'status=0 fd=yes reply=x\n');
      assert.equal(result.networkReceipts.length, 1);
    };
    await once(); // warm-up: lazily created process state is not a leak
    const count = (dir) => fs.readdirSync(dir).length;
    const before = { fds: count('/proc/self/fd'), threads: count('/proc/self/task'), roots: ownControlRoots().length };
    for (let i = 0; i < 199; i += 1) await once();
    assert.ok(await eventually(() => echo.stats.open.size === 0, 10_000), 'the upstream saw every stream close');
    // +2: Node may open an fd lazily (not per run); a per-run leak would be +199. Waited
    // for: the last runs' descriptors close asynchronously.
    await eventually(() => count('/proc/self/fd') <= before.fds + 2, 10_000);
    const after = { fds: count('/proc/self/fd'), threads: count('/proc/self/task'), roots: ownControlRoots().length };
    assert.ok(after.fds <= before.fds + 2, `descriptors: ${before.fds} before, ${after.fds} after 199 runs`);
    // Pump threads end as their runs settle and the supervision runtime's idle
    // blocking threads expire after 1 s, so give them a moment; a per-run
    // leak would stay at +199 or more.
    const threadsSettle = await eventually(() => count('/proc/self/task') <= before.threads, 10_000);
    assert.ok(threadsSettle, `threads: ${before.threads} before, ${count('/proc/self/task')} after`);
    assert.equal(after.roots, before.roots, 'control roots (and their engine sockets) are gone');
    assert.deepEqual(ownPidsWithMarker('/.cordon/egress-relay'), [], 'no relay outlives its run');
    assert.equal(echo.stats.connections, 200);
  } finally {
    await echo.close();
  }
});

test('quotas from policy.resources close a stream past its bytes and refuse streams past the count', async () => {
  const echo = await echoServer();
  try {
    const code = `
import socket
def stream(payload):
    s = socket.create_connection(('127.0.0.1', 3128), timeout=10)
    s.sendall(b'CONNECT 127.0.0.1:${echo.port} HTTP/1.1\\r\\n\\r\\n')
    head = s.recv(200)
    if not head.startswith(b'HTTP/1.1 200'):
        print('refused', head.split(b'\\r\\n')[0].decode()); return
    try:
        s.sendall(payload)
        got = b''
        while True:
            r = s.recv(4096)
            if not r: break
            got += r
        print('echoed', len(got))
    except OSError:
        print('reset')
stream(b'a' * 100)
stream(b'b')
stream(b'c')
`;
    const policy = { ...mediated([loopback(echo.port)]), resources: { networkBytesOut: 10, networkStreams: 2 } };
    const { result, out, receipts } = await python(code, { policy });
    assert.equal(result.returncode, 0, out);
    const lines = out.trim().split('\n');
    assert.ok(/^(echoed ([0-9]|10)|reset)$/.test(lines[0]), lines[0]);
    // Refused at accept, before the client named a protocol: closed without a reply.
    assert.equal(lines[2], 'refused');
    assert.deepEqual(receipts.map((r) => [r.result, r.end, r.bytesFromClient]), [
      ['allowed', 'quota-bytes-out', 10], ['allowed', 'quota-bytes-out', 0], ['quota-streams', null, 0],
    ]);
    await eventually(() => echo.stats.open.size === 0, 5000);
    assert.equal(echo.stats.bytesRead, 10, 'exactly the quota reached the server');
  } finally {
    await echo.close();
  }
});

test('Node inside the sandbox reaches an allowed destination through a CONNECT tunnel on the proxy', async () => {
  const echo = await echoServer();
  try {
    const script = `
const http = require('node:http');
const [host, port] = process.env.HTTP_PROXY.replace('http://', '').split(':');
const req = http.request({ host, port: Number(port), method: 'CONNECT', path: '127.0.0.1:${echo.port}' });
req.on('connect', (res, socket) => {
  console.log('status', res.statusCode);
  socket.end('node-bytes');
  let got = '';
  socket.on('data', (d) => { got += d; });
  socket.on('end', () => console.log('echo', got));
});
req.on('error', (e) => { console.log('error', e.code); process.exitCode = 1; });
req.end();
`;
    // V8 reserves far more address space than the read-only preset's 256 MiB.
    const policy = { ...mediated([loopback(echo.port)]), resources: { memoryBytes: 16 * 2 ** 30 } };
    const { result, stderr } = await runToEnd(spawnIsolated(['/usr/bin/node', '-e', script], { policy }));
    assert.equal(result.returncode, 0, stderr);
    assert.equal(stderr, 'status 200\necho node-bytes\n');
    assert.deepEqual(result.networkReceipts.map((r) => [r.protocol, r.result, r.bytesFromClient, r.bytesToClient]), [
      ['HTTP_CONNECT', 'allowed', 10, 10],
    ]);
  } finally {
    await echo.close();
  }
});

test('the shipped relay is a static executable (no ELF interpreter), so it runs whatever the sandbox mounts', () => {
  const relay = require('../lib/platform-package').nativeExecutable('cordon-egress-relay');
  const elf = fs.readFileSync(relay);
  assert.equal(elf.toString('latin1', 1, 4), 'ELF');
  const phoff = Number(elf.readBigUInt64LE(0x20));
  const phentsize = elf.readUInt16LE(0x36);
  const phnum = elf.readUInt16LE(0x38);
  const PT_INTERP = 3;
  const types = Array.from({ length: phnum }, (_, i) => elf.readUInt32LE(phoff + i * phentsize));
  assert.ok(types.length > 0);
  assert.ok(!types.includes(PT_INTERP), `${relay} asks for a dynamic loader`);
});
