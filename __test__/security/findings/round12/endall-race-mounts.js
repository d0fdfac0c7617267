'use strict';
// Async mount/umount (new since round 11): endAll()/end() racing acquires at many delays.
// After each round: any tmpfs left under the sessions root, any owner claim left, any process of a claimed uid?
// Control: the same rounds without endAll racing (acquire, then endAll after they settle).
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { createSessionManager, memorySessionStore } = require('../../../..');
const ROUNDS = Number(process.argv[2] || 16);
const claimsDir = '/run/cordon-session-owners';
const claims = () => { try { return fs.readdirSync(claimsDir).filter((n) => /^\d+$/.test(n)); } catch { return []; } };
// only processes of this package copy (another job on the machine runs its own sandboxes)
const PKG = path.resolve(__dirname, '../../../..');
const procs = () => fs.readdirSync('/proc').filter((n) => /^\d+$/.test(n) && Number(n) !== process.pid).filter((n) => { try { const st = fs.readFileSync(`/proc/${n}/status`, 'utf8'); const uid = Number(st.match(/Uid:\s+(\d+)/)[1]); if (uid === 0 || /^Name:\s+(node|setpriv|timeout)/m.test(st)) return false; return fs.readFileSync(`/proc/${n}/cmdline`, 'utf8').includes(PKG); } catch { return false; } }).map((n) => { try { return n + ':' + fs.readFileSync(`/proc/${n}/cmdline`, 'utf8').replace(/\0/g, ' ').slice(0, 60); } catch { return n; } });
const mountsUnder = (p) => fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\n').filter((l) => l.includes(p));
async function round(delay, race) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'r12-race-'));
  fs.chmodSync(dir, 0o711);
  const root = path.join(dir, 'sessions');
  const sessions = createSessionManager({ secret: crypto.randomBytes(32), root, store: memorySessionStore(), authorize: () => true });
  const acq = [0, 1, 2, 3].map((i) => sessions.acquire({ tenant: 't' + i, conversation: 'c' }, {}).then(async (s) => {
    // also race end() of a live session against an exec
    if (i === 0) { const e = s.exec(['true']).catch((x) => x.code); await s.end(); return e; }
    return 'ok';
  }).catch((e) => e.code));
  let res;
  if (race) { await new Promise((r) => setTimeout(r, delay)); await sessions.endAll(); res = await Promise.all(acq); }
  else { res = await Promise.all(acq); await sessions.endAll(); }
  await new Promise((r) => setTimeout(r, 300));
  const left = mountsUnder(root);
  fs.rmSync(dir, { recursive: true, force: true });
  return { res, left: left.length };
}
(async () => {
  const c0 = claims().length; const p0 = procs().length;
  let ctlLeft = 0, probeLeft = 0; const outcomes = {};
  for (let i = 0; i < 3; i++) ctlLeft += (await round(0, false)).left;
  for (let i = 0; i < ROUNDS; i++) {
    const d = [0, 1, 3, 5, 8, 12, 20, 30, 45, 60, 80, 100, 130, 160, 200, 260][i % 16];
    const r = await round(d, true);
    probeLeft += r.left;
    for (const x of r.res) outcomes[x] = (outcomes[x] || 0) + 1;
    if (r.left) console.log(`delay ${d} ms: ${r.left} mount(s) left under the root`, r.res);
  }
  const c1 = claims().length; let pl = procs(); for (let i = 0; i < 10 && pl.length; i++) { await new Promise((r) => setTimeout(r, 500)); pl = procs(); } const p1 = pl.length; if (p1) console.log('left:', pl);
  console.log(`uid ${process.getuid()}; control: mounts left ${ctlLeft}; probe ${ROUNDS} rounds: mounts left ${probeLeft}, claims before ${c0} after ${c1}, non-root processes (not node) before ${p0} after ${p1}, outcomes ${JSON.stringify(outcomes)}`);
  console.log(probeLeft || c1 > c0 || p1 > p0 ? 'FINDING: a race of endAll/end with acquire leaves a mount or a claim' : 'held');
})().catch((e) => { console.error(e); process.exitCode = 1; });
