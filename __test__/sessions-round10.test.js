'use strict';

// White-box round 10 against the round-9 session fixes (issue 21;
// __test__/security/findings/round10/README.md): the network-budget check
// reads a socket table the sandbox controls (R10-2). R10-3 (the commands
// digest's order) is in sessions-lifecycle.test.js, R10-4 (more shell
// credential forms) in sessions-hooks.test.js.

const test = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const { proxyListening, MAX_TABLE_BYTES } = require('../lib/sessions/network-budget');
const { eventually } = require('./spawn-support');

const skip = process.geteuid() === 0 ? false : 'needs root (a network namespace of its own: unshare -n)';

/**
 * A process in a network namespace of its own listening on 127.0.0.1 at
 * `ports` (each a TCP listener); resolves once they all listen.
 */
async function listenerIn(t, ports) {
  const script = `
import socket, sys, time
socket.socket().close()
held = []
for port in ${JSON.stringify(ports)}:
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(('127.0.0.1', port)); s.listen(1); held.append(s)
print('ready', flush=True)
time.sleep(300)
`;
  const child = spawn('unshare', ['-n', 'sh', '-c', 'ip link set lo up && exec /usr/bin/python3 -c "$0"', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.after(() => child.kill('SIGKILL'));
  let out = '';
  child.stdout.on('data', (chunk) => { out += chunk; });
  assert.ok(await eventually(() => out.includes('ready'), 20_000), 'the listeners are up');
  return child.pid;
}

test('the network-budget check reads at most MAX_TABLE_BYTES of a sandbox-controlled socket table: a huge table is unknown (null), never read whole or judged "spent" (round 10, R10-2)', { skip }, async (t) => {
  // ~150 bytes per line: enough listeners to pass the bound, the proxy's port among the last.
  const count = Math.ceil((MAX_TABLE_BYTES / 150) * 1.5);
  const ports = Array.from({ length: count }, (_, i) => 20_000 + i).concat([3128]);
  const pid = await listenerIn(t, ports);
  assert.equal(await proxyListening(pid), null);
});

test('control: a small table with the proxy listening reads true, without it false', { skip }, async (t) => {
  assert.equal(await proxyListening(await listenerIn(t, [3128, 8080])), true);
  assert.equal(await proxyListening(await listenerIn(t, [8080])), false);
});
