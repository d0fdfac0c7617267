'use strict';

// Finding (round 3; memfd and SysV parts fixed, AF_UNIX part documented as
// not guaranteed): without a cgroup (a non-root provider, or any host
// without a writable cgroup), ONE sandboxed process holds host memory far
// past its memory ceiling (RLIMIT_AS), because memory the kernel keeps for
// it without a mapping is outside its address space:
//   memfd      — memfd_create + write, then only the descriptor is kept
//                (each file ≤ RLIMIT_FSIZE; NOFILE of them per process)
//   sysv       — SysV shm segments touched, then shmdt (they live on in the
//                sandbox's IPC namespace until it ends)
//   unix       — AF_UNIX socket buffers filled to 2 × net.core.wmem_max
// With a cgroup each is charged to the run and ends in an OOM kill inside
// (round3.test.js › kernel memory outside RLIMIT_AS).
// Run as root: node __test__/security/findings/memory-without-cgroup.repro.js
// (the provider runs as uid 65534). Gentle: 512-768 MiB each, stopped at once.

const h = require('../harness');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-round3-'));
fs.chmodSync(dir, 0o755);
const attacker = path.join(dir, 'round3');
execFileSync('cc', ['-static', '-O1', '-o', attacker, path.join(__dirname, '..', 'round3.c')]);

// memfd and sysv are closed (memfd_create/shmget: ENOSYS; round3.test.js ›
// kernel memory outside RLIMIT_AS, without a cgroup); unix stays open and is
// documented in docs/security.md › Not guaranteed.
const attacks = {
  unix: ['unix-pin', '1', '48'],
};

for (const [name, args] of Object.entries(attacks)) {
  const script = `
const fs = require('fs');
const memAvail = () => Number(/MemAvailable:\\s+(\\d+)/.exec(fs.readFileSync('/proc/meminfo', 'utf8'))[1]) * 1024;
const policy = structuredClone(cordon.readOnly());
policy.resources = { ...policy.resources, memoryBytes: 256 * 1024 * 1024, processes: 8 };
const before = memAvail();
const ex = cordon.spawnIsolated(${JSON.stringify([attacker, ...args])}, { policy, deadlineMs: 30000 });
let out = '';
let measured = null;
ex.stderr.on('data', (d) => {
  out += d;
  const m = /^(?:HELD|PINNED 0) (\\d+)/m.exec(out);
  if (m && !measured) {
    measured = { memoryCeilingMiB: 256, heldMiB: Math.round(Number(m[1]) / 2 ** 20), hostMemAvailableDropMiB: Math.round((before - memAvail()) / 2 ** 20) };
    ex.stop();
  }
});
ex.protocol.resume();
ex.wait().then((r) => process.stdout.write(JSON.stringify({ ...measured, cgroup: r.receipt.confinement.planned.cgroup })));
`;
  const run = h.runProvider(script, { asNobody: true });
  console.log(name, JSON.stringify(run.value ?? run));
  if (run.value?.heldMiB > 256) console.log(`OPEN (${name}): one process held more than its 256 MiB memory ceiling, charged to no cgroup`);
}
fs.rmSync(dir, { recursive: true, force: true });
