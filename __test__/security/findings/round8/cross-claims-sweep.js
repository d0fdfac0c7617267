'use strict';
// R8-2 (README.md). Two NON-ROOT providers of one uid (65534, no home of its own) on two
// sessions roots: by default each claims owner uids in its own `<root>/.owner-claims`
// (owner-claims.js defaultClaimsDir), so neither sees the other's claims. The only guard
// between them, mappedByLiveHolder(), runs when a uid is *claimed*, never before a *sweep*:
// provider B's record whose holder died (a reboot, an OOM kill, a killed holder) keeps its
// claim of uid X in B's directory; provider A, finding X unmapped, claims X for a live session;
// B's next recover() (or acquire of that session) confirms X in ITS directory and sweeps X,
// SIGKILLing A's live session sandbox.
// The collision itself is a random draw (1 in 65535 per claim per such record), so the probe
// sets it up: B's record and claim are renamed to A's uid after B's holder is gone, which is the
// state the draw produces. Everything after that is the product's own code.
// Expected: B's recover() leaves A's session alone. Exit 1 = reproduced.
// Usage (root): node cross-claims-sweep.js [control]   (control: no collision set up; A's command survives)
const fs = require('node:fs');
const path = require('node:path');
const L = require('./lib');

(async () => {
  if (process.geteuid() !== 0) return console.log('skip: needs root to run uid-65534 providers');
  const dirA = L.scratch(true);
  const dirB = L.scratch(true);
  let a = null;
  try {
    // B: a session, then the provider dies (SIGKILL) and so does its holder.
    const b1 = L.run(dirB, `const s = await m.acquire(scope('c1'), actor); out({ uid: s.ownerUid, workspace: s.workspace }); process.kill(process.pid, 'SIGKILL');`);
    const bInfo = b1.lines.find((l) => l.uid);
    if (!bInfo) throw new Error(`B: ${JSON.stringify(b1)}`);
    for (const pid of L.withTag(`${dirB}/root`)) process.kill(pid, 'SIGKILL'); // B's holder: gone (reboot, OOM, …)
    await L.until(() => L.withTag(`${dirB}/root`).length === 0);

    // A: a live session running a long command.
    a = L.start(dirA, `const s = await m.acquire(scope('c1'), actor); out({ uid: s.ownerUid });
      const r = await sh(s, 'echo started; sleep 25; echo survived', { timeoutMs: 120000 }).then((x) => ({ ok: x }), (e) => ({ err: e.code + ' ' + e.message }));
      out({ command: r }); await s.end().catch(() => {}); out({ ended: true });`);
    const aInfo = await L.until(() => a.lines.find((l) => l.uid || l.failed));
    if (!aInfo.uid) throw new Error(`A: ${JSON.stringify(aInfo)}`);
    await L.until(() => L.withTag(`${dirA}/root`).length > 0);
    await new Promise((r) => setTimeout(r, 3000)); // the command is running

    // The draw: B had claimed A's uid (rename B's record and claim to it). `control`: no collision.
    const control = process.argv[2] === 'control';
    const claims = path.join(dirB, 'root', '.owner-claims');
    if (!control) {
      fs.renameSync(path.join(claims, String(bInfo.uid)), path.join(claims, String(aInfo.uid)));
      const store = JSON.parse(fs.readFileSync(path.join(dirB, 'sessions.json'), 'utf8'));
      for (const r of Object.values(store)) r.ownerUid = aInfo.uid;
      fs.writeFileSync(path.join(dirB, 'sessions.json'), JSON.stringify(store));
    }
    console.log(`B claimed ${bInfo.uid}${control ? '' : ` (renamed to ${aInfo.uid})`}; A's live session owns ${aInfo.uid}`);

    // B restarts and recovers.
    const b2 = L.run(dirB, `out({ recover: await m.recover().then((x) => x, (e) => e.code + ' ' + e.message) });`);
    console.log('B recover():', JSON.stringify(b2.lines));
    const result = await L.until(() => a.lines.find((l) => l.command || l.failed), 120_000);
    console.log("A's command:", JSON.stringify(result));
    const killed = !(result.command?.ok?.stdout ?? '').includes('survived');
    console.log(`R8-2 another provider's recover() swept a live session's uid: ${killed ? 'REPRODUCED' : 'not reproduced'}`);
    process.exitCode = killed ? 1 : 0;
    await a.done;
  } finally {
    if (a) a.kill('SIGKILL');
    L.killTagged(dirA);
    L.killTagged(dirB);
  }
})().catch((e) => {
  console.error(e);
  process.exitCode = 3;
});
