'use strict';
// Findings R7b-1 and R7b-2 (README.md). A command changes the mode of its own workspace root
// (it owns it): `chmod 755 /workspace`. Then:
//  R7b-1: readFile fails with ERR_CORDON_SESSION_FILE_FAILED whose message names the host path
//         of the workspace (the provider's sessions root and the session key);
//  R7b-2: the provider is SIGKILLed; the next provider's recover() calls the session resumable,
//         but acquire() fails with ERR_CORDON_IDENTITY_UNAVAILABLE (not a session code; its
//         documented meaning is "the provider has no host ids") and the kept files are gone:
//         the acquire after that is origin 'created', empty.
// Usage: node workspace-mode.js [root]   (default: a uid-65534 provider). Exit 1 = reproduced.
const L = require('./lib');
const asNobody = process.argv[2] !== 'root';
const dir = L.scratch(asNobody);
const first = `
  const s = await m.acquire(scope('c1'), actor);
  await sh(s, 'echo kept > kept.txt; chmod 755 /workspace');
  out({ read: await s.readFile('kept.txt').then(String, (e) => e.code + ' ' + e.message) });
  process.kill(process.pid, 'SIGKILL');
`;
const second = `
  const rec = await m.recover();
  const s = await m.acquire(scope('c1'), actor).catch((e) => { out({ acquire: e.code + ' ' + e.message }); return null; });
  if (s) { out({ origin: s.origin, kept: await s.readFile('kept.txt').then(String, (e) => e.code) }); await s.end(); }
  out({ recover: rec });
`;
const r1 = L.run(dir, first, { asNobody });
const r2 = L.run(dir, second, { asNobody });
const r3 = L.run(dir, second, { asNobody });
const lines = [...r1.lines, ...r2.lines, ...r3.lines];
for (const l of lines) console.log(JSON.stringify(l).slice(0, 500));
const read = r1.lines.find((l) => l.read)?.read ?? '';
const leak = read.includes(dir);
const lost = r2.lines.some((l) => l.acquire) && r3.lines.some((l) => l.origin === 'created');
console.log(`R7b-1 host path in the file tool's error: ${leak ? 'REPRODUCED' : 'not reproduced'}`);
console.log(`R7b-2 resume fails with a non-session code and the kept files are lost: ${lost ? 'REPRODUCED' : 'not reproduced'}`);
console.log('holders left naming this root:', L.withTag(dir + '/root'));
require('node:fs').rmSync(dir, { recursive: true, force: true });
process.exitCode = leak || lost ? 1 : 0;
