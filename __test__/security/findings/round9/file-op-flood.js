'use strict';
// R9: the host-side file tools have no concurrency bound (exec has maxCommands = 8).
// One session's concurrent readFile calls (an actor's requests, or a model's parallel
// tool calls) each hold provider descriptors (and, for a non-root provider, a
// `cordon-exec-agent session-files` process) until they finish, so one session can
// take the provider to EMFILE and fail ANOTHER session's file operation and a new
// session's acquire.
//
//   node file-op-flood.js [N]            (root provider; N concurrent readFile, default 12000)
//   node file-op-flood.js 0              (control: no flood; the other session works)
//   setpriv --reuid=65534 --regid=65534 --clear-groups node file-op-flood.js 8000   (non-root)
// Prints VULNERABLE when session B's readFile or tenant C's acquire failed while
// session A flooded; exit 0 either way; "control ok" when N=0 and B/C work.
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const cordon = require(path.resolve(__dirname, '../../../..'));

async function main() {
  const n = Number(process.argv[2] ?? 12000);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'r9-fileflood-'));
  fs.chmodSync(dir, 0o711);
  const m = cordon.createSessionManager({
    secret: crypto.randomBytes(32), root: path.join(dir, 'sessions'), store: cordon.memorySessionStore(),
    authorize: () => true, workspaceBytes: 8 << 20, maxSessionsPerTenant: 4,
  });
  const sessions = [];
  try {
    const a = await m.acquire({ tenant: 'attacker', conversation: 'a' }, {}); sessions.push(a);
    const b = await m.acquire({ tenant: 'victim', conversation: 'b' }, {}); sessions.push(b);
    await a.writeFile('f', 'x');
    await b.writeFile('g', 'victim data');
    const procs = () => execFileSync('ps', ['-e', '-o', 'comm=']).toString().split('\n').filter((l) => l.startsWith('cordon-exec-ag')).length;
    let peakFds = 0, peakProcs = 0, emfile = false;
    const iv = setInterval(() => {
      try { peakFds = Math.max(peakFds, fs.readdirSync('/proc/self/fd').length); } catch (e) { if (e.code === 'EMFILE') emfile = true; }
      try { if (process.getuid() !== 0) peakProcs = Math.max(peakProcs, procs()); } catch { /* the provider is out of descriptors: counted above */ }
    }, 5);
    const flood = Array.from({ length: n }, () => a.readFile('f').then(() => 'ok', (e) => e.code || e.message));
    // the victim's operations, issued while the flood is in flight
    await new Promise((r) => setTimeout(r, 50));
    const victimRead = b.readFile('g').then((d) => `ok ${d}`, (e) => `FAILED ${e.code}: ${String(e.cause?.code || e.message).slice(0, 120)}`);
    const newTenant = m.acquire({ tenant: 'other', conversation: 'c' }, {}).then((s) => { sessions.push(s); return 'ok'; }, (e) => `FAILED ${e.code}: ${String(e.cause?.code || e.message).slice(0, 160)}`);
    const [fr, vr, nt] = await Promise.all([Promise.all(flood), victimRead, newTenant]);
    clearInterval(iv);
    const codes = {}; for (const c of fr) codes[c] = (codes[c] || 0) + 1;
    console.log(`uid ${process.getuid()}, RLIMIT_NOFILE ${execFileSync('sh', ['-c', 'ulimit -n']).toString().trim()}, ${n} concurrent readFile in session A:`, codes);
    console.log(`peak provider fds ${peakFds}${emfile ? ' (the monitor itself met EMFILE)' : ''}${process.getuid() !== 0 ? `, peak session-files processes ${peakProcs}` : ''}`);
    console.log(`victim session B readFile: ${vr}`);
    console.log(`tenant C acquire: ${nt}`);
    const hit = vr.startsWith('FAILED') || nt.startsWith('FAILED');
    console.log(n === 0 ? (hit ? 'control FAILED (B or C broken without a flood)' : 'control ok') : (hit ? 'VULNERABLE: one session\'s file-op flood failed another session\'s operations' : 'held'));
  } finally {
    for (const s of sessions) await s.end();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
main().catch((e) => { console.error(e); process.exitCode = 1; });
