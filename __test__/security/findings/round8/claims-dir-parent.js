'use strict';
// R8-6 (README.md). Non-root provider (uid 65534) given `claimsDir`. Only the last component is
// checked (a directory of this uid, 0700: owner-claims.js claimsDir()), never its ancestors —
// unlike the sessions root, whose every ancestor must be root's or the provider's and writable
// by no one else (sessions-root.js). Here the parent belongs to ANOTHER local user (uid 1,
// "daemon", mode 0777 so the provider can make its directory there): the option is accepted,
// and that user later moves the claims directory away; the provider silently starts a fresh,
// empty one, so the live session's claim is forgotten (its uid can be handed out again; the
// R7-4 holder check is the only thing left between two sessions sharing it).
// Expected: claimsDir under another user's directory refused like such a sessions root.
// Exit 1 = reproduced. Usage (root): node claims-dir-parent.js
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const L = require('./lib');

(async () => {
  if (process.geteuid() !== 0) return console.log('skip: needs root');
  const dir = L.scratch(true);
  const parent = fs.mkdtempSync('/var/tmp/atk8w-cdp-');
  fs.chownSync(parent, 1, 1);
  fs.chmodSync(parent, 0o777);
  const claims = path.join(parent, 'claims');
  try {
    const body = `const s = await m.acquire(scope('c1'), actor); out({ uid: s.ownerUid });
      await until(dir + '/moved');
      const t = await m.acquire(scope('c2'), actor); out({ second: t.ownerUid, claims: fs.readdirSync(${JSON.stringify(claims)}) });
      await t.end(); await s.end(); out({ ended: true });`;
    const p = L.start(dir, body, { extra: `, claimsDir: ${JSON.stringify(claims)}` });
    const first = await L.until(() => p.lines.find((l) => l.uid || l.failed));
    console.log('first session:', JSON.stringify(first), '| claims:', fs.readdirSync(claims));
    // The other user (uid 1) moves the provider's claims directory away.
    const mv = spawnSync('/bin/mv', [claims, path.join(parent, 'gone')], { uid: 1, gid: 1, encoding: 'utf8' });
    console.log('uid 1 mv claims gone:', mv.status, mv.stderr.trim());
    fs.writeFileSync(path.join(dir, 'moved'), '');
    const second = await L.until(() => p.lines.find((l) => l.second || l.failed));
    console.log('second session:', JSON.stringify(second));
    await p.done;
    const reproduced = Boolean(first.uid) && mv.status === 0 && Array.isArray(second.claims) && !second.claims.includes(String(first.uid));
    console.log(`R8-6 a claimsDir under another user's directory is accepted and its claims can be taken away: ${reproduced ? 'REPRODUCED' : 'not reproduced'}`);
    process.exitCode = reproduced ? 1 : 0;
  } finally {
    L.killTagged(dir);
    fs.rmSync(parent, { recursive: true, force: true });
  }
})().catch((e) => {
  console.error(e);
  process.exitCode = 3;
});
