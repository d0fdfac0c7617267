'use strict';
// The sessions root passes the manager's check (root-owned, 0711), but its
// parent belongs to another local user (uid 61235), who swaps the root for a
// symlink to a directory of theirs after createSessionManager(). Where does
// the next acquire() mount the workspace?
const crypto = require('node:crypto');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const cordon = require('../../../..');
async function main() {
  const A = 61235;
  const top = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-r5-swap-'));
  fs.chmodSync(top, 0o755);
  const parent = path.join(top, 'parent');
  fs.mkdirSync(parent, { mode: 0o755 });
  fs.chownSync(parent, A, A);
  const root = path.join(parent, 'sessions');
  const m = cordon.createSessionManager({ secret: crypto.randomBytes(32), root, authorize: () => true });
  const s1 = await m.acquire({ tenant: 't', conversation: 'one' }, { id: 'a' });
  console.log('root after create:', fs.lstatSync(root).uid, (fs.lstatSync(root).mode & 0o7777).toString(8), 'workspace', s1.workspace);
  await s1.end();
  const theirs = path.join(parent, 'theirs');
  const swap = spawnSync('/bin/sh', ['-c', `mkdir -m 0777 ${theirs} && mv ${root} ${parent}/old && ln -s ${theirs} ${root} && ls -l ${root}`], { uid: A, gid: A, encoding: 'utf8' });
  console.log('uid', A, 'swapped the root:', swap.stdout.trim(), swap.stderr.trim());
  // The first session's key is public: /proc/mounts named its workspace.
  const key1 = path.basename(s1.workspace);
  const victim = path.join(top, 'victim');
  fs.mkdirSync(victim);
  fs.writeFileSync(path.join(victim, 'precious'), 'host data');
  fs.chmodSync(victim, 0o755);
  const plant = spawnSync('/bin/sh', ['-c', `ln -s ${victim} ${theirs}/${key1}`], { uid: A, gid: A, encoding: 'utf8' });
  console.log('planted', `${theirs}/${key1} -> ${victim}`, plant.stderr.trim());
  for (const conversation of ['two', 'one']) {
    try {
      const s2 = await m.acquire({ tenant: 't', conversation }, { id: 'a' });
      console.log(conversation, 'acquired', s2.workspace);
      await s2.end();
    } catch (e) {
      console.log(conversation, 'refused', e.code, e.message.slice(0, 160));
    }
  }
  const mounts = fs.readFileSync('/proc/mounts', 'utf8').split('\n').filter((l) => l.includes(top));
  console.log('mounts left under the test dir:', JSON.stringify(mounts.map((l) => l.split(' ')[1])));
  console.log(mounts.some((l) => l.split(' ')[1] === victim) ? `OPEN: a session tmpfs is mounted over ${victim} (a path uid ${A} chose)` : 'victim not mounted over');
  for (const l of mounts) spawnSync('umount', [l.split(' ')[1]]);
  fs.rmSync(top, { recursive: true, force: true });
}
main().catch((e) => { console.error(e); process.exit(1); });
