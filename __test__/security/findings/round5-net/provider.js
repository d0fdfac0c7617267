'use strict';
// The provider half: one process (root, or uid 65534 when drive.js starts it
// so) that runs ONE mediated sandbox per scenario and reports, as JSON lines
// on stdout: {ev:"ready"} when the program printed READY, then
// {ev:"settled", ...} with the time from stop() (or from the program's own
// exit) to wait() settled, and a summary of the network receipts.
// Scenario: env R5 = {code, allow, resources, runs}. stdin "stop\n" → stop().
const cordon = require('../../../..');
const sc = JSON.parse(process.env.R5);
const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');

function summary(receipts) {
  const by = {};
  for (const r of receipts) {
    const k = `${r.protocol}/${r.result}/${r.end ?? '-'}`;
    by[k] = (by[k] || 0) + 1;
  }
  return by;
}

async function one(i) {
  const policy = {
    ...cordon.readOnly(),
    network: { mode: 'mediated', allow: sc.allow },
    resources: { ...cordon.readOnly().resources, ...(sc.resources || {}) },
  };
  const opts = { policy };
  if (process.env.R5_RELAY) opts.networkRelayPath = process.env.R5_RELAY;
  const ex = cordon.spawnIsolated(['/usr/bin/python3', '-c', sc.code], opts);
  let text = '';
  ex.stderr.on('data', (c) => { text += c; if (text.length > 1e6) text = text.slice(-1e5); });
  ex.protocol.resume();
  let exitSeen = 0;
  const settled = ex.wait().then((o) => ({ o, at: Date.now() }), (e) => ({ e, at: Date.now() }));
  const ready = new Promise((res) => {
    const t = setInterval(() => { if (/READY/.test(text)) { clearInterval(t); res(true); } }, 20);
    settled.then(() => { clearInterval(t); res(false); });
  });
  return { ex, settled, ready, text: () => text, i };
}

(async () => {
  let beats = 0;
  setInterval(() => { beats++; }, 100).unref();
  process.on('SIGUSR2', () => out({ ev: 'beats', beats }));
  const runs = [];
  for (let i = 0; i < (sc.runs || 1); i++) runs.push(await one(i));
  const ok = await Promise.all(runs.map((r) => r.ready));
  out({ ev: 'ready', ok, stderr: ok.every(Boolean) ? undefined : runs.map((r) => r.text().slice(-2000)) });
  let stopAt = null;
  let afterDone = Promise.resolve();
  let afterResolve = null;
  if (process.env.R5_AFTER) afterDone = new Promise((r) => { afterResolve = r; });
  process.stdin.on('data', (d) => {
    if (String(d).includes('stop') && stopAt === null) {
      stopAt = Date.now();
      for (const r of runs) r.ex.stop().catch(() => {});
      // Is the provider still healthy? Trivial runs 3 s after the stop, timed.
      if (process.env.R5_AFTER) setTimeout(async () => {
        for (let k = 0; k < Number(process.env.R5_AFTER); k++) {
          const t0 = Date.now();
          const ex = cordon.spawnIsolated(['/bin/true'], { policy: cordon.readOnly() });
          ex.stderr.resume(); ex.protocol.resume();
          const r = await Promise.race([ex.wait().then(() => 'settled'), new Promise((res) => setTimeout(() => res('NOT settled in 20 s'), 20_000))]);
          out({ ev: 'after', k, result: r, ms: Date.now() - t0 });
        }
        afterResolve();
      }, 3000);
    }
  });
  const patience = sc.patienceMs || 60_000;
  const results = await Promise.all(runs.map((r) => Promise.race([r.settled, new Promise((res) => setTimeout(() => res(null), patience + 600_000))])));
  for (const [k, res] of results.entries()) {
    const r = runs[k];
    const o = res && res.o;
    out({
      ev: 'settled', run: k, stopToSettledMs: stopAt === null ? null : res.at - stopAt,
      error: res && res.e ? String(res.e.code || res.e) : undefined,
      returncode: o && o.returncode, signal: o && o.signal,
      receipts: o ? summary(o.networkReceipts || []) : null, dropped: o && o.networkReceiptsDropped,
      allowedReceipts: o ? (o.networkReceipts || []).filter((x) => x.result === 'allowed').map((x) => ({ id: x.id, port: x.port, end: x.end, in: x.bytesToClient, out: x.bytesFromClient })).slice(0, 5) : null,
      tail: r.text().slice(-600),
    });
  }
  await afterDone;
  setTimeout(() => process.exit(0), 5000);
})();
