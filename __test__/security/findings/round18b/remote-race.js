'use strict';
// R18b: the protocol-byte invariant through a real `cordon host` (docs/remote.md, exit.inbound): every byte whose
// write callback succeeded is in exactly one of receipt.bytes.protocolIn, protocolInDiscarded, the client's
// protocolDroppedBytes; an errored write is in none. Each run races writes (random sizes; serial, fire-and-forget,
// cork, after wait()) against the program's end (exit at a random moment reading or not, close fd 3 and live, sleep)
// and the client's end (none, stop(), stop({graceMs:0}), deadline 20-80 ms, AbortSignal, protocol.destroy(), end()).
// Usage: node remote-race.js RUNS [seed] [tls] [nobody] [local]  (local: the same races on a local spawnIsolated)  (KIND, END, STYLE in the environment fix one of each;
// PAR=n runs n at once)   (RUNS=0: control, a reader + end(), 5 runs)
const { startHost, counter, missing, sleep, PKG, descendants, nthreads, nfds, rssKiB } = require('./common');
const { connectRemote } = require(PKG + '/lib/remote');
const args = process.argv.slice(2);
const RUNS = +(args[0] ?? 100);
let seed = +(args[1] ?? 18);
const TLS = args.includes('tls'), NOBODY = args.includes('nobody'), LOCAL = args.includes('local');
const rnd = () => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return seed / 0x7fffffff; };
const pick = (a) => a[Math.floor(rnd() * a.length)];
const progs = {
  exit_noread: (d) => `import time\ntime.sleep(${d})`,
  exit_read: (d) => `import os,time,select\nt=time.time()+${d}\nwhile time.time()<t:\n  r,_,_=select.select([3],[],[],max(0,t-time.time()))\n  if r and not os.read(3,65536): break`,
  read_slow: (d) => `import os,time\nt=time.time()+${d}*4\nwhile time.time()<t:\n  if not os.read(3,4096): break\n  time.sleep(0.002)`,
  close_live: (d) => `import os,time\ntime.sleep(${d})\nos.close(3)\ntime.sleep(0.3)`,
  sleep_long: () => 'import time\ntime.sleep(3)',
};
const sizes = [1, 2, 10, 1000, 65536, 65537, 200000, 300000, 1 << 20];
async function one(c, i, control) {
  const kind = control ? 'reader' : process.env.KIND || pick(Object.keys(progs));
  const d = (rnd() * 0.15).toFixed(3);
  const end = control ? 'end' : process.env.END || pick(['none', 'none', 'stop', 'stop_now', 'deadline', 'abort', 'destroy', 'end']);
  const style = control ? 'serial' : process.env.STYLE || pick(['serial', 'fire', 'cork', 'after']);
  const ac = new AbortController();
  const opts = { policy: LOCAL ? null : c.readOnly(), ...(end === 'deadline' ? { deadlineMs: 20 + Math.floor(rnd() * 60) } : {}), ...(end === 'abort' ? { signal: ac.signal } : {}), ...(end === 'destroy' ? { deadlineMs: 2500 } : {}) }; // destroy: R18b-1 (no EOF remotely), bounded here
  const prog = control ? 'import os\nwhile os.read(3,1<<20): pass' : progs[kind](d);
  if (process.env.V) console.log('start', JSON.stringify({ i, kind, d, end, style, opts: { deadlineMs: opts.deadlineMs } }));
  const ex = LOCAL ? require(PKG).spawnIsolated(['/usr/bin/python3', '-c', prog], { ...opts, policy: require(PKG).readOnly() }) : c.spawnIsolated(['py', '-c', prog], opts);
  const t0 = Date.now();
  ex.stderr.resume();
  const { p, st, w } = counter(ex);
  p.resume();
  let settled = false;
  const waited = ex.wait().then((r) => { settled = true; return r; }, (e) => { settled = true; throw e; });
  const writer = (async () => {
    let n = 0;
    while (!settled && n < (control ? 20 : 80)) {
      n++;
      const s = pick(sizes);
      if (style === 'serial' || control) await w(s);
      else if (style === 'cork') { p.cork(); w(s); w(pick(sizes)); process.nextTick(() => p.uncork()); await new Promise((r) => setImmediate(r)); }
      else { w(s); await new Promise((r) => setImmediate(r)); }
      if (n === 3 && end === 'destroy') p.destroy();
      if (n === 3 && end === 'end') { p.end(); break; } // a write after end() destroys the stream: R18b-1
      if (n === 3 && end === 'stop') ex.stop();
      if (n === 3 && end === 'stop_now') ex.stop({ graceMs: 0 }).catch(() => {});
      if (n === 3 && end === 'abort') ac.abort();
    }
    if (control) p.end();
  })();
  let r;
  const dog = setInterval(() => console.log('  still waiting', JSON.stringify({ i, ms: Date.now() - t0, settled, ok: st.ok, err: st.err, pending: st.pending, pid: ex.pid, errs: [...st.errs], kind, end, style, d })), 15000);
  try { r = await waited; } catch (e) { clearInterval(dog); await writer.catch(() => {}); return { i, kind, end, style, failed: e.code || e.message, ms: Date.now() - t0 }; } finally { clearInterval(dog); }
  if (Date.now() - t0 > 8000 && end !== 'destroy') { await writer.catch(() => {}); return { i, kind, end, style, failed: 'slow settle', ms: Date.now() - t0, stop: r.receipt.stop?.reason, durationMs: r.receipt.durationMs }; }
  try { } catch (e) { await writer.catch(() => {}); return { i, kind, end, style, failed: e.code || e.message }; }
  await writer.catch(() => {});
  if ((style === 'after' || rnd() < 0.4) && end !== 'end') { w(5); w(70000); await sleep(1); w(1 << 20); }
  for (let k = 0; k < 400 && st.pending > 0; k++) await sleep(5);
  return { i, kind, d, end, style, ok: st.ok, err: st.err, in: r.receipt.bytes.protocolIn, disc: r.receipt.bytes.protocolInDiscarded, dropped: ex.protocolDroppedBytes, missing: missing(ex, st, r), pending: st.pending, stop: r.receipt.stop?.reason };
}
(async () => {
  const control = RUNS === 0;
  const runs = control ? 5 : RUNS;
  const h = LOCAL ? { pid: process.pid, stop: async () => {} } : await startHost({ tls: TLS, asNobody: NOBODY });
  const c = LOCAL ? { close: async () => {} } : connectRemote(h.target);
  let bad = 0, failed = 0, done = 0, leftover = 0;
  const h0 = { thr: nthreads(h.pid), fds: nfds(h.pid), rss: rssKiB(h.pid) };
  const deadline = Date.now() + (+process.env.MAX_MS || 300000);
  try {
    const PAR = +(process.env.PAR || 1); // PAR runs at once through the one client and host
    for (let i = 0; i < runs && Date.now() < deadline; i += PAR) {
      const batch = await Promise.all(Array.from({ length: Math.min(PAR, runs - i) }, (_, k) => one(c, i + k, control)));
      for (const r of batch) {
        done++;
        if (r.failed) { failed++; bad++; console.log('run failed', JSON.stringify(r)); continue; }
        if (r.missing !== 0 || r.pending !== 0) { bad++; console.log('BAD', JSON.stringify(r)); } else if (process.env.V) console.log('ok ', JSON.stringify(r));
      }
    }
    await sleep(300);
    leftover = descendants(h.pid).length;
  } finally {
    const h1 = { thr: nthreads(h.pid), fds: nfds(h.pid), rss: rssKiB(h.pid) };
    console.log(`${LOCAL ? 'local (this process)' : 'host ' + (TLS ? 'tls' : 'unix') + (NOBODY ? ' uid 65534' : '')}: threads ${h0.thr}->${h1.thr}, fds ${h0.fds}->${h1.fds}, rss ${h0.rss}->${h1.rss} KiB; processes left below host ${leftover}`);
    await c.close(); await h.stop();
  }
  console.log(`runs ${done}, bad ${bad} (failed ${failed}); client threads ${nthreads()}, fds ${nfds()}`);
  console.log(bad || leftover ? `FINDING: ${bad}/${done} remote runs broke the protocol-byte invariant (or failed); ${leftover} processes left` : 'held');
})();
