'use strict';
// Misbehaving loopback upstreams (127.0.0.1 only), each counting connections.
const net = require('node:net');
const { spawn } = require('node:child_process');

const CHUNK = Buffer.alloc(65536, 0x61);

function flood(s) {
  const go = () => { while (!s.destroyed && s.write(CHUNK)); };
  s.on('drain', go);
  go();
}

/** name → per-connection behaviour. */
const MODES = {
  echo: (s) => s.pipe(s),
  flood: (s) => { s.resume(); flood(s); },                      // reads and discards, writes forever
  sink: (s) => { s.pause(); },
  discard: (s) => { s.resume(); },                              // reads and drops, never writes                                  // never reads, never writes
  floodsink: (s) => { s.pause(); flood(s); },                   // never reads, writes forever
  floodrst: (s) => { s.resume(); flood(s); setTimeout(() => s.resetAndDestroy(), 1000); },
  half: (s) => { s.pause(); s.end(); },                         // FIN at once, never reads
  rstnow: (s) => { s.resetAndDestroy(); },
  slow: (s) => { s.resume(); setTimeout(() => { if (!s.destroyed) s.end('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok'); }, 3000); },
  drip: (s) => { s.resume(); const t = setInterval(() => { if (s.destroyed) clearInterval(t); else s.write('x'); }, 1); s.on('close', () => clearInterval(t)); },
};

async function start(mode) {
  const conns = { count: 0, sockets: new Set() };
  const server = net.createServer((s) => {
    conns.count++;
    conns.sockets.add(s);
    s.on('error', () => {});
    s.on('close', () => conns.sockets.delete(s));
    MODES[mode](s);
  });
  await new Promise((res) => server.listen(0, '127.0.0.1', res));
  return {
    port: server.address().port, conns,
    close: () => new Promise((res) => { for (const s of conns.sockets) s.destroy(); server.close(() => res()); }),
  };
}

/** A listener whose accept queue is full (never accepts): a connect to it hangs in SYN_SENT. */
async function backlog() {
  const py = spawn('/usr/bin/python3', ['-c', `
import socket, time, sys
l = socket.socket(); l.bind(('127.0.0.1', 0)); l.listen(0)
print(l.getsockname()[1], flush=True)
held = []
for i in range(4):
    c = socket.socket(); c.setblocking(False)
    try: c.connect(('127.0.0.1', l.getsockname()[1]))
    except BlockingIOError: pass
    held.append(c); time.sleep(0.05)
time.sleep(100000)
`], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise((res) => py.stdout.once('data', (d) => res(Number(String(d).trim()))));
  await new Promise((r) => setTimeout(r, 500));
  return { port, conns: { count: NaN }, close: async () => { py.kill('SIGKILL'); } };
}

module.exports = { start, backlog, MODES };
