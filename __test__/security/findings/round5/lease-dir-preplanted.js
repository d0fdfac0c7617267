'use strict';
// Another local user (uid 61235) plants /dev/shm/cordon-uids-61234 (a 0777
// directory it owns, or a symlink to one) before a provider of uid 61234 runs.
// Does the provider refuse (as for the control-root base), or keep its uid
// leases in the attacker's directory?
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const { nobodyProvider } = require('../../nobody-provider');
const U = Number(process.argv[2] || 61234);
const A = U + 1;
const { node, pkg } = nobodyProvider();
const lease = `/dev/shm/cordon-uids-${U}`;
const target = `/tmp/cordon-r5-attacker-${A}`;
for (const p of [lease]) { try { fs.rmSync(p, { recursive: true, force: true }); } catch {} }
const mode = process.argv[3] || 'dir';
const asA = (cmd) => spawnSync('/bin/sh', ['-c', cmd], { uid: A, gid: A, encoding: 'utf8' });
if (mode === 'dir') console.log(asA(`mkdir -m 0777 ${lease} && ls -ld ${lease}`).stdout.trim());
else console.log(asA(`rm -rf ${target}; mkdir -m 0777 ${target} && ln -s ${target} ${lease} && ls -l ${lease}`).stdout.trim());
const script = `const cordon = require(${JSON.stringify(pkg)});
(async () => {
  for (const identity of [undefined, 'shared-with-provider']) {
    try {
      const base = cordon.readOnly();
      const policy = identity ? { ...base, process: { ...(base.process || {}), identity } } : base;
      const e = cordon.spawnIsolated(['/bin/true'], { policy });
      e.protocol.resume(); e.stderr.resume();
      const o = await e.wait();
      console.log(identity || 'default', 'ran', o.returncode);
    } catch (err) { console.log(identity || 'default', 'refused', err.code, err.message.slice(0, 300)); }
  }
})();`;
const run = spawnSync(node, ['-e', script], { uid: U, gid: U, cwd: '/', encoding: 'utf8', env: { PATH: process.env.PATH }, timeout: 60000 });
console.log(run.stdout, run.stderr.slice(0, 2000));
console.log('lease dir after:', spawnSync('ls', ['-la', lease + '/'], { encoding: 'utf8' }).stdout);
fs.rmSync(lease, { recursive: true, force: true });
fs.rmSync(target, { recursive: true, force: true });
