'use strict';

// Finding (round 3): a sandbox takes the whole host-wide kernel AIO quota
// (fs.aio-max-nr, 65536 by default) with io_setup, which the filter allows;
// while it runs, io_setup fails with EAGAIN for every host process (and
// every other sandbox). Run: node __test__/security/findings/aio-host-quota.repro.js

const { execFileSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const cordon = require('../../..');

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-round3-'));
fs.chmodSync(dir, 0o755);
const attacker = path.join(dir, 'round3');
execFileSync('cc', ['-static', '-O1', '-o', attacker, path.join(__dirname, '..', 'round3.c')]);

/** io_setup(1) from a host process (the attacker binary run directly on the host, outside any sandbox). */
function hostIoSetup() {
  const run = spawnSync(attacker, ['aio-hog', '1'], { encoding: 'utf8', timeout: 2000, killSignal: 'SIGKILL' });
  return /held (\d+)/.exec(run.stdout)?.[1] ?? run.stdout;
}

const ex = cordon.spawnIsolated([attacker, 'aio-hog', '1'], { policy: cordon.readOnly(), deadlineMs: 30_000 });
let out = '';
ex.protocol.resume();
ex.stderr.on('data', (d) => {
  out += d;
  if (/RESULT aio-hog/.test(out) && !out.includes('#measured')) {
    out += '#measured';
    console.log('inside the sandbox:', /RESULT aio-hog .*/.exec(out)[0]);
    console.log('host fs.aio-nr:', fs.readFileSync('/proc/sys/fs/aio-nr', 'utf8').trim(), 'of', fs.readFileSync('/proc/sys/fs/aio-max-nr', 'utf8').trim());
    console.log('a host process gets AIO events:', hostIoSetup(), '(0 = io_setup failed with EAGAIN)');
    ex.stop();
  }
});
ex.wait().then(() => {
  console.log('after the run, a host process gets AIO events:', hostIoSetup());
  fs.rmSync(dir, { recursive: true, force: true });
});
