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
module.exports = { PKG, cordon, py, fds, threads, rssMiB, snap, delayMonitor, sleep, within };
