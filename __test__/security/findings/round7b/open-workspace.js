'use strict';
// Finding R7b-5 (README.md). Exit 1 = reproduced.
// Root provider: a command makes its workspace root 0777 (it owns it) and leaves a file.
// Can another local user (uid 1) find it (the mount table) and read / write it?
const L = require('./lib');
const { execFileSync } = require('node:child_process');
const dir = L.scratch(false);
const body = `
  const s = await m.acquire(scope('c1'), actor);
  await sh(s, 'chmod 777 /workspace; echo from-sandbox > out.txt; chmod 666 out.txt');
  const found = require('node:child_process').execFileSync('setpriv', ['--reuid', '1', '--regid', '1', '--clear-groups', 'sh', '-c',
    'p=$(grep -o "[^ ]*' + dir.split('/').pop() + '/root/[0-9a-f]*" /proc/self/mountinfo | head -1); echo path=$p; cat $p/out.txt; echo from-local-user > $p/in.txt && echo wrote'], { encoding: 'utf8' });
  out({ found, sandboxSees: (await sh(s, 'cat in.txt')).stdout });
  await s.end();
`;
const r = L.run(dir, body, { asNobody: false });
for (const l of r.lines) console.log(JSON.stringify(l).slice(0, 600));
console.log('status', r.status, r.stderr.slice(0, 500));
require('node:fs').rmSync(dir, { recursive: true, force: true });
const v = r.lines.find((l) => l.found);
const ok = v && v.found.includes('from-sandbox') && v.sandboxSees.includes('from-local-user');
console.log(`R7b-5 a network-none session and uid 1 exchange data through the workspace: ${ok ? 'REPRODUCED' : 'not reproduced'}`);
process.exitCode = ok ? 1 : 0;
