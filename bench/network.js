'use strict';

// Section 7, the mediated network (issue 13): the same python3 client
// measured directly on the host and inside a mediated sandbox through the
// proxy (HTTP CONNECT via the relay and the engine), against a loopback
// sink/echo server on the host; and the cold start of a mediated run
// against network "none". Loopback only; the client times itself, so
// interpreter start-up is not in the throughput or connect figures.

const { execFile } = require('node:child_process');
const net = require('node:net');
const { spawnIsolated, readOnly } = require('..');
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

// The client: `mode` direct|proxy, `what` throughput|connect. Prints one number per sample.
const CLIENT = String.raw`
import socket, sys, time
mode, what, port, count, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
def connect():
    if mode == 'direct':
        return socket.create_connection(('127.0.0.1', port))
    s = socket.create_connection(('127.0.0.1', 3128))
    s.sendall(('CONNECT 127.0.0.1:%d HTTP/1.1\r\n\r\n' % port).encode())
    head = b''
    while not head.endswith(b'\r\n\r\n'):
        head += s.recv(1)
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

async function runMediated(args, port) {
  // The byte and stream quotas are raised: the bench moves streams × 64 MiB in one run.
  const policy = {
    ...readOnly(),
    network: { mode: 'mediated', allow: [{ protocol: 'tcp', host: '127.0.0.1', port, allowPrivateAddresses: true }] },
    resources: { ...readOnly().resources, networkBytesOut: 2 ** 40, networkStreams: 100000 },
  };
  const execution = spawnIsolated([PYTHON, '-c', CLIENT, ...args], { policy });
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
      ]),
      ...sectionRows('8 network cold start', 'ms', [
        ['spawnIsolated /bin/true, network none', cold.none], ['spawnIsolated /bin/true, mediated', cold.mediated],
      ]),
    ];
  } finally {
    server.close();
  }
}

module.exports = { network };
