'use strict';
// Round 14 helper: the package (R14_PKG or this tree), a python program in a sandbox,
// event-loop delay, provider fd/thread/RSS counts.
const path = require('node:path');
const fs = require('node:fs');
const { monitorEventLoopDelay } = require('node:perf_hooks');
const PKG = process.env.R14_PKG || path.resolve(__dirname, '../../../..');
const cordon = require(PKG);

/** spawnIsolated of `python3 -c CODE args…`; stderr collected into ex.text. */
function py(code, args = [], opts = {}) {
  const ex = cordon.spawnIsolated(['/usr/bin/python3', '-c', code, ...args.map(String)], { policy: cordon.readOnly(), ...opts });
  ex.text = '';
  ex.stderr.on('data', (d) => { ex.text += d; });
  return ex;
}
function fds() { return fs.readdirSync('/proc/self/fd').length; }
function threads() { return fs.readdirSync('/proc/self/task').length; }
function rssMiB() { return Math.round(process.memoryUsage().rss / 1048576); }
function snap() { return { fds: fds(), threads: threads(), rssMiB: rssMiB() }; }
function delayMonitor() { const h = monitorEventLoopDelay({ resolution: 5 }); h.enable(); return { stop() { h.disable(); return { maxMs: Math.round(h.max / 1e6), p99Ms: Math.round(h.percentile(99) / 1e6) }; } }; }
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** Resolves to true if p settles within ms. */
function within(p, ms) { return Promise.race([Promise.resolve(p).then(() => true, () => true), sleep(ms).then(() => false)]); }
/**
 * Whether this kernel refuses, at the sender, a descriptor a sandbox sends
 * over fd 4 (the fd-4 channel's engine end has SO_PASSRIGHTS off: Linux
 * 6.16+; docs/security.md). Probes whose attack is descriptors passed over fd 4
 * test the provider's closing of them (crates/passed-fds) only where they can
 * arrive: where they cannot, one mediated run shows the refusal (EPERM) and
 * the probe ends there instead of waiting out its sandboxes' timeouts.
 */
async function fd4RefusesDescriptors() {
  const code = String.raw`
import socket, struct, array, os, sys
c4 = socket.socket(fileno=4)
host = b'example.com'
req = struct.pack('>IBBHH', 0x4d454351, 1, 1, 443, len(host)) + host
n = os.open('/dev/null', os.O_RDONLY)
try:
    c4.sendmsg([req], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', [n]))]); print('fd4: passed', file=sys.stderr)
except PermissionError: print('fd4: refused', file=sys.stderr)
`;
  const ex = py(code, [], { policy: { ...cordon.readOnly(), network: { mode: 'mediated', allow: ['example.com:443'] } } });
  ex.protocol.resume();
  await ex.wait();
  const answer = ex.text.match(/fd4: (passed|refused)/);
  if (!answer) throw new Error(`the fd-4 refusal check gave no answer: ${ex.text.slice(-500)}`);
  return answer[1] === 'refused';
}
/** Ends a probe of descriptors passed over fd 4 with `held: …` where this kernel refuses them at the sender. */
async function endIfFd4Refuses() {
  if (!(await fd4RefusesDescriptors())) return;
  console.log('held: this kernel refuses descriptors sent over fd 4 at the sender (EPERM), so none reaches the provider');
  process.exit(0);
}
module.exports = { PKG, cordon, py, fds, threads, rssMiB, snap, delayMonitor, sleep, within, fd4RefusesDescriptors, endIfFd4Refuses };
