'use strict';
// R9 (low): `sessions.endAll()` (the manager's, not in docs/) resolves without waiting for
// acquires in flight: they complete AFTER it, live. A provider that shuts down with
// `await sessions.endAll(); process.exit()` while requests arrive leaves, per such
// session, its workspace tmpfs mounted on the host and its owner-uid claim in
// /run/cordon-session-owners (its sandbox dies with the provider). With a memory store
// nothing names them again: docs/sessions.md says an orphan tmpfs nobody resumes or reaps
// "stays mounted (memory) until reboot".
//   node endall-inflight.js            endAll 30 ms into 3 acquires, then exit: VULNERABLE when mounts stay
//   node endall-inflight.js control    endAll after the acquires settled, then exit: nothing stays
// Run as root. What the child leaves is unmounted and unclaimed here afterwards (only
// mounts and claims naming this probe's directory).
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const pkg = path.resolve(__dirname, '../../../..');
const CLAIMS = '/run/cordon-session-owners';

async function child(dir, control) {
  const cordon = require(pkg);
  const m = cordon.createSessionManager({ secret: crypto.randomBytes(32), root: path.join(dir, 'sessions'), store: cordon.memorySessionStore(), authorize: () => true, maxSessionsPerTenant: 8 });
  const acquires = [0, 1, 2].map((i) => m.acquire({ tenant: 't', conversation: `c${i}` }, {}).then((s) => s.origin, (e) => e.code));
  if (control) await Promise.all(acquires); else await new Promise((r) => setTimeout(r, 30));
  const receipts = await m.endAll();
  const origins = await Promise.all(acquires);
  console.log(`endAll ended ${receipts.length}; the acquires: ${origins.join(', ')}; manager size after: ${m.size}`);
  process.exit(0);                               // the shutdown a provider does after endAll
}

function main() {
  const mode = process.argv[2];
  if (mode === '--child') return child(process.argv[3], process.argv[4] === 'control');
  const control = mode === 'control';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'r9-endall-'));
  fs.chmodSync(dir, 0o711);
  const r = spawnSync(process.execPath, [__filename, '--child', dir, control ? 'control' : 'attack'], { encoding: 'utf8', timeout: 120_000 });
  process.stdout.write(r.stdout + r.stderr);
  const mounts = fs.readFileSync('/proc/mounts', 'utf8').split('\n').filter((l) => l.includes(` ${dir}/`)).map((l) => l.split(' ')[1]);
  const claims = fs.readdirSync(CLAIMS).filter((u) => { try { return fs.readFileSync(path.join(CLAIMS, u), 'utf8').includes(dir); } catch { return false; } });
  console.log(`after the provider exited: ${mounts.length} workspace mounts and ${claims.length} uid claims left`);
  console.log(control ? (mounts.length || claims.length ? 'control FAILED' : 'control ok') : (mounts.length ? 'VULNERABLE: sessions acquired during endAll outlive the shutdown' : 'held'));
  for (const mnt of mounts) spawnSync('umount', [mnt]);
  for (const u of claims) {
    // a sandbox init the dead provider left (docs/sessions.md, R7b-3) would run as the claimed uid: kill it by pid
    for (const line of spawnSync('ps', ['-e', '-o', 'pid=,uid='], { encoding: 'utf8' }).stdout.split('\n')) {
      const [pid, uid] = line.trim().split(/\s+/);
      if (uid === u) try { process.kill(Number(pid), 'SIGKILL'); } catch { /* gone */ }
    }
    fs.rmSync(path.join(CLAIMS, u));
  }
  fs.rmSync(dir, { recursive: true, force: true });
}
Promise.resolve(main()).catch((e) => { console.error(e); process.exitCode = 1; });
