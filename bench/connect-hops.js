'use strict';

// Where a proxied connect + 1-byte echo spends its time (issue 19): one
// python3 client times each phase of each sample — the TCP connect, the
// CONNECT request until its `200` (the relay's hop, if any, the engine's
// admission and upstream connect), and the 1-byte echo through the
// admitted stream — directly on the host and, in ONE mediated run each,
// through the proxy port and through the engine socket itself (no relay).
// Prints medians per phase and the share of the proxied total above direct.
//   node bench/connect-hops.js [SAMPLES]

const net = require('node:net');
const { execFile } = require('node:child_process');
const os = require('node:os');
const { spawnIsolated, readOnly } = require('..');

const PYTHON = '/usr/bin/python3';
const CLIENT = String.raw`
import socket, sys, time
mode, port, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for _ in range(count):
    t0 = time.perf_counter()
    if mode == 'engine':
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.connect('/.cordon/egress/engine.sock')
    else:
        s = socket.create_connection(('127.0.0.1', port if mode == 'direct' else 3128))
    t1 = time.perf_counter()
    if mode != 'direct':
        s.sendall(('CONNECT 127.0.0.1:%d HTTP/1.1\r\n\r\n' % port).encode())
        head = b''
        while not head.endswith(b'\r\n\r\n'):
            head += s.recv(1)
        assert head.startswith(b'HTTP/1.1 200'), head
    t2 = time.perf_counter()
    s.sendall(b'x'); s.recv(1)
    t3 = time.perf_counter()
    s.close()
    print('%f %f %f' % ((t1 - t0) * 1e6, (t2 - t1) * 1e6, (t3 - t2) * 1e6))
`;

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const parse = (out) => out.trim().split('\n').map((l) => l.split(' ').map(Number));

function echoServer() {
  const server = net.createServer((s) => { s.on('data', (d) => s.write(d)); s.on('error', () => {}); });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

function direct(port, count) {
  return new Promise((resolve, reject) => {
    execFile(PYTHON, ['-c', CLIENT, 'direct', String(port), String(count)], (e, out, err) => (e ? reject(new Error(err)) : resolve(parse(out))));
  });
}

async function mediated(mode, port, count) {
  const policy = {
    ...readOnly(),
    network: { mode: 'mediated', allow: [{ protocol: 'tcp', host: '127.0.0.1', port, allowPrivateAddresses: true }] },
    resources: { ...readOnly().resources, networkStreams: 100000 },
  };
  const run = spawnIsolated([PYTHON, '-c', CLIENT, mode, String(port), String(count)], { policy });
  run.protocol.resume();
  let out = '';
  run.stderr.on('data', (d) => { out += d; });
  const { returncode } = await run.wait();
  if (returncode !== 0) throw new Error(`${mode} client exited ${returncode}: ${out}`);
  return parse(out);
}

async function main() {
  const count = Number(process.argv[2] || 200);
  const server = await echoServer();
  const port = server.address().port;
  try {
    const rows = [];
    for (const [name, samples] of [
      ['direct', await direct(port, count)],
      ['proxied (port 3128)', await mediated('proxy', port, count)],
      ['engine socket alone', await mediated('engine', port, count)],
    ]) {
      const phase = (i) => median(samples.map((s) => s[i]));
      rows.push({ name, connect: phase(0), request: phase(1), echo: phase(2), total: median(samples.map((s) => s[0] + s[1] + s[2])) });
    }
    console.log(`connect-hops: medians of ${count}, µs — load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
    console.log('mode                  connect  CONNECT->200  1B echo   total  ×direct');
    for (const r of rows) {
      const f = (v) => v.toFixed(0).padStart(7);
      console.log(`${r.name.padEnd(20)} ${f(r.connect)} ${f(r.request).padStart(13)} ${f(r.echo)} ${f(r.total)}  ${(r.total / rows[0].total).toFixed(2)}`);
    }
  } finally {
    server.close();
  }
}

main().catch((e) => { console.error(e); process.exitCode = 1; });
