'use strict';
// Runs one of this directory's probes as a uid-65534 provider: node as-nobody.js PROBE.js [args...]
// (a world-readable copy of the package and of these probes, removed at exit).
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawnSync } = require('child_process');
const { nobodyProvider } = require('../../nobody-provider');
const { node, pkg } = nobodyProvider({ tests: true }); // common.js loads __test__/remote-support.js from the copy
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'r18b-'));
fs.chmodSync(dir, 0o755);
for (const f of fs.readdirSync(__dirname)) if (f.endsWith('.js')) { fs.copyFileSync(path.join(__dirname, f), path.join(dir, f)); fs.chmodSync(path.join(dir, f), 0o644); }
const [probe, ...args] = process.argv.slice(2);
const r = spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', node, path.join(dir, probe), ...args],
  { stdio: 'inherit', cwd: '/', env: { ...process.env, CORDON_PKG: pkg } });
fs.rmSync(dir, { recursive: true, force: true });
process.exitCode = r.status ?? 1;
