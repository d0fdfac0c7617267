'use strict';
// R9 (low): `list` reports a name that is not valid UTF-8 lossily, so two different
// files can be listed under the same name and the file tools cannot reach one of them:
// a command creates `\xff` and `\xef\xbf\xbd` (U+FFFD encoded); `list('.')` shows
// "\ufffd" twice, and readFile / remove of that name always reach the second file.
// A model (or a host that shows the listing to a user) is told about a file it can
// neither read nor remove, and a remove of "the file it saw" removes another one.
//   node list-name-confusion.js            the attack (VULNERABLE when two entries collide)
//   node list-name-confusion.js control    the same with two valid UTF-8 names (distinct)
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const cordon = require(path.resolve(__dirname, '../../../..'));

async function main() {
  const control = process.argv[2] === 'control';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'r9-names-'));
  fs.chmodSync(dir, 0o711);
  const m = cordon.createSessionManager({ secret: crypto.randomBytes(32), root: path.join(dir, 'sessions'), store: cordon.memorySessionStore(), authorize: () => true });
  const s = await m.acquire({ tenant: 't', conversation: 'c' }, {});
  try {
    const names = control ? "b'e1', b'e2'" : "b'\\xff', b'\\xef\\xbf\\xbd'";
    const r = await s.exec(['python3', '-c', `for i, n in enumerate([${names}]): open(n, 'wb').write(b'file %d' % i)`]);
    if (r.exitCode !== 0) throw new Error(r.stderr);
    const listed = await s.list('.');
    console.log('listed:', listed.map((e) => JSON.stringify(e.name)).join(', '));
    for (const e of listed) console.log(`readFile(${JSON.stringify(e.name)}) ->`, String(await s.readFile(e.name)));
    const distinct = new Set(listed.map((e) => e.name)).size === listed.length;
    console.log(control ? (distinct ? 'control ok' : 'control FAILED') : (distinct ? 'held' : 'VULNERABLE: two files listed under one name; "file 0" is unreachable through the file tools'));
  } finally {
    await s.end();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
main().catch((e) => { console.error(e); process.exitCode = 1; });
