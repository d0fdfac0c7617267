'use strict';
// Round 5: processes one sandbox holds, as a root provider (cgroup) and as a
// provider of uid 65534 (no cgroup); and whether the provider can still fork.
const { execFileSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { nobodyProvider } = require('../../nobody-provider');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-r5-nproc-'));
fs.chmodSync(dir, 0o755);
const bin = path.join(dir, 'nproc');
execFileSync('cc', ['-static', '-O1', '-o', bin, path.join(__dirname, 'nproc.c')]);
const script = (pkg) => `const cordon = require(${JSON.stringify(pkg)});
(async () => {
  const e = cordon.spawnIsolated([${JSON.stringify(bin)}], { policy: cordon.readOnly() });
  e.protocol.resume();
  let text = '';
  await new Promise((resolve) => e.stderr.on('data', (d) => { text += d; if (text.includes('HELD')) resolve(); }));
  const fork = require('node:child_process').spawnSync('/bin/true').status;
  e.stop();
  const o = await e.wait();
  console.log(process.getuid() + ': ' + text.trim().replace(/\\n/g, ' | ') + '; provider fork while held: ' + (fork === 0 ? 'ok' : 'FAILED') + '; uid ' + o.receipt.confinement.planned.uid + ' rlimits ' + JSON.stringify(o.receipt.confinement.planned.rlimits?.NPROC ?? o.receipt.confinement.planned.rlimits));
})().catch((err) => console.log('error', err.code, err.message));`;
const root = spawnSync(process.execPath, ['-e', script(path.join(__dirname, '..', '..', '..', '..'))], { encoding: 'utf8', timeout: 120000 });
console.log(root.stdout, root.stderr.slice(0, 500));
const { node, pkg } = nobodyProvider();
const nob = spawnSync(node, ['-e', script(pkg)], { uid: 65534, gid: 65534, cwd: '/', encoding: 'utf8', env: { PATH: process.env.PATH }, timeout: 120000 });
console.log(nob.stdout, nob.stderr.slice(0, 500));
fs.rmSync(dir, { recursive: true, force: true });
