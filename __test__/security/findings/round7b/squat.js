'use strict';
// Another local user (uid 1, "daemon") prepares /tmp/cordon-session-owners-65534 before the
// uid-65534 provider's first session: (a) a 0777 directory of its own, (b) a symlink to one.
// Finding R7b-4 (README.md). Exit 1 = reproduced.
// Run inside a private /tmp so no other provider on the host is disturbed:
//   unshare -m --propagation private sh -c 'mount -t tmpfs tmpfs /tmp && node squat.js dir|link'
const L = require('./lib');
const fs = require('node:fs');
const { execFileSync } = require('node:child_process');
const mode = process.argv[2] || 'dir';
const claims = '/tmp/cordon-session-owners-65534';
if (mode === 'dir') execFileSync('setpriv', ['--reuid', '1', '--regid', '1', '--clear-groups', 'sh', '-c', `umask 0; mkdir -m 0777 ${claims}`]);
else execFileSync('setpriv', ['--reuid', '1', '--regid', '1', '--clear-groups', 'sh', '-c', `umask 0; mkdir -m 0777 /tmp/daemon-claims; ln -s /tmp/daemon-claims ${claims}`]);
const dir = L.scratch();
const body = `
  const s = await m.acquire(scope('c1'), actor).catch((e) => { out({ acquire: e.code + ' ' + e.message }); return null; });
  if (s) { out({ acquired: (await sh(s, 'id -u')).stdout.trim() }); }
  out({ claims: fs.readdirSync('/tmp/daemon-claims', { withFileTypes: false }) .concat([]) , });
  if (s) await s.end();
`.replace("fs.readdirSync('/tmp/daemon-claims', { withFileTypes: false })", mode === 'dir' ? `fs.readdirSync('${claims}')` : "fs.readdirSync('/tmp/daemon-claims')");
const res = L.run(dir, body);
for (const l of res.lines) console.log(JSON.stringify(l).slice(0, 1000));
console.log('status', res.status, res.signal, res.stderr.slice(0, 800));
console.log(execFileSync('sh', ['-c', `ls -la ${claims}/ /tmp/daemon-claims/ 2>&1; cat ${claims}/* 2>&1 | head -2`]).toString());
const denied = res.lines.some((l) => l.acquire);
console.log(`R7b-4 another local user's directory at the claims path denies every session: ${denied ? 'REPRODUCED' : 'not reproduced'}`);
process.exitCode = denied ? 1 : 0;
