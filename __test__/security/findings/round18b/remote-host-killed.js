'use strict';
// R18b: a `cordon host` SIGKILLed mid-run (docs/remote.md: "No call can hang": ERR_CORDON_REMOTE_DISCONNECTED when
// the connection is lost; § Receipts kept on the host: a restarted host turns the run's marker into a receipt with
// outcome.status "host-lost"). Checked: the sandbox processes the dead host left are gone within 3 s (or reported),
// wait() rejects within 3 s, every protocol write callback comes (none pending), and after a restart on the same
// stateDir receipts(invocationId) answers host-lost. Usage: node remote-host-killed.js [rounds] [tls|nobody|control]
// (control: SIGTERM instead of SIGKILL: the run ends with stop.reason "signal" and a normal exit).
const fs = require('fs');
const path = require('path');
const { spawn: cpSpawn } = require('child_process');
const { startHost, sleep, PKG, descendants, counter, missing } = require('./common');
const { connectRemote } = require(PKG + '/lib/remote');
const ROUNDS = +(process.argv[2] || 5);
const mode = process.argv[3] || '';
const control = mode === 'control';
const alive = (pid) => { try { process.kill(pid, 0); return fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1][0] !== 'Z'; } catch { return false; } };
(async () => {
  let bad = 0, orphans = 0, hung = 0, pendingCbs = 0, noLost = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const h = await startHost({ tls: mode === 'tls', asNobody: mode === 'nobody' });
    const c = connectRemote(h.target, { slackMs: 3000 });
    const id = `r18b-hk-${process.pid}-${round}`;
    const ex = c.spawnIsolated(['py', '-c', 'import os,time\nwhile True:\n  if not os.read(3,4096): break\n  time.sleep(0.003)'], { policy: c.readOnly(), invocationId: id, deadlineMs: 60000 });
    ex.stderr.resume(); ex.protocol.resume();
    const x = counter(ex);
    let settled = false;
    const waited = ex.wait().then((r) => { settled = true; return r; }, (e) => { settled = true; return { error: e }; });
    (async () => { let n = 0; while (!settled && n++ < 3000) { x.w(65536); await new Promise((r) => setImmediate(r)); } })();
    await sleep(300 + Math.floor(Math.random() * 300));
    const below = descendants(h.pid);
    const t0 = Date.now();
    h.child.kill(control ? 'SIGTERM' : 'SIGKILL');
    const r = await Promise.race([waited, sleep(10000).then(() => ({ timeout: true }))]);
    const waitMs = Date.now() - t0;
    if (r.timeout || waitMs > 3500) { hung++; bad++; }
    await sleep(3000);
    const left = below.filter(alive);
    if (left.length) { orphans++; bad++; }
    for (let k = 0; k < 200 && x.st.pending; k++) await sleep(5);
    if (x.st.pending) { pendingCbs++; bad++; }
    // restart on the same stateDir and ask for the receipt
    let lost = null;
    if (!control) {
      await new Promise((res) => (h.child.exitCode !== null || h.child.signalCode !== null ? res() : h.child.once('exit', res)));
      const logf = path.join(h.dir, 'host2.log');
      const fd = fs.openSync(logf, 'w'); if (mode === 'nobody') fs.fchownSync(fd, 65534, 65534);
      const child2 = cpSpawn(h.child.spawnfile, ['host', '--config', path.join(h.dir, 'host.json')], { stdio: ['ignore', fd, fd], cwd: '/', ...(mode === 'nobody' ? { uid: 65534, gid: 65534 } : {}) });
      fs.closeSync(fd);
      let m; const tl = Date.now();
      while (!(m = /listening on (\S+)/.exec(fs.readFileSync(logf, 'utf8'))) && Date.now() - tl < 15000) await sleep(20);
      const target = mode === 'tls' ? { ...h.target, url: m[1] } : h.target;
      const c2 = connectRemote(target, { slackMs: 3000 });
      const rs = await c2.receipts(id).catch((e) => { console.log('receipts error', e.code); return []; });
      lost = rs[0]?.outcome?.status ?? null;
      if (lost !== 'host-lost') { noLost++; bad++; }
      await c2.close();
      const ex2 = new Promise((res) => child2.once('exit', res)); child2.kill('SIGTERM'); await ex2;
    }
    console.log(JSON.stringify({ round, waitMs, result: r.timeout ? 'no settle in 10 s' : r.error ? r.error.code : `resolved ${r.receipt.stop?.reason}`, sandboxProcs: below.length, leftAfter3s: left.length, leftPids: left, pending: x.st.pending, ok: x.st.ok, err: x.st.err, dropped: ex.protocolDroppedBytes, missing: r.receipt ? missing(ex, x.st, r) : null, restartedReceipt: lost }));
    for (const p of left) { try { process.kill(p, 'SIGKILL'); } catch {} }
    await c.close().catch(() => {}); await h.stop();
  }
  console.log(`rounds ${ROUNDS}: bad ${bad} (wait not settled in 3.5 s ${hung}, sandbox processes left ${orphans}, callbacks pending ${pendingCbs}, no host-lost receipt ${noLost})`);
  console.log(bad ? `FINDING: host SIGKILL mid-run: ${bad}/${ROUNDS} rounds failed a check` : 'held');
})();
