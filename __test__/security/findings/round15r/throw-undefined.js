'use strict';
// R15r: a protocol 'data' listener that throws a value whose typeof is
// 'undefined' (throw undefined; also a rejected-thenable style `throw void 0`).
// src/loop_callback.rs call(): `thrown_here` requires kind != undefined, so
// the exception is cleared and never handed back: no uncaughtException, the
// process carries on. Control: the same listener on a child-process pipe
// (an I/O callback) — Node reports it and exits 1. Each side runs in its own
// child node process; the verdict compares their exit codes.
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const PKG = process.env.R14_PKG || path.resolve(__dirname, '../../../..');
const body = (mode) => `
const cordon = require(${JSON.stringify(PKG)});
const { spawn } = require('node:child_process');
if (${JSON.stringify(mode)} === 'control') {
  const ch = spawn('/bin/sh', ['-c', 'echo a; sleep 0.3; echo b'], { stdio: ['ignore', 'pipe', 'inherit'] });
  let n = 0; ch.stdout.on('data', () => { n++; if (n === 1) throw undefined; });
  ch.on('close', () => console.log('survived chunks=' + n));
} else {
  const e = cordon.spawnIsolated(['/bin/sh', '-c', 'echo a >&3; sleep 0.3; echo b >&3'], { policy: cordon.readOnly() });
  e.stderr.resume(); let n = 0;
  e.protocol.on('data', () => { n++; if (n === 1) throw undefined; });
  e.wait().then(() => console.log('survived chunks=' + n));
}`;
const go = (mode) => { const r = spawnSync(process.execPath, ['-e', body(mode)], { encoding: 'utf8', timeout: 20000 }); return { status: r.status, out: r.stdout.trim(), uncaughtReported: /undefined/.test(r.stderr) }; };
const control = go('control');
const c = go('cordon');
const s = `control (pipe): ${JSON.stringify(control)}; cordon protocol: ${JSON.stringify(c)}`;
console.log(control.status !== 0 && c.status === 0 ? `FINDING: ${s}` : `held (${s})`);
