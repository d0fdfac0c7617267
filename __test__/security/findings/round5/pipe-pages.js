'use strict';
// Round 5: a non-root provider's sandbox holds its uid's pipe-buffer pages;
// does the provider's next pipe get 1 page (shared quota) or 16 (its own)?
// Run as root: `node pipe-pages.js`; the provider runs as uid 65534.
const { execFileSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { nobodyProvider } = require('../../nobody-provider');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-r5-pipes-'));
fs.chmodSync(dir, 0o755);
const bin = path.join(dir, 'pipe-pages');
execFileSync('cc', ['-static', '-O1', '-o', bin, path.join(__dirname, 'pipe-pages.c')]);
const { node, pkg } = nobodyProvider();
const script = `const cordon = require(${JSON.stringify(pkg)});
const { execFileSync } = require('node:child_process');
const pipeSize = () => execFileSync('/usr/bin/python3', ['-c', 'import os,fcntl; r,w=os.pipe(); print(fcntl.fcntl(w, 1032))'], { encoding: 'utf8' }).trim();
(async () => {
  for (const identity of ['own', 'shared-with-provider']) {
    const base = cordon.readOnly();
    const policy = { ...base, process: { ...(base.process || {}), identity } };
    const before = pipeSize();
    const e = cordon.spawnIsolated([${JSON.stringify(bin)}], { policy });
    e.protocol.resume();
    let text = '';
    await new Promise((resolve) => e.stderr.on('data', (d) => { text += d; if (text.includes('READY') && (text.match(/pipes/g) || []).length >= 12) resolve(); }));
    const during = pipeSize();
    e.stop();
    await e.wait();
    console.log(identity + ': provider pipe size before ' + before + ', while the sandbox holds its pipes ' + during + ' (' + (text.match(/: (\\\\d+) pipes/g) || []).join(' ') + ')');
  }
})().catch((err) => { console.log('error', err.code, err.message); });`;
const run = spawnSync(node, ['-e', script], { uid: 65534, gid: 65534, cwd: '/', encoding: 'utf8', env: { PATH: process.env.PATH }, timeout: 120000 });
console.log(run.stdout, run.stderr.slice(0, 1000));
console.log('fs.pipe-user-pages-soft =', fs.readFileSync('/proc/sys/fs/pipe-user-pages-soft', 'utf8').trim());
fs.rmSync(dir, { recursive: true, force: true });
