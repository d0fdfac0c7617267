'use strict';

// Section 7, the mediated network (issue 13): the same python3 client
// measured directly on the host and inside a mediated sandbox through the
// proxy (HTTP CONNECT via the relay and the engine), against a loopback
// sink/echo server on the host; and the cold start of a mediated run
// against network "none". Loopback only; the client times itself, so
// interpreter start-up is not in the throughput or connect figures.

const { execFile, spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
// This checkout's cordon, loaded on first use: bench/compare.js's workers
// measure another build through compareSamples and must not also load this
// one's addon (a second addon in the process costs its own CPU per run).
const own = () => require('..');
const spawnIsolated = (...args) => own().spawnIsolated(...args);
const readOnly = (...args) => own().readOnly(...args);
const { sectionRows, nowMs } = require('./stats');

const PYTHON = '/usr/bin/python3';

/** A sink that counts bytes and, at EOF, answers with the count; one byte is echoed on connect probes. */
function startServer() {
  const server = net.createServer((socket) => {
    let total = 0;
    socket.on('data', (chunk) => {
      total += chunk.length;
      if (chunk.length === 1 && total === 1) socket.write(chunk); // connect probe: echo the byte
    });
    socket.on('end', () => socket.end(String(total)));
    socket.on('error', () => {});
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

// The client: `mode` direct|proxy|engine, `what` throughput|connect.
// It reads the `200` head with recv(4096) until CRLF CRLF, as an HTTP client
// does (nothing follows the head until the client speaks, so nothing is
// over-read); until 2026-12-02 it read it one recv(1) at a time, ~40-60 µs
// of python per connect charged to the proxy (bench/connect-hops.js
// --head byte shows that share).
// Prints one number per sample. `engine` skips the proxy port: it speaks
// CONNECT on the engine's own socket (bound at /.cordon/egress/engine.sock).
// (A `handoff` mode, a relay process handing each connection's socket to
// the engine, was the before of the listener's move into the engine; the
// engine socket has refused passed descriptors after the relay's since
// 2026-12-06, so it is gone: docs/performance.md keeps its figures.)
const CLIENT = String.raw`
import os, socket, sys, time
mode, what, port, count, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
def connect():
    if mode == 'direct':
        return socket.create_connection(('127.0.0.1', port))
    if mode == 'engine':
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.connect('/.cordon/egress/engine.sock')
    else:
        s = socket.create_connection(('127.0.0.1', 3128))
    s.sendall(('CONNECT 127.0.0.1:%d HTTP/1.1\r\n\r\n' % port).encode())
    head = b''
    while not head.endswith(b'\r\n\r\n'):
        head += s.recv(4096)
    assert head.startswith(b'HTTP/1.1 200'), head
    return s
for _ in range(count):
    if what == 'connect':
        t = time.perf_counter(); s = connect(); s.sendall(b'x'); s.recv(1); dt = time.perf_counter() - t
        s.close(); print(dt * 1e6)
    else:
        chunk = b'\0' * 65536; s = connect(); t = time.perf_counter()
        for _ in range(size // 65536): s.sendall(chunk)
        s.shutdown(socket.SHUT_WR); reply = b''
        while True:
            r = s.recv(64)
            if not r: break
            reply += r
        dt = time.perf_counter() - t; assert int(reply) == size, reply
        s.close(); print(size / dt / 1e6)
`;

function runDirect(args) {
  return new Promise((resolve, reject) => {
    execFile(PYTHON, ['-c', CLIENT, ...args], { maxBuffer: 1 << 20 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${error.message}: ${stderr}`));
      else resolve(stdout.trim().split('\n').map(Number));
    });
  });
}

/** `build`: the cordon module to run under (bench/compare.js passes another build's). */
async function runMediated(args, port, build = { spawnIsolated, readOnly }) {
  // The byte and stream quotas are raised: the bench moves streams × 64 MiB in one run.
  const policy = {
    ...build.readOnly(),
    network: { mode: 'mediated', allow: [{ protocol: 'tcp', host: '127.0.0.1', port, allowPrivateAddresses: true }] },
    resources: { ...build.readOnly().resources, networkBytesOut: 2 ** 40, networkStreams: 100000 },
  };
  const execution = build.spawnIsolated([PYTHON, '-c', CLIENT, ...args], { policy });
  execution.protocol.resume();
  let out = '';
  execution.stderr.on('data', (d) => { out += d; });
  const { returncode } = await execution.wait();
  if (returncode !== 0) throw new Error(`mediated client exited ${returncode}: ${out}`);
  return out.trim().split('\n').map(Number);
}

async function timeSpawn(policy) {
  const started = nowMs();
  const execution = spawnIsolated(['/bin/true'], { policy });
  execution.protocol.resume();
  execution.stderr.resume();
  const { returncode } = await execution.wait();
  if (returncode !== 0) throw new Error(`spawnIsolated(/bin/true) exited ${returncode}`);
  return nowMs() - started;
}

async function network({ streams, megabytes, connects, coldIterations }) {
  const server = await startServer();
  const port = server.address().port;
  try {
    const size = megabytes * 1024 * 1024;
    const tput = ['throughput', String(port), String(streams), String(size)];
    const lat = ['connect', String(port), String(connects), '0'];
    const direct = await runDirect(['direct', ...tput]);
    const proxied = await runMediated(['proxy', ...tput], port);
    const directConnect = await runDirect(['direct', ...lat]);
    const proxiedConnect = await runMediated(['proxy', ...lat], port);
    const engineConnect = await runMediated(['engine', ...lat], port);
    const mediated = { ...readOnly(), network: { mode: 'mediated', allow: [`127.0.0.1:${port}`] } };
    const cold = { none: [], mediated: [] };
    for (let i = 0; i < coldIterations; i += 1) {
      cold.none.push(await timeSpawn(readOnly()));
      cold.mediated.push(await timeSpawn(mediated));
    }
    return [
      ...sectionRows(`8 network throughput (${megabytes} MiB)`, 'MB/s', [
        ['direct loopback (python3, host)', direct], ['cordon proxied (python3, CONNECT)', proxied],
      ]),
      ...sectionRows('8 network connect+1B echo', 'µs', [
        ['direct loopback (python3, host)', directConnect], ['cordon proxied (python3, CONNECT)', proxiedConnect],
        ['engine socket alone (python3, CONNECT, no relay)', engineConnect],
      ]),
      ...sectionRows('8 network cold start', 'ms', [
        ['spawnIsolated /bin/true, network none', cold.none], ['spawnIsolated /bin/true, mediated', cold.mediated],
      ]),
    ];
  } finally {
    server.close();
  }
}

// Section 8b, the engine's cost (issue 19): the provider's (this Node
// process's) threads, descriptors, RSS and CPU while sandboxes hold N idle
// fd-4 streams — half of them half-closed — to a holder process that
// accepts and never answers (its descriptors are not the provider's), and
// the time from stop() to wait() settling with them open. And the
// provider's RSS per stalled stream: every stream full both ways — the
// holder pushes what its socket takes and never reads, the program pushes
// what its stream takes and never reads — so the engine holds, per stream,
// a buffer each way it cannot write (documented: at most 64 KiB each).

// argv[1] 'push': each accepted connection is sent what its socket takes.
const HOLDER = String.raw`
import resource, socket, sys
push = len(sys.argv) > 1 and sys.argv[1] == 'push'
hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
srv = socket.socket()
if push:
    # Accepted sockets inherit these: a small window (what the engine can
    # push upstream is bounded) and room to push ~1 MiB at once downstream.
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 512 << 10)
srv.bind(('127.0.0.1', 0)); srv.listen(4096)
print(srv.getsockname()[1], flush=True)
held = []
block = b'\0' * (2 << 20)
while True:
    c = srv.accept()[0]
    if push:
        c.setblocking(False)
        try: c.send(block)
        except BlockingIOError: pass
    held.append(c)
`;

// argv[3] 'push': each stream is written to until it takes no more, never read.
const OPENER = String.raw`
import socket, sys, time
port, n = int(sys.argv[1]), int(sys.argv[2])
push = len(sys.argv) > 3 and sys.argv[3] == 'push'
ch = socket.socket(fileno=4)
host = b'127.0.0.1'
req = b'MECQ\x01\x01' + port.to_bytes(2, 'big') + len(host).to_bytes(2, 'big') + host
keep = []
for i in range(n):
    ch.send(req)
    msg, fds, _, _ = socket.recv_fds(ch, 16, 1)
    if msg[5] != 0: sys.exit(10 + msg[5])
    s = socket.socket(fileno=fds[0])
    if push:
        s.setblocking(False)
        try:
            for _ in range(32): s.send(b'\0' * 65536)  # at most 2 MiB
        except BlockingIOError: pass
    elif i % 2: s.shutdown(socket.SHUT_WR)
    keep.append(s)
sys.stderr.write('ready\n'); sys.stderr.flush()
time.sleep(3600)
`;

function startHolder(push = false) {
  const child = spawn(PYTHON, ['-c', HOLDER, ...(push ? ['push'] : [])], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.stdout.once('data', (d) => resolve({ child, port: Number(String(d).trim()) }));
    child.once('error', reject);
  });
}

function providerNow() {
  const status = fs.readFileSync('/proc/self/status', 'utf8');
  return {
    threads: fs.readdirSync('/proc/self/task').length,
    fds: fs.readdirSync('/proc/self/fd').length,
    rssKiB: Number(/VmRSS:\s+(\d+)/.exec(status)[1]),
  };
}

/** One mediated run holding `n` fd-4 streams; resolves once they are all open. */
function holdStreams(port, n, push = false) {
  const policy = {
    ...readOnly(),
    network: { mode: 'mediated', frontend: 'fd4', allow: [{ protocol: 'tcp', host: '127.0.0.1', port, allowPrivateAddresses: true }] },
    resources: { ...readOnly().resources, openFiles: n + 64, networkStreams: n + 1, networkConcurrentStreams: n + 1, networkBytesOut: 2 ** 40, networkBytesIn: 2 ** 40 },
  };
  const execution = spawnIsolated([PYTHON, '-c', OPENER, String(port), String(n), ...(push ? ['push'] : [])], { policy });
  execution.protocol.resume();
  let err = '';
  return new Promise((resolve, reject) => {
    execution.stderr.on('data', (d) => {
      err += d;
      if (err.includes('ready\n')) resolve(execution);
    });
    execution.wait().then((r) => reject(new Error(`opener exited ${r.returncode} before ready: ${err}`)), reject);
  });
}

/** `runs` runs × `n` streams: the provider's figures while they idle, then stop → settled. */
async function costSample(port, runs, n, idleMs, push = false) {
  const executions = await Promise.all(Array.from({ length: runs }, () => holdStreams(port, n, push)));
  await new Promise((r) => setTimeout(r, push ? 1000 : 200)); // pushed bytes settle into the buffers
  const held = providerNow();
  const cpu = process.cpuUsage();
  await new Promise((r) => setTimeout(r, idleMs));
  const spent = process.cpuUsage(cpu);
  const cpuMsPerS = (spent.user + spent.system) / 1000 / (idleMs / 1000);
  const stopped = nowMs();
  await Promise.all(executions.map((e) => { e.stop(); return e.wait(); }));
  return { ...held, cpuMsPerS, settleMs: nowMs() - stopped };
}

/**
 * Provider RSS per stream with `n` streams full both ways, against an idle
 * run, medians of `iterations`. Each sample runs in a fresh Node process:
 * in this one, pages freed by earlier sections stay resident and are
 * reused, so an RSS delta here would read ~0 whatever the engine held.
 */
async function stalledCost({ stalled, iterations, idleMs }) {
  const rss = [];
  const fds = [];
  for (const n of stalled) {
    const samples = [];
    for (let i = 0; i < iterations; i += 1) {
      const script = `require(${JSON.stringify(__filename)}).stalledSample(${n}, ${idleMs}).then((v) => console.log(JSON.stringify(v)))`;
      const out = await new Promise((resolve, reject) => {
        execFile(process.execPath, ['-e', script], (error, stdout, stderr) => (error ? reject(new Error(`${error.message}: ${stderr}`)) : resolve(stdout)));
      });
      samples.push(JSON.parse(out.trim()));
    }
    const name = `1 run x ${n} streams full both ways`;
    rss.push([name, samples.map((v) => v.rssKiB)]);
    fds.push([name, samples.map((v) => v.fds)]);
  }
  return [
    ...sectionRows('8 engine RSS per stalled stream', 'KiB', rss),
    ...sectionRows('8 engine fds per stalled stream', 'fds', fds),
  ];
}

/**
 * In a fresh process, per stream, with `n` streams full both ways against
 * an idle run: provider RSS (KiB) and descriptors (the relay's pipe, where
 * a direction is spliced, is two more per stalled direction).
 */
async function stalledSample(n, idleMs) {
  const { child, port } = await startHolder(true);
  try {
    const base = await costSample(port, 1, 0, idleMs);
    const full = await costSample(port, 1, n, idleMs, true);
    return { rssKiB: (full.rssKiB - base.rssKiB) / n, fds: (full.fds - base.fds) / n };
  } finally {
    child.kill();
  }
}

async function engineCost({ counts, runs, perRun, iterations, idleMs, stalled }) {
  const { child, port } = await startHolder();
  try {
    const shapes = [[1, 0, 'idle run, 0 streams'], ...counts.map((n) => [1, n, `1 run x ${n} streams`]), [runs, perRun, `${runs} runs x ${perRun} streams`]];
    const samples = [];
    for (const [r, n, name] of shapes) {
      const list = [];
      for (let i = 0; i < iterations; i += 1) list.push(await costSample(port, r, n, idleMs));
      samples.push({ name, streams: r * n, list });
    }
    const pick = (key) => samples.map((s) => [s.name, s.list.map((x) => x[key])]);
    const base = samples[0].list;
    const perStream = samples.slice(1).map((s) => [s.name, s.list.map((x, i) => (x.rssKiB - base[i % base.length].rssKiB) / s.streams)]);
    return [
      ...sectionRows('8 engine provider threads', 'threads', pick('threads')),
      ...sectionRows('8 engine provider fds', 'fds', pick('fds')),
      ...sectionRows('8 engine provider RSS', 'KiB', pick('rssKiB')),
      ...sectionRows('8 engine RSS per idle stream', 'KiB', perStream),
      ...sectionRows('8 engine provider CPU, streams stalled/half-closed', 'ms/s', pick('cpuMsPerS')),
      ...sectionRows('8 engine stop -> settled', 'ms', pick('settleMs')),
      ...(await stalledCost({ stalled, iterations, idleMs })),
    ];
  } finally {
    child.kill();
  }
}

/**
 * bench/compare.js's network rows: `n` samples of proxied connect + 1-byte
 * echo (µs) or proxied throughput of 32 MiB streams (MB/s) through the
 * build `cordon`, or of the direct baseline when `cordon` is null.
 */
async function compareSamples(cordon, what, n) {
  const server = await startServer();
  const port = server.address().port;
  try {
    const args = what === 'connect' ? ['connect', String(port), String(n), '0'] : ['throughput', String(port), String(n), String(32 << 20)];
    return cordon ? await runMediated(['proxy', ...args], port, cordon) : await runDirect(['direct', ...args]);
  } finally {
    server.close();
  }
}

module.exports = { network, engineCost, stalledSample, compareSamples };
