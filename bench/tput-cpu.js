'use strict';

// Issue 19's throughput goal, second method: CPU per byte instead of wall
// time. The same python3 client sends 32 MiB streams to a sink in this
// process, directly and through the mediated engine (HTTP CONNECT on the
// sandbox's 127.0.0.1:3128, served by the engine in this process). For each
// stream it reports the wall throughput, the client's own CPU (the python
// process's user+system over the transfer, printed by itself) and this
// process's CPU over the same transfer (the sink, and when proxied the
// engine's threads), bracketed by the sink's first byte and its end.
//
// Reading it: on a host with C cores busy only with the stream, throughput
// is at most C / (CPU seconds per byte). If the direct stream already keeps
// the cores busy (its "cores used" near C), the proxied/direct throughput
// ratio cannot exceed direct CPU per byte / proxied CPU per byte, whatever
// the engine does with its own share.
//
//   node bench/tput-cpu.js [--streams 8] [--megabytes 32]

const { execFile } = require('node:child_process');
const net = require('node:net');
const os = require('node:os');
const { spawnIsolated, readOnly } = require('..');
const { quantile } = require('./stats');

const median = (values) => quantile(values, 0.5);

const PYTHON = '/usr/bin/python3';
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  return at === -1 ? fallback : Number(args[at + 1]);
};
const STREAMS = option('--streams', 8);
const SIZE = option('--megabytes', 32) * 1024 * 1024;

// One line per stream: MB/s and the client's CPU seconds over the transfer.
const CLIENT = String.raw`
import os, resource, socket, sys, time
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF); return r.ru_utime + r.ru_stime
mode, port, count, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
def connect():
    if mode == 'direct':
        return socket.create_connection(('127.0.0.1', port))
    s = socket.create_connection(('127.0.0.1', 3128))
    s.sendall(('CONNECT 127.0.0.1:%d HTTP/1.1\r\n\r\n' % port).encode())
    head = b''
    while not head.endswith(b'\r\n\r\n'):
        head += s.recv(4096)
    assert head.startswith(b'HTTP/1.1 200'), head
    return s
chunk = b'\0' * 65536
for _ in range(count):
    s = connect(); t = time.perf_counter(); c = cpu()
    for _ in range(size // 65536): s.sendall(chunk)
    s.shutdown(socket.SHUT_WR); reply = b''
    while True:
        r = s.recv(64)
        if not r: break
        reply += r
    dt = time.perf_counter() - t; e = cpu(); assert int(reply) == size, reply
    s.close(); print(size / dt / 1e6, e - c)
    time.sleep(0.05)
`;

/** A sink counting bytes; at EOF it answers the count. Each stream's CPU of this process, first byte to end, goes to `spent`. */
function startSink(spent) {
  const server = net.createServer((socket) => {
    let total = 0;
    let started = null;
    socket.on('data', (chunk) => {
      if (started === null) started = process.cpuUsage();
      total += chunk.length;
    });
    socket.on('end', () => {
      const used = process.cpuUsage(started);
      spent.push((used.user + used.system) / 1e6);
      socket.end(String(total));
    });
    socket.on('error', () => {});
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** Busy CPU seconds of the whole machine so far (/proc/stat: everything but idle and iowait, softirq included). */
function machineBusy() {
  const fields = require('node:fs').readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const [user, nice, system, , , irq, softirq, steal] = fields;
  return (user + nice + system + irq + softirq + (steal ?? 0)) / 100;
}

function parse(stdout) {
  return stdout.trim().split('\n').map((line) => line.split(' ').map(Number));
}

function direct(port) {
  return new Promise((resolve, reject) => {
    execFile(PYTHON, ['-c', CLIENT, 'direct', String(port), String(STREAMS), String(SIZE)], (error, stdout, stderr) => {
      if (error) reject(new Error(`${error.message}: ${stderr}`));
      else resolve(parse(stdout));
    });
  });
}

async function proxied(port) {
  const policy = {
    ...readOnly(),
    network: { mode: 'mediated', allow: [{ protocol: 'tcp', host: '127.0.0.1', port, allowPrivateAddresses: true }] },
    resources: { ...readOnly().resources, networkBytesOut: 2 ** 40, networkStreams: 100000 },
  };
  const execution = spawnIsolated([PYTHON, '-c', CLIENT, 'proxy', String(port), String(STREAMS), String(SIZE)], { policy });
  execution.protocol.resume();
  let out = '';
  execution.stderr.on('data', (d) => { out += d; });
  const { returncode } = await execution.wait();
  if (returncode !== 0) throw new Error(`mediated client exited ${returncode}: ${out}`);
  return parse(out);
}

async function main() {
  const spent = [];
  const server = await startSink(spent);
  const port = server.address().port;
  const rows = {};
  try {
    for (let round = 0; round < 3; round += 1) {
      for (const [name, run] of [['direct', direct], ['proxied', proxied]]) {
        spent.length = 0;
        const busy = machineBusy();
        const samples = await run(port);
        const row = (rows[name] ??= { mbps: [], client: [], host: [], machine: [] });
        // The whole machine's busy time per stream (softirq included, which
        // per-process CPU misses on loopback); counts other load too.
        row.machine.push((machineBusy() - busy) / samples.length);
        samples.forEach(([mbps, clientCpu], i) => {
          row.mbps.push(mbps);
          row.client.push(clientCpu);
          row.host.push(spent[i]);
        });
      }
    }
  } finally {
    server.close();
  }
  const mb = SIZE / 1e6;
  const summary = {};
  console.log(`${STREAMS} × ${SIZE >> 20} MiB streams × 3 rounds per mode, alternating; medians; ${os.cpus().length} cores; load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  console.log('| mode | MB/s | client CPU ms/stream | provider CPU ms/stream | CPU ns/byte | cores used | machine busy ms/stream |');
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const [name, row] of Object.entries(rows)) {
    const mbps = median(row.mbps);
    const client = median(row.client) * 1e3;
    const host = median(row.host) * 1e3;
    const nsPerByte = ((client + host) * 1e6) / SIZE;
    const wallMs = (mb / mbps) * 1e3;
    const machine = median(row.machine) * 1e3;
    summary[name] = { mbps, nsPerByte, machine };
    console.log(`| ${name} | ${mbps.toFixed(0)} | ${client.toFixed(1)} | ${host.toFixed(1)} | ${nsPerByte.toFixed(2)} | ${((client + host) / wallMs).toFixed(2)} | ${machine.toFixed(1)} |`);
  }
  const ratio = summary.proxied.mbps / summary.direct.mbps;
  const bound = summary.direct.nsPerByte / summary.proxied.nsPerByte;
  console.log(`throughput proxied/direct ${ratio.toFixed(2)}×; process CPU per byte direct/proxied ${bound.toFixed(2)}×; machine busy per stream direct/proxied ${(summary.direct.machine / summary.proxied.machine).toFixed(2)}× (either is the ratio's ceiling when the direct stream keeps the cores busy)`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
