'use strict';
// R12-2 follow-up (root provider, session policy memoryBytes 2 GiB): after an end() whose containment read as
// unconfirmed (many inodes in /tmp), the workspace tmpfs and the owner claim stay. Does the same provider's later
// work, or a new provider's recover() on the same durable store and root, give them back?
// Control: the same without the inode fill. Probes: with the fill, then (a) the same conversation acquired
// again, (b) not. The script unmounts and removes what is left. Usage (root): node root-unconfirmed-recover.js
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { createSessionManager, sqliteSessionStore, workspaceWrite } = require('../../../..');
const w = workspaceWrite();
const policy = { ...w, resources: { ...(w.resources || {}), memoryBytes: 2 * 1024 ** 3 } };
const mounts = (root) => fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\n').filter((l) => l.includes(root)).length;
const claims = (root) => { try { return fs.readdirSync('/run/cordon-session-owners').filter((n) => { try { return fs.readFileSync(path.join('/run/cordon-session-owners', n), 'utf8').includes(root); } catch { return false; } }).length; } catch { return 0; } };
async function scenario(fill, reacquire = true) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'r12-rec-'));
  fs.chmodSync(dir, 0o711);
  const root = path.join(dir, 'sessions');
  const secret = crypto.randomBytes(32);
  const mk = () => createSessionManager({ secret, root, store: sqliteSessionStore(path.join(dir, 's.db')), authorize: () => true, policy });
  let m = mk();
  const s = await m.acquire({ tenant: 't', conversation: 'c' }, {});
  if (fill) await s.exec(['timeout', '12', 'python3', '-c', "import os\nn=0\nwhile True:\n  os.close(os.open('/tmp/%d' % n, os.O_CREAT|os.O_WRONLY)); n+=1"], { timeoutMs: 30000 }).catch(() => {});
  const r = await s.end();
  const a = { confirmed: r.sandbox?.receipt?.stop?.containmentConfirmed, mounts: mounts(root), claims: claims(root) };
  // the same provider opens the same conversation again
  let again = 'not tried';
  await new Promise((res) => setTimeout(res, 3000));
  const a2 = { mounts: mounts(root), claims: claims(root) };
  if (reacquire) try { const s2 = await m.acquire({ tenant: 't', conversation: 'c' }, {}); again = (await s2.exec(['sh', '-c', 'ls /workspace | wc -l'])).stdout.trim(); await s2.end(); } catch (e) { again = e.code; }
  const a3 = { mounts: mounts(root), claims: claims(root) };
  await m.endAll();
  const b = { mounts: mounts(root), claims: claims(root) };
  m = mk();
  let rec; try { rec = await m.recover(); } catch (e) { rec = e.code; }
  await m.endAll();
  const c = { mounts: mounts(root), claims: claims(root) };
  console.log(`${fill ? 'probe (inodes in /tmp)' : 'control'}: end → containmentConfirmed ${a.confirmed}, mounts ${a.mounts}, claims ${a.claims}; 3 s later: mounts ${a2.mounts}, claims ${a2.claims}; re-acquire of the conversation → ${again}, then mounts ${a3.mounts}, claims ${a3.claims}; after endAll: mounts ${b.mounts}, claims ${b.claims}; a new provider's recover() → ${JSON.stringify(rec)}, then mounts ${c.mounts}, claims ${c.claims}`);
  // cleanup whatever is left
  for (const l of fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) { const mp = l.split(' ')[4]; if (mp && mp.startsWith(root)) spawnSync('umount', [mp]); }
  try { for (const n of fs.readdirSync('/run/cordon-session-owners')) { const f = path.join('/run/cordon-session-owners', n); try { if (fs.readFileSync(f, 'utf8').includes(root)) fs.rmSync(f); } catch {} } } catch {}
  fs.rmSync(dir, { recursive: true, force: true });
  return c;
}
(async () => {
  const ctl = await scenario(false);
  await scenario(true);
  const p = await scenario(true, false);
  console.log(ctl.mounts || ctl.claims ? 'control failed' : (p.mounts || p.claims) ? 'FINDING: unless the same conversation is acquired again, the workspace tmpfs and the owner claim outlive endAll() and a new provider\'s recover()' : 'held (recover() gives them back)');
})().catch((e) => { console.error(e); process.exitCode = 1; });
