'use strict';
// R8-1 (README.md). A ROOT provider runs an agent session and, on the side, an ordinary
// spawnIsolated run on a caller workspace owned by a uid of the workspace-owner range, as
// docs/policy.md tells it to ("chown 1879048192:1879048192 ws, or 1879048193, … for another
// workspace"). Session owner uids are claimed from that same range (1879048193–1879113727,
// docs/sessions.md) in /run/cordon-session-owners, but the policy.md workspaces are never
// claimed there. When the two share a uid, the session's end() (or a restart / recover())
// sweeps "every process of the owner uid" (owner-sweep.js → killUidProcesses) and SIGKILLs the
// unrelated run.
//
// The probe takes the session's uid and gives the side workspace that uid (the collision a
// provider meets by chance: any of the 65535 uids it picks for its workspaces may be a live
// session's). Expected: the side run is untouched by the session's end(). Exit 1 = reproduced.
// Usage (root, Node 22): node owner-overlap.js [control]   (control: the side workspace gets the
// neighbouring owner uid instead; the side run then outlives the session's end())
const fs = require('node:fs');
const path = require('node:path');
const ROOT = path.join(__dirname, '..', '..', '..', '..');
const cordon = require(ROOT);

if (process.geteuid() !== 0) {
  console.log('skip: needs a root provider');
  process.exit(0);
}

(async () => {
  const dir = fs.mkdtempSync('/var/tmp/atk8w-ovl-');
  fs.chmodSync(dir, 0o711);
  let side = null;
  let session = null;
  try {
    const m = cordon.createSessionManager({
      secret: Buffer.from('0123456789abcdef0123456789abcdef'),
      root: path.join(dir, 'root'),
      store: cordon.memorySessionStore(),
      authorize: () => true,
      workspaceBytes: 1 << 20,
    });
    session = await m.acquire({ tenant: 'acme', conversation: 'c1' }, { tenant: 'acme', id: 'u' });
    const uid = session.ownerUid;
    console.log('session owner uid', uid);

    // The provider's other workload: a caller workspace owned by a workspace-owner uid (docs/policy.md).
    const ws = path.join(dir, 'side-ws');
    fs.mkdirSync(ws, { mode: 0o700 });
    const sideUid = process.argv[2] === 'control' ? uid + (uid % 2 === 0 ? 1 : -1) : uid;
    fs.chownSync(ws, sideUid, sideUid);
    side = cordon.spawnIsolated(['/bin/sleep', '120'], { policy: cordon.workspaceWrite(), workspace: ws, deadlineMs: 110_000 });
    const head = await side.observed();
    console.log('side run planned uid', head?.confinement?.planned?.uid, 'allocation', head?.confinement?.planned?.uidAllocation);

    const before = Date.now();
    const receipt = await session.end();
    session = null;
    console.log('session ended:', JSON.stringify(receipt?.workspace ?? receipt).slice(0, 200));

    // Did the side run survive the session's end()? Give it a moment to be reaped if it was killed.
    const outcome = await Promise.race([
      side.wait().then((r) => ({ ended: true, returncode: r.returncode, signal: r.signal, outcome: r.receipt.outcome, stop: r.receipt.stop.reason })),
      new Promise((resolve) => setTimeout(() => resolve({ ended: false }), 10_000)),
    ]);
    console.log('side run after the session end():', JSON.stringify(outcome), `(${Date.now() - before} ms)`);
    const killed = outcome.ended && outcome.stop === null;
    console.log(`R8-1 the session's uid sweep killed an unrelated run: ${killed ? 'REPRODUCED' : 'not reproduced'}`);
    process.exitCode = killed ? 1 : 0;
  } finally {
    if (session) await session.end().catch(() => {});
    if (side) {
      await side.stop().catch(() => {});
      await side.wait().catch(() => {});
    }
    fs.rmSync(dir, { recursive: true, force: true });
  }
})().catch((e) => {
  console.error(e);
  process.exitCode = 3;
});
