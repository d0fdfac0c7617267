'use strict';
// A command builds a deep / wide tree; the host's remove() of it: does it
// stall the provider, follow a link, or leave things? And a symlink-swap race
// against remove(): a directory swapped for a link to a host directory.
const { manager, withTimeout } = require('./session-common');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
async function main() {
  const m = manager();
  const victim = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-r5-victim-'));
  for (let i = 0; i < 50; i++) fs.writeFileSync(path.join(victim, `keep${i}`), 'x');
  const s = await m.sessions.acquire({ tenant: 't', conversation: 'rm' }, { id: 'a' });
  // deep tree
  const mk = await s.exec({ shell: 'bash', script: 'mkdir -p deep; cd deep; for i in $(seq 1 3000); do mkdir d || break; cd d; done; pwd | wc -c' }, { timeoutMs: 300000 });
  console.log('deep made:', mk.stdout.trim(), mk.stderr.slice(0, 200));
  let maxGap = 0; let last = Date.now();
  const iv = setInterval(() => { const n = Date.now(); maxGap = Math.max(maxGap, n - last); last = n; }, 5);
  const t0 = Date.now();
  const r = await withTimeout(s.remove('deep'), 120000, 'remove');
  clearInterval(iv);
  console.log(`remove deep: ${r.settled ? JSON.stringify(r.value ?? (r.error.code + ' ' + r.error.message)) : 'no settle'} ${Date.now() - t0} ms, max loop gap ${maxGap} ms`);
  // swap race: a background loop swaps dir w <-> symlink to the victim path as seen from the host
  const hostVictim = victim;
  await s.start({ shell: 'bash', script: `while :; do mkdir -p w/a; for i in $(seq 1 20); do : > w/a/f$i; done; mv w w.old 2>/dev/null; ln -sfn ${hostVictim} w; rm -rf w.old; rm -f w; done` });
  let outcomes = {};
  for (let i = 0; i < 300; i++) {
    const x = await s.remove('w').then((v) => 'ok:' + v.removed, (e) => e.code);
    outcomes[x] = (outcomes[x] || 0) + 1;
    const y = await s.readFile('w/a/f1').then(() => 'read', (e) => e.code);
    outcomes['read ' + y] = (outcomes['read ' + y] || 0) + 1;
  }
  console.log('race outcomes', JSON.stringify(outcomes));
  console.log('victim files left', fs.readdirSync(victim).length, 'of 50');
  await s.end();
  fs.rmSync(victim, { recursive: true, force: true });
  m.cleanup();
}
main().catch((e) => { console.error(e); process.exit(1); });
