'use strict';

// Splicing a stream's bytes through a pipe instead of copying them would
// wait by the socket *file's* O_NONBLOCK, which another holder of the same
// file can clear (cargo run -p cordon-egress --example splice_directions);
// the relay's copy uses MSG_DONTWAIT per call. These probes stall streams
// the way a sandbox can while bytes flow both ways, on more streams than
// the supervision runtime has workers, and require that another stream of
// the same run still flows and that a stop settles within the ladder's
// bound (as in network-teardown.test.js). They cover the sockets only the
// engine holds, which such a relay may splice. (A first probe covered a
// socket handed over on the engine socket, whose other holder, the program,
// cleared O_NONBLOCK on its copy; it failed with a relay that spliced
// handed-over sockets, branch splice19-wip. Since 2026-12-06 the engine
// socket takes no descriptor from the program, so there is none to splice.)

const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnIsolated, readOnly } = require('..');
const { eventually } = require('./spawn-support');
const { loopbackServer } = require('./network-servers');

const PYTHON = '/usr/bin/python3';
const STOP = { graceMs: 500, forceMs: 500 };
const SLACK_MS = 3000;
const SETTLE_WAIT_MS = 30000;
const STALLED = 4; // the supervision runtime has 2 workers

// The program's shared part: tunnels through the proxy port, a wait until a
// socket's receive queue stops growing (the engine has filled what it can),
// and the flow check — an echo through a fresh tunnel, with a generous bound.
const PRELUDE = String.raw`
import fcntl, signal, socket, struct, termios, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the ladder climbs to SIGKILL
def request(s, port):
    s.sendall(b'CONNECT 127.0.0.1:%d HTTP/1.1\r\n\r\n' % port)
    head = b''
    while not head.endswith(b'\r\n\r\n'):
        r = s.recv(1)
        assert r, head
        head += r
    assert head.startswith(b'HTTP/1.1 200'), head
def tunnel(port):
    s = socket.create_connection(('127.0.0.1', 3128), timeout=60)
    request(s, port)
    return s
def queued(s):
    return struct.unpack('i', fcntl.ioctl(s.fileno(), termios.FIONREAD, b'\0\0\0\0'))[0]
def wait_full(s):
    last, same = -1, 0
    while same < 3:
        time.sleep(0.2)
        now = queued(s)
        same = same + 1 if now == last and now > 0 else 0
        last = now
def flows(port):
    e = tunnel(port)
    for _ in range(20):
        e.sendall(b'ping')
        got = b''
        while len(got) < 4:
            r = e.recv(4 - len(got))
            assert r, got
            got += r
    return e
keep = []
`;

/** Runs `program(push, echo)` against a push and an echo server; see assertSettled. */
async function probe(program, stalled) {
  const [push, echo] = [await loopbackServer('push'), await loopbackServer('echo')];
  try {
    assertSettled(await runProbe(program(push, echo), push, echo), stalled);
  } finally {
    push.close();
    echo.close();
  }
}

async function runProbe(program, push, echo) {
  const policy = {
    ...readOnly(),
    network: { mode: 'mediated', allow: [push.port, echo.port].map((port) => ({ protocol: 'tcp', host: '127.0.0.1', port, allowPrivateAddresses: true })) },
    resources: { ...readOnly().resources, networkBytesIn: 2 ** 40, networkBytesOut: 2 ** 40 },
  };
  const execution = spawnIsolated([PYTHON, '-c', PRELUDE + program], { policy, stop: STOP });
  execution.protocol.resume();
  let out = '';
  execution.stderr.on('data', (d) => { out += d; });
  const ended = execution.wait();
  let exited = false;
  ended.then(() => { exited = true; }, () => { exited = true; });
  // The program prints 'flowed' once a stream opened after the stalled ones
  // carried 20 echoes; if the engine's workers were blocked it never would.
  await eventually(() => out.includes('flowed') || exited, 60000);
  const stopped = process.hrtime.bigint();
  execution.stop();
  // Not awaited without a bound: with the engine's workers blocked the stop
  // itself cannot climb its ladder, and the run would end only when the
  // program's own sleep does.
  const settled = await Promise.race([ended, new Promise((resolve) => setTimeout(resolve, SETTLE_WAIT_MS, null))]);
  const settledMs = Number(process.hrtime.bigint() - stopped) / 1e6;
  assert.ok(settled !== null, `the run had not settled ${SETTLE_WAIT_MS} ms after stop(): ${out}`);
  return { out, result: settled, settledMs };
}

function assertSettled({ out, result, settledMs }, stalled) {
  assert.match(out, /stalled/, out);
  assert.match(out, /flowed/, `a stream opened after ${stalled} stalled ones never carried its echoes: ${out}`);
  const bound = STOP.graceMs + 2 * STOP.forceMs + SLACK_MS;
  assert.ok(settledMs <= bound, `settled ${settledMs.toFixed(0)} ms after stop(), bound ${bound} ms`);
  const allowed = result.networkReceipts.filter((r) => r.result === 'allowed');
  assert.equal(allowed.length, stalled + 1, JSON.stringify(result.networkReceipts));
}

test('streams whose program blocks its own sockets and stops reading block no engine worker', async () => {
  // Proxy tunnels (the engine accepted them: only the engine holds its
  // side) and fd-4 streams (the engine's end of a socketpair): the program
  // makes its own ends blocking, sends a byte and never reads.
  await probe((push, echo) => String.raw`
host = b'127.0.0.1'
fd4 = socket.socket(fileno=4)
for i in range(${STALLED}):
    if i % 2 == 0:
        s = tunnel(${push.port})
    else:
        fd4.send(b'MECQ\x01\x01' + (${push.port}).to_bytes(2, 'big') + len(host).to_bytes(2, 'big') + host)
        msg, fds, _, _ = socket.recv_fds(fd4, 16, 1)
        assert msg[5] == 0, msg
        s = socket.socket(fileno=fds[0])
    s.setblocking(True)
    s.sendall(b'x')
    keep.append(s)
for s in keep: wait_full(s)
print('stalled', flush=True)
keep.append(flows(${echo.port}))
print('flowed', flush=True)
time.sleep(150)
`, STALLED);
});
