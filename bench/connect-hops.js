'use strict';

// Where a proxied connect + 1-byte echo spends its time (issue 19, issue 23
// item 5): one python3 client times each phase of each sample — the TCP
// connect, the CONNECT request until the first byte of its `200` (the
// engine's accept, request read, admission and upstream connect, reply),
// the rest of the `200` head, and the 1-byte echo through the admitted
// stream — directly on the host and, in ONE mediated run each, through the
// proxy port and through the engine socket itself (no relay).
//
// The provider side is counted too: the CPU time (schedstat) and the
// context switches of the threads the engine runs on (`cordon-egress…`, its
// runtime's thread and blocking pool; before 2026-12-06 the supervision
// runtime's `cordon-supervis…` workers, counted as well) over each
// mediated run, minus a mediated run of 0 samples (the run's own set-up and
// teardown), per connect. A voluntary switch is a worker going to sleep
// (and so a later wake-up); involuntary ones are a saturated host taking
// the core away.
//   node bench/connect-hops.js [SAMPLES] [--head byte|chunk]
// --head byte (the default; what bench section 8 did before 2026-12-02)
// reads the `200` one recv(1) at a time; chunk reads it with recv(4096)
// until CRLF CRLF (the engine sends nothing after the head until the
// client does, so nothing is over-read).

const fs = require('node:fs');
const net = require('node:net');
const { execFile } = require('node:child_process');
const os = require('node:os');
const { spawnIsolated, readOnly } = require('..');

const PYTHON = '/usr/bin/python3';
const CLIENT = String.raw`
import socket, sys, time
mode, port, count, head_read = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
for _ in range(count):
    t0 = time.perf_counter()
    if mode == 'engine':
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.connect('/.cordon/egress/engine.sock')
    else:
        s = socket.create_connection(('127.0.0.1', port if mode == 'direct' else 3128))
    t1 = time.perf_counter(); t2 = t1
    if mode != 'direct':
        s.sendall(('CONNECT 127.0.0.1:%d HTTP/1.1\r\n\r\n' % port).encode())
        head = s.recv(1 if head_read == 'byte' else 4096)
        t2 = time.perf_counter()
        while not head.endswith(b'\r\n\r\n'):
            head += s.recv(1 if head_read == 'byte' else 4096)
        assert head.startswith(b'HTTP/1.1 200'), head
    t3 = time.perf_counter()
    s.sendall(b'x'); s.recv(1)
    t4 = time.perf_counter()
    s.close()
    print('%f %f %f %f' % ((t1 - t0) * 1e6, (t2 - t1) * 1e6, (t3 - t2) * 1e6, (t4 - t3) * 1e6))
`;

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const parse = (out) => out.trim().split('\n').filter(Boolean).map((l) => l.split(' ').map(Number));

/** CPU ns and context switches of this process's engine and supervision threads. */
function engineThreads() {
  const total = { cpuNs: 0, voluntary: 0, involuntary: 0 };
  for (const tid of fs.readdirSync('/proc/self/task')) {
    try {
      const dir = `/proc/self/task/${tid}`;
      const comm = fs.readFileSync(`${dir}/comm`, 'utf8');
      if (!comm.startsWith('cordon-supervis') && !comm.startsWith('cordon-egress')) continue;
      total.cpuNs += Number(fs.readFileSync(`${dir}/schedstat`, 'utf8').split(' ')[0]);
      const status = fs.readFileSync(`${dir}/status`, 'utf8');
      total.voluntary += Number(/voluntary_ctxt_switches:\s+(\d+)/.exec(status)[1]);
      total.involuntary += Number(/nonvoluntary_ctxt_switches:\s+(\d+)/.exec(status)[1]);
    } catch {
      // a blocking-pool thread that exited meanwhile
    }
  }
  return total;
}

function echoServer() {
  const server = net.createServer((s) => { s.on('data', (d) => s.write(d)); s.on('error', () => {}); });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

function direct(port, count, head) {
  return new Promise((resolve, reject) => {
    execFile(PYTHON, ['-c', CLIENT, 'direct', String(port), String(count), head], (e, out, err) => (e ? reject(new Error(err)) : resolve(parse(out))));
  });
}

/** Samples of one mediated run, and the engine threads' use over it. */
async function mediated(mode, port, count, head) {
  const policy = {
    ...readOnly(),
    network: { mode: 'mediated', allow: [{ protocol: 'tcp', host: '127.0.0.1', port, allowPrivateAddresses: true }] },
    resources: { ...readOnly().resources, networkStreams: 100000 },
  };
  const before = engineThreads();
  const run = spawnIsolated([PYTHON, '-c', CLIENT, mode, String(port), String(count), head], { policy });
  run.protocol.resume();
  let out = '';
  run.stderr.on('data', (d) => { out += d; });
  const { returncode } = await run.wait();
  const after = engineThreads();
  if (returncode !== 0) throw new Error(`${mode} client exited ${returncode}: ${out}`);
  const used = Object.fromEntries(Object.keys(before).map((k) => [k, after[k] - before[k]]));
  return { samples: parse(out), used };
}

async function main() {
  const count = Number(process.argv.find((a) => /^\d+$/.test(a)) || 200);
  const headAt = process.argv.indexOf('--head');
  const head = headAt > 0 ? process.argv[headAt + 1] : 'byte';
  const server = await echoServer();
  const port = server.address().port;
  try {
    // The engine's cost of a run with no connect (set-up, teardown), twice.
    const idle = [await mediated('proxy', port, 0, head), await mediated('proxy', port, 0, head)];
    const idleOf = (k) => (idle[0].used[k] + idle[1].used[k]) / 2;
    const rows = [];
    const runs = [
      ['direct', { samples: await direct(port, count, head), used: null }],
      ['proxied (port 3128)', await mediated('proxy', port, count, head)],
      ['engine socket alone', await mediated('engine', port, count, head)],
    ];
    for (const [name, { samples, used }] of runs) {
      const phase = (i) => median(samples.map((s) => s[i]));
      const per = (k) => (used ? (used[k] - idleOf(k)) / count : NaN);
      rows.push({
        name, connect: phase(0), first: phase(1), rest: phase(2), echo: phase(3),
        total: median(samples.map((s) => s[0] + s[1] + s[2] + s[3])),
        cpuUs: per('cpuNs') / 1000, voluntary: per('voluntary'), involuntary: per('involuntary'),
      });
    }
    console.log(`connect-hops: medians of ${count}, µs, head read ${head} — load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
    console.log('mode                 connect  CONNECT->1st byte  rest of head  1B echo   total  ×direct | engine CPU µs/connect  sleeps/connect  preempted/connect');
    for (const r of rows) {
      const f = (v, w = 7) => (Number.isNaN(v) ? '—' : v.toFixed(0)).padStart(w);
      const g = (v, w) => (Number.isNaN(v) ? '—' : v.toFixed(2)).padStart(w);
      console.log(`${r.name.padEnd(20)} ${f(r.connect)} ${f(r.first, 18)} ${f(r.rest, 13)} ${f(r.echo, 8)} ${f(r.total)}  ${(r.total / rows[0].total).toFixed(2).padStart(7)} | ${g(r.cpuUs, 21)} ${g(r.voluntary, 15)} ${g(r.involuntary, 18)}`);
    }
  } finally {
    server.close();
  }
}

main().catch((e) => { console.error(e); process.exitCode = 1; });
