'use strict';

// Finding (round 3): inotify (allowed by the filter) on the host's /usr,
// bound read-only into every sandbox, reports every open and read of those
// host files by any host process: the sandbox gets a live log of which
// programs the host (its users, other providers, other sandboxes) runs.
// Run: node __test__/security/findings/inotify-host-activity.repro.js

const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const cordon = require('../../..');

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-round3-'));
fs.chmodSync(dir, 0o755);
const attacker = path.join(dir, 'round3');
execFileSync('cc', ['-static', '-O1', '-o', attacker, path.join(__dirname, '..', 'round3.c')]);

// A host program the sandbox never runs; the host runs it while the sandbox watches.
const secretProgram = ['/usr/bin/gpgv', '/usr/bin/sha256sum', '/usr/bin/base64'].find(fs.existsSync);
const ex = cordon.spawnIsolated([attacker, 'watch-host', '/usr/bin', '3'], { policy: cordon.readOnly() });
let out = '';
ex.protocol.resume();
ex.stderr.on('data', (d) => {
  out += d;
  if (/RESULT watch-host/.test(out) && !out.includes('#ran')) {
    out += '#ran\n';
    setTimeout(() => execFileSync(secretProgram, ['--version'], { stdio: 'ignore' }), 300);
  }
});
ex.wait().then(() => {
  fs.rmSync(dir, { recursive: true, force: true });
  const seen = [...new Set([...out.matchAll(/^EVENT \S+ (\S+)/gm)].map((m) => m[1]))];
  console.log('host programs the sandbox saw being opened or read:', seen.join(' '));
  if (seen.includes(path.basename(secretProgram))) console.log(`OPEN: the sandbox saw the host run ${secretProgram}`);
});
