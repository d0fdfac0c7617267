'use strict';

// Issue 19: a stopped run settles within the stop ladder's bound whatever
// its streams were doing. The engine's teardown bound is derived from the
// ladder (its forced rung, `forceMs`: crates/launcher/src/stop_ladder.rs),
// so the whole stop is bounded by graceMs + forceMs (the ladder) + forceMs
// (the engine's tasks, a bound reached only if the runtime's workers are all
// blocked elsewhere) + the receipt. A correctness check with a generous
// margin (3 s for a loaded machine), not a measurement.

const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnIsolated, readOnly } = require('..');
const { eventually } = require('./spawn-support');
const { loopbackServer: server } = require('./network-servers');

const PYTHON = '/usr/bin/python3';
const STOP = { graceMs: 500, forceMs: 500 };
const SLACK_MS = 3000;

test('a stop settles within the ladder\'s bound with streams in the handshake, stalled full both ways, and half-closed', async () => {
  const [push, silent] = [await server('push'), await server('silent')];
  try {
    const code = `
import signal, socket, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the ladder climbs to SIGKILL
def tunnel(port):
    s = socket.create_connection(('127.0.0.1', 3128), timeout=10)
    s.sendall(b'CONNECT 127.0.0.1:%d HTTP/1.1\\r\\n\\r\\n' % port)
    head = b''
    while not head.endswith(b'\\r\\n\\r\\n'): head += s.recv(1)
    assert head.startswith(b'HTTP/1.1 200'), head
    return s
keep = []
h = socket.create_connection(('127.0.0.1', 3128)); h.sendall(b'CONNECT 127.0.0.1:'); keep.append(h)  # mid-handshake
full = tunnel(${push.port}); full.setblocking(False)                          # never read, written to
try:
    for _ in range(64): full.send(b'x' * 65536)
except BlockingIOError: pass
keep.append(full)
half = tunnel(${silent.port}); half.shutdown(socket.SHUT_WR); keep.append(half)  # half-closed, upstream silent
s = socket.socket(fileno=4)                                                # an fd-4 stream, never read
host = b'127.0.0.1'
s.send(b'MECQ\\x01\\x01' + (${push.port}).to_bytes(2, 'big') + len(host).to_bytes(2, 'big') + host)
msg, fds, _, _ = socket.recv_fds(s, 16, 1)
assert msg[5] == 0, msg
keep.append(socket.socket(fileno=fds[0]))
print('ready', flush=True)
time.sleep(600)
`;
    const policy = {
      ...readOnly(),
      network: { mode: 'mediated', allow: [push.port, silent.port].map((port) => ({ protocol: 'tcp', host: '127.0.0.1', port, allowPrivateAddresses: true })) },
      resources: { ...readOnly().resources, networkBytesIn: 2 ** 40, networkBytesOut: 2 ** 40 },
    };
    const execution = spawnIsolated([PYTHON, '-c', code], { policy, stop: STOP });
    execution.protocol.resume();
    let out = '';
    execution.stderr.on('data', (d) => { out += d; });
    assert.ok(await eventually(() => out.includes('ready'), 20000), out);
    await new Promise((r) => setTimeout(r, 300)); // the pushed bytes fill the buffers
    const stopped = process.hrtime.bigint();
    execution.stop();
    const result = await execution.wait();
    const settledMs = Number(process.hrtime.bigint() - stopped) / 1e6;
    const bound = STOP.graceMs + 2 * STOP.forceMs + SLACK_MS;
    assert.ok(settledMs <= bound, `settled ${settledMs.toFixed(0)} ms after stop(), bound ${bound} ms`);
    assert.equal(result.receipt.stop.forcedStopAttempted, true, 'SIGTERM was ignored: the ladder reached SIGKILL');
    // Every attempt has its receipt; the three that reached an upstream are allowed.
    assert.equal(result.networkReceipts.length, 4, JSON.stringify(result.networkReceipts));
    assert.equal(result.networkReceipts.filter((r) => r.result === 'allowed').length, 3, JSON.stringify(result.networkReceipts));
    assert.ok(await eventually(() => push.open.size + silent.open.size === 0, 5000), 'every upstream connection is closed');
  } finally {
    push.close();
    silent.close();
  }
});
