'use strict';
// R16r: runs the given probes of this directory as a non-root provider (uid
// 65534) from the world-readable package copy nobody-provider makes (removed
// when this process exits). Usage: node run-as-nobody.js PROBE.js [...]
const path = require('node:path');
const fs = require('node:fs');
const os = require('node:os');
const { spawnSync } = require('node:child_process');
const { nobodyProvider } = require('../../nobody-provider');
const { node, pkg } = nobodyProvider();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'r16r-'));
fs.chmodSync(tmp, 0o755);
try {
  for (const probe of process.argv.slice(2)) {
    const copy = path.join(tmp, path.basename(probe));
    fs.copyFileSync(path.join(__dirname, probe), copy);
    fs.chmodSync(copy, 0o644);
    const r = spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', node, copy], { env: { ...process.env, R14_PKG: pkg, HOME: '/tmp' }, encoding: 'utf8', timeout: 240000, cwd: tmp });
    console.log(`[uid 65534] ${probe}: ${(r.stdout || '').trim()}${r.status ? ` (exit ${r.status}: ${(r.stderr || '').trim().slice(-400)})` : ''}`);
  }
} finally {
  fs.rmSync(tmp, { recursive: true, force: true });
}
