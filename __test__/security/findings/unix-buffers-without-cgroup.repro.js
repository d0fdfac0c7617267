'use strict';

// Finding (round 3): without a cgroup (a non-root provider), a sandbox pins
// host kernel memory in AF_UNIX socket buffers far past its memory ceiling.
// RLIMIT_AS does not count socket buffers, and no cgroup charges them.
// Run: node __test__/security/findings/unix-buffers-without-cgroup.repro.js  (as root; the
// provider runs as uid 65534). Gentle: one process, 48 socket pairs (~768 MiB), stopped at once.

const h = require('../harness');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-round3-'));
fs.chmodSync(dir, 0o755);
const attacker = path.join(dir, 'round3');
execFileSync('cc', ['-static', '-O1', '-o', attacker, path.join(__dirname, '..', 'round3.c')]);

const script = `
const fs = require('fs');
const memAvail = () => Number(/MemAvailable:\\s+(\\d+)/.exec(fs.readFileSync('/proc/meminfo', 'utf8'))[1]) * 1024;
const policy = structuredClone(cordon.readOnly());
policy.resources = { ...policy.resources, memoryBytes: 256 * 1024 * 1024, processes: 8 };
const before = memAvail();
const ex = cordon.spawnIsolated([${JSON.stringify(attacker)}, 'unix-pin', '1', '48'], { policy, deadlineMs: 30000 });
let out = '';
let measured = null;
ex.stderr.on('data', (d) => {
  out += d;
  const m = /^PINNED 0 (\\d+)/m.exec(out);
  if (m && !measured) {
    measured = { memoryCeilingMiB: 256, queuedMiB: Math.round(Number(m[1]) / 2 ** 20), hostMemAvailableDropMiB: Math.round((before - memAvail()) / 2 ** 20) };
    ex.stop();
  }
});
ex.protocol.resume();
ex.wait().then((r) => process.stdout.write(JSON.stringify({ ...measured, cgroup: r.receipt.confinement.planned.cgroup })));
`;
const run = h.runProvider(script, { asNobody: true });
fs.rmSync(dir, { recursive: true, force: true });
console.log(run);
if (run.value && run.value.queuedMiB > 256) console.log('OPEN: the sandbox queued more than its memory ceiling in socket buffers, charged nowhere');
